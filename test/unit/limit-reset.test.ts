/**
 * When the "has reset" alert is due (src/service/continue/limit-reset.ts, docs/push.md "Limit reset"):
 * once per usage-limit stop whose reset passed with the agent still in it and nothing scheduled;
 * never for a stop left before the reset, nor when a continue waits or was typed for it.
 */
import { describe, expect, it } from 'vitest';
import type { ContinueSchedule } from '../../src/protocol/continue.js';
import type { AgentStateFact } from '../../src/protocol/frames.js';
import type { Stop } from '../../src/protocol/stop.js';
import { LimitResets } from '../../src/service/continue/limit-reset.js';

const NOW = Date.UTC(2026, 10, 28, 12);
const limit = (id: string): Stop => ({
  id,
  kind: 'usage-limit',
  agent: 'claude',
  message: 'limit',
  stoppedAt: new Date(NOW).toISOString(),
  resetsAt: new Date(NOW + 60_000).toISOString(),
});

function harness() {
  let stop: Stop | null = null;
  let scheduled: ContinueSchedule | null = null;
  const listeners = new Set<(id: string, fact: AgentStateFact) => void>();
  const timers: { fn: () => void; ms: number; live: boolean }[] = [];
  const told: [string, string][] = [];
  const resets = new LimitResets({
    subscribeEvery: (l) => (listeners.add(l), () => listeners.delete(l)),
    stopOf: () => stop,
    continueOf: () => scheduled,
    now: () => NOW,
    timer: (fn, ms) => {
      const t = { fn, ms, live: true };
      timers.push(t);
      return () => (t.live = false);
    },
  });
  resets.onReset((id, stopId) => told.push([id, stopId]));
  return {
    told,
    timers,
    /** The agent reports, in `s` (or in no stop). */
    report(s: Stop | null, value: AgentStateFact['value'] = 'awaiting-input') {
      stop = s;
      for (const l of listeners) l('cc', { value, ts: NOW, ...(s ? { stop: s } : {}) });
    },
    schedule(s: ContinueSchedule | null) {
      scheduled = s;
    },
    /** The reset passes: every live timer fires. */
    pass() {
      for (const t of timers.filter((x) => x.live)) {
        t.live = false;
        t.fn();
      }
    },
  };
}

const waiting: ContinueSchedule = {
  id: 'c',
  at: new Date(NOW).toISOString(),
  text: 'continue',
  by: 'phone',
  stopId: 's1',
  status: 'waiting',
};

describe('the reset of a usage limit', () => {
  it('passes with the agent still stopped and nothing scheduled: told once, at the reset', () => {
    const h = harness();
    h.report(limit('s1'));
    h.report(limit('s1')); // the same stop again
    expect(h.timers.map((t) => t.ms)).toEqual([60_000]);
    h.pass();
    h.report(limit('s1'));
    h.pass();
    expect(h.told).toEqual([['cc', 's1']]);
  });

  it('not told when a continue waits, or was typed for the stop; told when it was cancelled', () => {
    for (const [scheduled, tells] of [
      [waiting, false],
      [{ ...waiting, status: 'typed' }, false],
      [{ ...waiting, status: 'cancelled' }, true],
    ] as const) {
      const h = harness();
      h.schedule(scheduled);
      h.report(limit('s1'));
      h.pass();
      expect(h.told.length === 1, scheduled.status).toBe(tells);
    }
  });

  it('not told when the agent left the stop before the reset (a turn, another stop)', () => {
    const h = harness();
    h.report(limit('s1'));
    h.report(null, 'thinking');
    h.pass();
    expect(h.told).toEqual([]);
  });
});
