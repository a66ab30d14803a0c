/**
 * Codex's account usage windows read from its rollout file (docs/agents.md "Usage"): each
 * `token_count` record's `rate_limits` (shaped as Codex 0.169 writes them, measured with the
 * `x-codex-*` headers on good answers) as the session's usage, the figures handed on as Codex
 * wrote them; the stops logic that reads the same record unchanged; the watch reporting them on a
 * real temporary sessions folder.
 */
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { HookOutcome } from '../../src/agent/contract/adapter.js';
import { rolloutDays } from '../../src/agent/codex/rollout.js';
import { readRolloutLine, type RolloutFacts } from '../../src/agent/codex/rollout-records.js';
import { atNudgeThreshold, rolloutRates } from '../../src/agent/codex/rollout-usage.js';
import { CodexRolloutWatch } from '../../src/agent/codex/rollout-watch.js';
import { silentLogger } from '../../src/log.js';
import { eventually } from '../helpers/tmux.js';

const root = mkdtempSync(join(tmpdir(), 'tether-codex-usage-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const RESET = 1_796_428_554;
const rec = (type: string, payload: Record<string, unknown>) => JSON.stringify({ timestamp: 'T', ordinal: 12, type, payload });
/** Codex 0.169's `token_count` record, its `rate_limits` as measured (57 % / 23 % unless given). */
const tokenCount = (limits: Record<string, unknown> = {}) =>
  rec('event_msg', {
    type: 'token_count',
    info: { total_token_usage: { input_tokens: 10, output_tokens: 5, total_tokens: 15 }, model_context_window: 258400 },
    rate_limits: {
      limit_id: 'codex',
      limit_name: null,
      primary: { used_percent: 57, window_minutes: 300, resets_at: RESET },
      secondary: { used_percent: 23, window_minutes: 10080, resets_at: RESET + 428_400 },
      credits: null,
      individual_limit: null,
      spend_control_reached: null,
      plan_type: null,
      rate_limit_reached_type: null,
      ...limits,
    },
  });

describe("Codex's usage windows in its rollout file", () => {
  it('a token_count with both windows: named by their length, the percent as given, the reset in ms', () => {
    expect(readRolloutLine(tokenCount()).usage).toEqual({
      windows: [
        { name: 'five_hour', usedPercent: 57, resetsAt: RESET * 1000 },
        { name: 'seven_day', usedPercent: 23, resetsAt: (RESET + 428_400) * 1000 },
      ],
    });
  });

  it('hands the figures on as Codex wrote them: 150 %, -5 %, an absurd reset; a reset that is not a number is null', () => {
    const m = readRolloutLine(
      tokenCount({
        primary: { used_percent: 150, window_minutes: 300, resets_at: 99_999_999_999_999 },
        secondary: { used_percent: -5, window_minutes: 10080, resets_at: null },
      }),
    );
    expect(m.usage?.windows).toEqual([
      { name: 'five_hour', usedPercent: 150, resetsAt: 99_999_999_999_999_000 },
      { name: 'seven_day', usedPercent: -5, resetsAt: null },
    ]);
  });

  it('a window without its length is named primary or secondary; one of another length by its minutes; a percent that is no number is NaN', () => {
    const m = readRolloutLine(
      tokenCount({
        primary: { used_percent: 12.5, window_minutes: null, resets_at: null },
        secondary: { used_percent: 'abc', window_minutes: 1440, resets_at: RESET },
      }),
    );
    expect(m.usage?.windows[0]).toEqual({ name: 'primary', usedPercent: 12.5, resetsAt: null });
    expect(m.usage?.windows[1]?.name).toBe('one_day');
    expect(m.usage?.windows[1]?.usedPercent).toBeNaN();
    expect(readRolloutLine(tokenCount({ secondary: { used_percent: 1, window_minutes: 60 } })).usage?.windows[1]?.name).toBe('60_minutes');
  });

  it('a window Codex did not get (null: no headers, or a percent it could not read) is left out; none at all is no usage', () => {
    expect(readRolloutLine(tokenCount({ secondary: null })).usage?.windows.map((w) => w.name)).toEqual(['five_hour']);
    const none = readRolloutLine(tokenCount({ primary: null, secondary: null }));
    expect(none.usage).toBeUndefined();
    expect(none.facts?.rates).toEqual({ usage: null, high: false, credits: null });
    const bare = readRolloutLine(rec('event_msg', { type: 'token_count', info: null }));
    expect(bare).toEqual({ events: [] });
  });

  it("leaves the stops logic as it was: the used-up window before a usage limit still gives the limit's reset", () => {
    const m = readRolloutLine(tokenCount({ primary: { used_percent: 100, window_minutes: 300, resets_at: RESET } }));
    expect(m.limit).toEqual({ resetsAt: RESET * 1000, limit: 'five_hour' });
    expect(m.usage?.windows[0]).toEqual({ name: 'five_hour', usedPercent: 100, resetsAt: RESET * 1000 });
    expect(m.events).toEqual([]);
    expect(readRolloutLine(tokenCount()).limit).toBeUndefined();
  });

  it("the dialog's threshold: a window at 90 % as a whole number (89.5 and up), of Codex's own limit; credits said or not", () => {
    for (const [p, high] of [
      [89.4, false],
      [89.49, false],
      [89.5, true],
      [89.6, true],
      [91, true],
      [150, true],
      [Number.NaN, false],
    ] as const)
      expect(atNudgeThreshold(p), String(p)).toBe(high);
    const at = (limits: Record<string, unknown>) =>
      rolloutRates((JSON.parse(tokenCount(limits)) as { payload: Record<string, unknown> }).payload);
    expect(at({ secondary: { used_percent: 91, window_minutes: 10080, resets_at: RESET } })?.high).toBe(true);
    expect(at({ limit_id: 'codex_other', secondary: { used_percent: 91, window_minutes: 10080 } })?.high).toBe(false);
    expect(at({ limit_id: null, primary: { used_percent: 95, window_minutes: 300 } })?.high).toBe(true);
    expect(at({ credits: { has_credits: true, unlimited: false, balance: '0' } })?.credits).toBe(true);
    expect(at({ credits: { has_credits: false, unlimited: false, balance: null } })?.credits).toBe(false);
    expect(at({})?.credits).toBeNull();
  });

  it('the facts of a turn: its start and end (or its stop), the model, the version of Codex', () => {
    expect(readRolloutLine(rec('event_msg', { type: 'task_started', turn_id: 't' })).facts).toEqual({ turn: 'started' });
    expect(readRolloutLine(rec('event_msg', { type: 'task_complete', turn_id: 't' })).facts).toEqual({ turn: 'ended' });
    expect(readRolloutLine(rec('event_msg', { type: 'turn_aborted', turn_id: 't' })).facts).toEqual({ turn: 'ended' });
    const failed = rec('event_msg', { type: 'task_complete', error: { message: 'limit', codex_error_info: 'usage_limit_exceeded' } });
    expect(readRolloutLine(failed).facts).toEqual({ turn: 'stopped' });
    expect(readRolloutLine(rec('turn_context', { turn_id: 't', cwd: '/w', model: 'fake-codex' })).facts).toEqual({ model: 'fake-codex' });
    const settings = rec('event_msg', { type: 'thread_settings_applied', thread_settings: { model: 'gpt-6-luna' } });
    expect(readRolloutLine(settings)).toEqual({ events: [], facts: { model: 'gpt-6-luna' } });
    expect(readRolloutLine(rec('session_meta', { id: 'x', cwd: '/w', cli_version: '0.169.0' })).facts).toEqual({ cliVersion: '0.169.0' });
  });
});

describe('the watch reports the usage windows', () => {
  it("reports each token_count's windows as the session's usage, and hands the turn's facts on once per look, after its outcomes", async () => {
    const sessionsDir = mkdtempSync(join(root, 'sessions-'));
    const thread = '019aa000-0000-7000-8000-000000000001';
    const day = join(sessionsDir, rolloutDays(parseInt(thread.replace(/-/g, '').slice(0, 12), 16))[0]!);
    mkdirSync(day, { recursive: true });
    const path = join(day, `rollout-2026-12-04T22-55-50-${thread}.jsonl`);
    writeFileSync(path, `${rec('session_meta', { id: thread, cwd: '/work/u', cli_version: '0.169.0' })}\n`);
    const log: string[] = [];
    const usages: HookOutcome['usage'][] = [];
    const facts: RolloutFacts[][] = [];
    const watch = new CodexRolloutWatch({
      sessionsDir,
      now: Date.now,
      log: silentLogger,
      pollMs: 20,
      report: (_s, o) => {
        log.push(o.events.map((e) => e.event).join(',') || (o.usage ? 'usage' : 'other'));
        if (o.usage) usages.push(o.usage);
      },
      observe: (_s, f) => {
        log.push('facts');
        facts.push([...f]);
      },
    });
    try {
      watch.watch('u', '/work/u', thread);
      // Followed from its end: the version comes from the file's head.
      await eventually(() => facts.length === 1, 10_000, 20, 'the version from the head');
      expect(facts[0]).toEqual([{ cliVersion: '0.169.0' }]);
      appendFileSync(
        path,
        [rec('event_msg', { type: 'task_started' }), tokenCount(), rec('event_msg', { type: 'task_complete' })]
          .map((l) => `${l}\n`)
          .join(''),
      );
      await eventually(() => facts.length === 2, 10_000, 20, "the turn's facts");
      expect(usages).toEqual([readRolloutLine(tokenCount()).usage]);
      expect(log.slice(1)).toEqual(['agent.start', 'usage', 'agent.end', 'facts']);
      expect(facts[1]!.map((f) => f.turn ?? (f.rates ? 'rates' : '?'))).toEqual(['started', 'rates', 'ended']);
    } finally {
      watch.stop();
    }
  });
});
