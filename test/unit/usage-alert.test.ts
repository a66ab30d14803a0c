/**
 * The warning before a usage limit is hit, as push says it (src/push/usage-alert.ts, docs/push.md
 * "Usage"): the title names the agent, the threshold, the window and its reset on the daemon's
 * clock ("Claude · 80 % of the 5-hour limit used · resets 4:10 PM"), the body the percent now;
 * time-sensitive at 95 and over (the usage warnings decide it from the threshold); one alert per
 * agent and window at a time (the collapse id); the payload's `usage` has the figures for the app.
 */
import { describe, expect, it } from 'vitest';
import { UsageBook } from '../../src/agent/hub/usage-book.js';
import { silentLogger } from '../../src/log.js';
import { usageCollapseId, usagePayload, usageTitle, windowLabel, type PushedUsage } from '../../src/push/usage-alert.js';
import { UsageWarnings, type UsageWarning } from '../../src/service/alerts/usage-warnings.js';

/** 4:10 PM on the daemon's own clock (its time zone, whatever it is). */
const AT_4_10_PM = new Date(2026, 2, 2, 16, 10).toISOString();
const warning = (more: Partial<PushedUsage> = {}): PushedUsage => ({
  agent: 'claude',
  window: 'five_hour',
  threshold: 80,
  usedPercent: 83,
  resetsAt: AT_4_10_PM,
  timeSensitive: false,
  ...more,
});
interface Payload {
  aps: { alert: { title: string; body: string }; sound: string; 'thread-id': string; 'interruption-level'?: string };
  usage: Record<string, unknown>;
}
const parsed = (label: string, w: PushedUsage): Payload => JSON.parse(usagePayload(label, w).toString('utf8')) as Payload;

describe('the usage warning push', () => {
  it('the title: "Claude · 80 % of the 5-hour limit used · resets 4:10 PM"; no reset, no time', () => {
    expect(usageTitle('Claude', warning())).toBe('Claude · 80 % of the 5-hour limit used · resets 4:10 PM');
    expect(usageTitle('Codex', warning({ agent: 'codex', window: 'seven_day', threshold: 95, usedPercent: 97 }))).toBe(
      'Codex · 95 % of the weekly limit used · resets 4:10 PM',
    );
    expect(usageTitle('pi', warning({ agent: 'pi', resetsAt: null }))).toBe('pi · 80 % of the 5-hour limit used');
  });

  it('names each window as a person does', () => {
    expect(['five_hour', 'seven_day', 'one_day', '90_minutes', 'x'].map(windowLabel)).toEqual([
      '5-hour',
      'weekly',
      'daily',
      '90 minutes',
      'x',
    ]);
  });

  it('the payload: the title, the percent now, the thread of the agent, and `usage` with exactly its keys', () => {
    const p = parsed('Claude', warning());
    expect(p).toEqual({
      aps: {
        alert: { title: 'Claude · 80 % of the 5-hour limit used · resets 4:10 PM', body: '83 % used now' },
        sound: 'default',
        'thread-id': 'usage-claude',
      },
      usage: { agent: 'claude', window: 'five_hour', threshold: 80, usedPercent: 83, resetsAt: AT_4_10_PM },
    });
    // Without a reset, `usage` has no `resetsAt` (never a null).
    expect(Object.keys(parsed('Claude', warning({ resetsAt: null })).usage).sort()).toEqual([
      'agent',
      'threshold',
      'usedPercent',
      'window',
    ]);
  });

  it('time-sensitive at 95 and over: the usage warnings mark a warning at 95, and the payload carries it', () => {
    let clock = Date.UTC(2026, 2, 2, 9);
    const book = new UsageBook({ now: () => clock, log: silentLogger });
    const warnings = new UsageWarnings({ thresholds: [80, 95], onUsage: (l) => book.onChange(l), now: () => clock });
    const got: UsageWarning[] = [];
    warnings.onWarning((w) => got.push(w));
    const reset = clock + 3_600_000;
    for (const usedPercent of [83, 94.9, 95, 100]) {
      clock += 60_000;
      book.apply('s1', 'claude', { windows: [{ name: 'five_hour', usedPercent, resetsAt: reset }] });
    }
    warnings.stop();
    expect(got.map((w) => [w.threshold, w.usedPercent, w.timeSensitive])).toEqual([
      [80, 83, false],
      [95, 95, true],
    ]);
    expect(got.map((w) => parsed('Claude', w).aps['interruption-level'])).toEqual([undefined, 'time-sensitive']);
  });

  it('collapsed per agent and window: a newer warning of the window replaces the older on the lock screen', () => {
    expect(usageCollapseId(warning())).toBe('usage-claude-five_hour');
    expect(usageCollapseId(warning({ threshold: 95 }))).toBe(usageCollapseId(warning()));
    expect(usageCollapseId(warning({ window: 'seven_day' }))).not.toBe(usageCollapseId(warning()));
    expect(usageCollapseId(warning({ agent: 'codex' }))).not.toBe(usageCollapseId(warning()));
    // APNs takes a collapse id of at most 64 bytes: the longest window name (32) of the longest agent kind fits.
    expect(Buffer.byteLength(usageCollapseId({ agent: 'opencode', window: 'w'.repeat(32) }))).toBeLessThanOrEqual(64);
  });

  it('stays far inside the 4 KB of a push', () => {
    const long = warning({ agent: 'opencode', window: 'w'.repeat(32), threshold: 100, usedPercent: 100, timeSensitive: true });
    expect(usagePayload('A'.repeat(64), long).length).toBeLessThan(1024);
  });
});
