/**
 * A session as the Live Activity's summary holds it (src/push/live-activity-content.ts), for the
 * tests of the card's content: named as its id, its agent Claude, with `more` on top.
 */
import type { SessionSummary } from '../../src/push/live-activity-content.js';

export const summaryOf = (
  sessionId: string,
  state: SessionSummary['state'],
  changedAt: number,
  more: Partial<SessionSummary> = {},
): SessionSummary => ({
  sessionId,
  name: sessionId,
  agent: 'Claude',
  state,
  changedAt,
  ...more,
});
