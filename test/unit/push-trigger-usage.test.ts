/**
 * The push trigger hands each usage warning to push (src/service/alerts/push-trigger.ts, docs/push.md
 * "Usage"): every warning the usage warnings emit goes out through `sendUsage`, once, whatever
 * `[push] events` names (an empty `usage_thresholds` is what turns them off), and nothing after
 * the trigger stops.
 */
import { describe, expect, it } from 'vitest';
import { UsageBook } from '../../src/agent/hub/usage-book.js';
import { PUSH_EVENTS, type PushEvent } from '../../src/config/schema.js';
import { silentLogger } from '../../src/log.js';
import { startPushTrigger } from '../../src/service/alerts/push-trigger.js';
import { UsageWarnings, type UsageWarning } from '../../src/service/alerts/usage-warnings.js';

const T0 = Date.UTC(2026, 2, 2, 9);
const RESET = T0 + 2 * 3_600_000;

/** The trigger on real usage warnings fed by a real usage book; what it sent through `sendUsage` and `send`. */
function harness(events: readonly PushEvent[]) {
  let clock = T0;
  const book = new UsageBook({ now: () => clock, log: silentLogger });
  const warnings = new UsageWarnings({ thresholds: [80, 95], onUsage: (l) => book.onChange(l), now: () => clock });
  const sentUsage: UsageWarning[] = [];
  const sent: string[] = [];
  const stop = startPushTrigger({
    events,
    subscribeEvery: () => () => undefined,
    onSessionEnded: () => () => undefined,
    onAttention: () => () => undefined,
    onUsageWarning: (listener) => warnings.onWarning(listener),
    sendUsage: (w) => sentUsage.push(w),
    send: (id) => sent.push(id),
  });
  return {
    sentUsage,
    sent,
    stop,
    report: (usedPercent: number) => {
      clock += 60_000;
      book.apply('s1', 'claude', { windows: [{ name: 'five_hour', usedPercent, resetsAt: RESET }] });
    },
  };
}

describe('push trigger: usage warnings', () => {
  it('sends each warning through `sendUsage` when `onUsageWarning` fires, and nothing else', () => {
    const h = harness(PUSH_EVENTS);
    for (const p of [42, 83, 86, 96]) h.report(p);
    expect(h.sentUsage).toEqual([
      {
        agent: 'claude',
        window: 'five_hour',
        threshold: 80,
        usedPercent: 83,
        resetsAt: new Date(RESET).toISOString(),
        timeSensitive: false,
      },
      {
        agent: 'claude',
        window: 'five_hour',
        threshold: 95,
        usedPercent: 96,
        resetsAt: new Date(RESET).toISOString(),
        timeSensitive: true,
      },
    ]);
    expect(h.sent).toEqual([]);
    h.stop();
  });

  it('whatever `[push] events` names', () => {
    const h = harness([]);
    h.report(83);
    expect(h.sentUsage.map((w) => w.threshold)).toEqual([80]);
    h.stop();
  });

  it('nothing once the trigger stopped', () => {
    const h = harness(PUSH_EVENTS);
    h.report(83);
    h.stop();
    h.report(96);
    expect(h.sentUsage.map((w) => w.threshold)).toEqual([80]);
  });

  it('without `sendUsage` a warning is dropped, not thrown', () => {
    let fire: ((w: UsageWarning) => void) | null = null;
    const stop = startPushTrigger({
      events: PUSH_EVENTS,
      subscribeEvery: () => () => undefined,
      onSessionEnded: () => () => undefined,
      onAttention: () => () => undefined,
      onUsageWarning: (l) => ((fire = l), () => (fire = null)),
      send: () => undefined,
    });
    expect(() =>
      fire?.({ agent: 'claude', window: 'five_hour', threshold: 80, usedPercent: 83, resetsAt: null, timeSensitive: false }),
    ).not.toThrow();
    stop();
    expect(fire).toBeNull();
  });
});
