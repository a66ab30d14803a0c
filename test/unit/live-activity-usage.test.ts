/**
 * The usage windows on the lock screen (docs/push.md "Live Activity"): the summary keeps each
 * session's binding window from its agent's `usage` (src/service/alerts/activity-summary.ts), a change of
 * it is a change of the card and the same figures again are not; the content-state carries the
 * binding window of the most urgent session's agent, `usageWindow`, `usagePercent` and
 * `usageResetsAt` (Unix seconds), and none of them without usage.
 */
import { describe, expect, it } from 'vitest';
import type { AgentStateFact } from '../../src/protocol/frames.js';
import type { AgentUsage } from '../../src/protocol/usage.js';
import { contentStateOf, type SessionSummary } from '../../src/push/live-activity-content.js';
import { activityPayload } from '../../src/push/live-activity-payload.js';
import { startActivitySummary } from '../../src/service/alerts/activity-summary.js';
import { summaryOf as s } from '../helpers/session-summary.js';

const RESET = '2026-03-02T16:10:00.000Z';
const RESET_S = Date.parse(RESET) / 1000;

describe('the content-state with usage', () => {
  it("carries the binding window of the most urgent session's agent: name, percent, reset in Unix seconds", () => {
    const sessions = [
      s('a', 'thinking', 1, { usage: { window: 'seven_day', usedPercent: 40, resetsAt: '2026-03-06T09:00:00.000Z' } }),
      s('b', 'awaiting-input', 2, {
        ask: { id: 'k1', concern: 'npm test' },
        usage: { window: 'five_hour', usedPercent: 83.5, resetsAt: RESET },
      }),
    ];
    const content = contentStateOf(sessions);
    expect(content).toMatchObject({
      sessionId: 'b',
      state: 'asking',
      usageWindow: 'five_hour',
      usagePercent: 83.5,
      usageResetsAt: RESET_S,
    });
    expect(Number.isInteger(content.usageResetsAt)).toBe(true);
    // The ask answered: the working session is the card's, with its own agent's window.
    const working = contentStateOf([sessions[0]!, s('b', 'idle', 3, { usage: sessions[1]!.usage! })]);
    expect(working).toMatchObject({
      sessionId: 'a',
      usageWindow: 'seven_day',
      usagePercent: 40,
      usageResetsAt: Date.parse('2026-03-06T09:00:00.000Z') / 1000,
    });
  });

  it('a reset in the middle of a second is its second (rounded down); a window without a reset has no `usageResetsAt`', () => {
    const content = contentStateOf([
      s('a', 'thinking', 1, { usage: { window: 'five_hour', usedPercent: 10, resetsAt: '2026-03-02T16:10:00.999Z' } }),
    ]);
    expect(content.usageResetsAt).toBe(RESET_S);
    const unsaid = contentStateOf([s('a', 'thinking', 1, { usage: { window: 'five_hour', usedPercent: 10 } })]);
    expect(unsaid).toMatchObject({ usageWindow: 'five_hour', usagePercent: 10 });
    expect('usageResetsAt' in unsaid).toBe(false);
  });

  it("none of the usage fields when the card's session has no usage, even if another has", () => {
    const content = contentStateOf([
      s('a', 'idle', 1, { usage: { window: 'five_hour', usedPercent: 90, resetsAt: RESET } }),
      s('b', 'thinking', 2),
    ]);
    expect(content.sessionId).toBe('b');
    for (const key of ['usageWindow', 'usagePercent', 'usageResetsAt']) expect(key in content).toBe(false);
    expect(Object.keys(contentStateOf([])).some((k) => k.startsWith('usage'))).toBe(false);
  });

  it("the update's payload carries them in its content-state", () => {
    const payload = JSON.parse(
      activityPayload(
        { event: 'update', alert: false },
        [s('a', 'thinking', 1, { usage: { window: 'five_hour', usedPercent: 96, resetsAt: RESET } })],
        1_800_000_000,
      ).toString('utf8'),
    ) as { aps: { 'content-state': Record<string, unknown> } };
    expect(payload.aps['content-state']).toMatchObject({ usageWindow: 'five_hour', usagePercent: 96, usageResetsAt: RESET_S });
  });
});

describe("the summary keeps each session's binding window", () => {
  /** The summary with its inputs in the test's hands; `published` lists what it handed on. */
  function harness() {
    let report: ((id: string, fact: AgentStateFact) => void) | null = null;
    let ended: ((id: string) => void) | null = null;
    const published: SessionSummary[][] = [];
    let now = 1000;
    const stop = startActivitySummary({
      subscribeEvery: (l) => ((report = l), () => (report = null)),
      onSessionEnded: (l) => ((ended = l), () => (ended = null)),
      describe: (id) => Promise.resolve({ name: `name of ${id}`, agentLabel: 'Claude' }),
      changed: (sessions) => published.push([...sessions]),
      now: () => now++,
    });
    return {
      published,
      stop,
      state: (id: string, fact: AgentStateFact) => report?.(id, fact),
      end: (id: string) => ended?.(id),
      /** Lets the first report's name lookup settle. */
      settle: () => new Promise((r) => setTimeout(r, 0)),
    };
  }
  const usage = (five: number, seven: number, observedAt = '2026-03-02T09:00:00.000Z', fiveReset = RESET): AgentUsage => {
    const windows = [
      { name: 'five_hour', usedPercent: five, resetsAt: fiveReset },
      { name: 'seven_day', usedPercent: seven, resetsAt: '2026-03-06T09:00:00.000Z' },
    ];
    return { agent: 'claude', windows, binding: five >= seven ? 'five_hour' : 'seven_day', observedAt };
  };

  it('a change of the usage of a session updates the summary; the same figures again do not', async () => {
    const h = harness();
    h.state('w1', { value: 'thinking', ts: 1 });
    await h.settle();
    expect(h.published).toHaveLength(1);
    expect(h.published[0]![0]!.usage).toBeUndefined();
    h.state('w1', { value: 'thinking', ts: 2, usage: usage(42, 17) });
    expect(h.published).toHaveLength(2);
    expect(h.published[1]![0]).toMatchObject({
      sessionId: 'w1',
      name: 'name of w1',
      state: 'thinking',
      usage: { window: 'five_hour', usedPercent: 42, resetsAt: RESET },
    });
    // The same figures, observed later: nothing for the card.
    h.state('w1', { value: 'thinking', ts: 3, usage: usage(42, 17, '2026-03-02T09:05:00.000Z') });
    expect(h.published).toHaveLength(2);
    // The binding window's percent, its reset, or which window binds: each is a change.
    h.state('w1', { value: 'thinking', ts: 4, usage: usage(83, 17) });
    h.state('w1', { value: 'thinking', ts: 5, usage: usage(83, 17, undefined, '2026-03-02T21:10:00.000Z') });
    h.state('w1', { value: 'thinking', ts: 6, usage: usage(83, 91, undefined, '2026-03-02T21:10:00.000Z') });
    expect(h.published.slice(2).map((p) => p[0]!.usage)).toEqual([
      { window: 'five_hour', usedPercent: 83, resetsAt: RESET },
      { window: 'five_hour', usedPercent: 83, resetsAt: '2026-03-02T21:10:00.000Z' },
      { window: 'seven_day', usedPercent: 91, resetsAt: '2026-03-06T09:00:00.000Z' },
    ]);
    // A window that does not bind moving is not on the card: no change.
    h.state('w1', { value: 'thinking', ts: 7, usage: usage(84, 91, undefined, '2026-03-02T21:10:00.000Z') });
    expect(h.published).toHaveLength(5);
    h.stop();
  });

  it('keeps each session its own usage, and a session without usage has none', async () => {
    const h = harness();
    h.state('w1', { value: 'thinking', ts: 1, usage: usage(50, 10) });
    h.state('w2', { value: 'awaiting-input', ts: 1 });
    await h.settle();
    const last = h.published.at(-1)!;
    expect(last.find((x) => x.sessionId === 'w1')?.usage).toEqual({ window: 'five_hour', usedPercent: 50, resetsAt: RESET });
    expect(last.find((x) => x.sessionId === 'w2')).not.toHaveProperty('usage');
    h.end('w1');
    expect(h.published.at(-1)!.map((x) => x.sessionId)).toEqual(['w2']);
    h.stop();
  });
});
