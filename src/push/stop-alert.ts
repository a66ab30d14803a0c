/**
 * What the alert of a stop says (docs/push.md "Stops"): an agent that reached its usage limit
 * ("Claude reached its usage limit · resets 3:45 PM") or gave up on an API error (its own words),
 * the session in the subtitle. A usage limit's alert is time-sensitive and carries the category
 * whose action is "Continue when it resets"; an error's has its own category. Both carry the
 * stop's id, and a usage limit its reset (ISO 8601), so a client can act on them.
 */
import type { Stop } from '../protocol/stop.js';

/** The category of a usage limit's alert: one action, CONTINUE_ACTION ("Continue when it resets"). */
export const USAGE_LIMIT_CATEGORY = 'TETHER_USAGE_LIMIT';
/** The identifier of the usage limit category's action. */
export const CONTINUE_ACTION = 'continue-at-reset';
/** The category of an error's alert (no action: the app opens the session). */
export const STOPPED_ERROR_CATEGORY = 'TETHER_STOPPED_ERROR';

/** A stop the push subsystem alerts for. */
export type PushedStop = Pick<Stop, 'id' | 'kind' | 'message' | 'resetsAt' | 'limit'>;

/** "3:45 PM" in the daemon's time zone (the payload's `resetsAt` lets a client say it in the phone's). */
export function resetClock(iso: string): string {
  return new Date(iso).toLocaleTimeString('en-US', { hour: 'numeric', minute: '2-digit' });
}

/** The title of a stop's alert. */
export function stopTitle(agentName: string, stop: PushedStop): string {
  if (stop.kind === 'usage-limit') {
    const resets = stop.resetsAt !== undefined ? ` · resets ${resetClock(stop.resetsAt)}` : '';
    return `${agentName} reached its usage limit${resets}`;
  }
  return `${agentName} stopped on an error`;
}

/** The `aps` fields and the custom keys of a stop's alert, beside its title, subtitle and body. */
export function stopExtras(stop: PushedStop): { aps: Record<string, unknown>; keys: Record<string, unknown> } {
  const usage = stop.kind === 'usage-limit';
  return {
    aps: {
      category: usage ? USAGE_LIMIT_CATEGORY : STOPPED_ERROR_CATEGORY,
      ...(usage ? { 'interruption-level': 'time-sensitive' } : {}),
    },
    keys: {
      stopId: stop.id,
      stopKind: stop.kind,
      ...(stop.resetsAt !== undefined ? { resetsAt: stop.resetsAt } : {}),
      ...(stop.limit !== undefined ? { limit: stop.limit } : {}),
    },
  };
}
