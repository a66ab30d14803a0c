/**
 * Codex's "Approaching rate limits" dialog as an ask, predicted from its own reports
 * (docs/agents.md "Codex"): the records of its rollout file (shaped as Codex 0.169 writes them),
 * the state it writes to its terminal, its notify. The rule is Codex's (measured: 89.5 shows it,
 * 89.49 does not; any record of the turn readies it; once per conversation of a process; shown
 * at the turn's end, finished or interrupted), and the ask ends with the first key Codex takes.
 */
import { describe, expect, it } from 'vitest';
import type { HookOutcome } from '../../src/agent/contract/adapter.js';
import { CODEX_DIALOG_QUIET_MS, codexRateLimitNudge } from '../../src/agent/codex/asks.js';
import { codexArgv } from '../../src/agent/codex/launch.js';
import { nudgeHiddenOfArgs, nudgeHiddenOfConfig } from '../../src/agent/codex/nudge-config.js';
import { CodexRateLimitNudge } from '../../src/agent/codex/rate-limit-nudge.js';
import { readRolloutLine, type RolloutFacts } from '../../src/agent/codex/rollout-records.js';

const RESET = 1_796_428_554;
const rec = (type: string, payload: Record<string, unknown>) => JSON.stringify({ timestamp: 'T', ordinal: 1, type, payload });
const facts = (...lines: string[]): RolloutFacts[] => lines.flatMap((l) => readRolloutLine(l).facts ?? []);
const meta = rec('session_meta', { id: 'x', cwd: '/w', cli_version: '0.169.0' });
const started = rec('event_msg', { type: 'task_started' });
const complete = rec('event_msg', { type: 'task_complete' });
const aborted = rec('event_msg', { type: 'turn_aborted' });
const stopped = rec('event_msg', { type: 'task_complete', error: { message: 'limit', codex_error_info: 'usage_limit_exceeded' } });
const model = (m: string) => rec('turn_context', { model: m });
/** A token_count: the 5-hour window at `five`, the weekly one at `week`, more `rate_limits` fields when given. */
const tokens = (five: number, week = 23, more: Record<string, unknown> = {}) =>
  rec('event_msg', {
    type: 'token_count',
    rate_limits: {
      limit_id: 'codex',
      primary: { used_percent: five, window_minutes: 300, resets_at: RESET },
      secondary: { used_percent: week, window_minutes: 10080, resets_at: RESET + 86_400 },
      credits: null,
      ...more,
    },
  });
/** A turn at these figures (one answer each) that ends as `end`. */
const turn = (end: string, ...counts: string[]) => facts(started, model('fake-codex'), ...counts, end);
const state = (s: string) => ({ code: 7501, text: `state=${s}:app=codex` });

const NOTIFY = { type: 'agent-turn-complete' } as const;

/** A nudge for session `cx` whose reports are kept, config.toml saying `configHidden`; its Codex notified once (unless `notified` is false). */
function setup(configHidden = false, notified = true) {
  const reports: HookOutcome[] = [];
  const nudge = new CodexRateLimitNudge({
    env: {},
    report: (_s, o) => reports.push(o),
    configHidden: () => Promise.resolve(configHidden),
    notifyWaitMs: 50,
  });
  nudge.seen('cx');
  nudge.records('cx', facts(meta));
  if (notified) nudge.notified('cx', NOTIFY);
  const asks = () => reports.filter((r) => r.ask !== undefined);
  const ends = () => reports.filter((r) => r.askEnded !== undefined).map((r) => r.askEnded!.why);
  /** Codex's terminal through a turn: working, then its end's state. */
  const osc = (...states: string[]) => states.forEach((s) => nudge.notice('cx', state(s)));
  return { nudge, reports, asks, ends, osc, settled: () => new Promise((r) => setTimeout(r, 0)) };
}

describe("Codex's rate-limit dialog: when it shows", () => {
  it('at a window of 90 % as a whole number: 89.5 and 89.6 show it, 89.4 and 89.49 do not; the weekly window as well', async () => {
    for (const [five, week, shows] of [
      [89.4, 23, false],
      [89.49, 23, false],
      [89.5, 23, true],
      [89.6, 23, true],
      [57, 91, true],
    ] as const) {
      const s = setup();
      await s.settled();
      s.nudge.records('cx', turn(complete, tokens(five, week)));
      expect(s.asks().length, `${five} / ${week}`).toBe(shows ? 1 : 0);
    }
  });

  it('an ask of the question: switch (1), keep (Escape), never show again (3), the model Codex 0.169 offers, the window in its detail', async () => {
    const s = setup();
    await s.settled();
    s.nudge.records('cx', turn(complete, tokens(57, 91)));
    const ask = s.asks()[0]!.ask!;
    expect(ask).toEqual(codexRateLimitNudge('gpt-6-luna', { name: 'seven_day', usedPercent: 91, resetsAt: (RESET + 86_400) * 1000 }));
    expect(ask).toMatchObject({
      kind: 'question',
      concern: 'Approaching rate limits: switch to gpt-6-luna for lower credit usage?',
      readiness: { quietMs: CODEX_DIALOG_QUIET_MS },
      landing: 'screen',
    });
    expect(ask.detail).toMatch(/^weekly limit at 91 % used\. "Never show again" makes Codex write notice\.hide_rate_limit_model_nudge/);
    expect(ask.choices.map((c) => [c.id, c.label, c.keys, c.effect])).toEqual([
      ['switch', 'Switch to gpt-6-luna', [{ type: 'keys', data: '1' }], 'wait'],
      ['keep', 'Keep current model', [{ type: 'key', name: 'escape' }], 'wait'],
      ['never', 'Keep current model (never show again)', [{ type: 'keys', data: '3' }], 'wait'],
    ]);
  });

  it('any answer of the turn readies it (a tool call at 91 %, its last answer at 50 %); it shows at the end, not before', async () => {
    const s = setup();
    await s.settled();
    s.nudge.records('cx', facts(started, tokens(91)));
    expect(s.asks()).toEqual([]);
    s.nudge.records('cx', facts(tokens(50), complete));
    expect(s.asks()).toHaveLength(1);
    expect(s.asks()[0]!.ask!.detail).toMatch(/^5-hour limit at 91 %/);
  });

  it('once per conversation of a Codex process: not again in the same one; again after a respawn or restore, or a new conversation', async () => {
    const s = setup();
    await s.settled();
    s.nudge.records('cx', turn(complete, tokens(91)));
    s.nudge.records('cx', turn(complete, tokens(95)));
    expect(s.asks()).toHaveLength(1);
    s.nudge.seen('cx');
    s.nudge.notified('cx', NOTIFY);
    await s.settled();
    s.nudge.records('cx', turn(complete, tokens(95)));
    expect(s.asks()).toHaveLength(2);
    s.nudge.followed('cx');
    s.nudge.records('cx', turn(complete, tokens(95)));
    expect(s.asks()).toHaveLength(3);
  });

  it('an interrupted turn shows it too; a turn that ended on a stop shows it without an ask (the stop stays), and not again after', async () => {
    const s = setup();
    await s.settled();
    s.nudge.records('cx', turn(aborted, tokens(91)));
    expect(s.asks()).toHaveLength(1);
    const t = setup();
    await t.settled();
    t.nudge.records('cx', turn(stopped, tokens(100)));
    t.nudge.records('cx', turn(complete, tokens(91)));
    expect(t.asks()).toEqual([]);
  });

  it('not with credits in the workspace (kept while later records say none), not on the model it offers, not of another limit', async () => {
    const s = setup();
    await s.settled();
    s.nudge.records('cx', turn(complete, tokens(91, 23, { credits: { has_credits: true, unlimited: false, balance: '0' } })));
    s.nudge.records('cx', turn(complete, tokens(91)));
    expect(s.asks()).toEqual([]);
    const t = setup();
    await t.settled();
    t.nudge.records('cx', facts(started, model('gpt-6-luna'), tokens(91), complete));
    t.nudge.records('cx', turn(complete, tokens(91, 23, { limit_id: 'codex_other' })));
    expect(t.asks()).toEqual([]);
  });

  it('without the version of Codex the model is not named, and any model may be asked about', () => {
    const reports: HookOutcome[] = [];
    const nudge = new CodexRateLimitNudge({ env: {}, report: (_s, o) => reports.push(o), configHidden: () => Promise.resolve(false) });
    nudge.notified('cx', NOTIFY);
    nudge.records('cx', facts(started, model('gpt-6-luna'), tokens(92), complete));
    expect(reports[0]?.ask).toMatchObject({
      concern: 'Approaching rate limits: switch to a model that uses fewer credits for lower credit usage?',
    });
    expect(reports[0]?.ask?.choices[0]?.label).toBe('Switch to the suggested model');
  });
});

describe("Codex's rate-limit dialog turned off", () => {
  it('reads the setting from config.toml ([notice], a TOML true only) and from -c on the command line (the last one wins)', () => {
    expect(nudgeHiddenOfConfig('[notice]\nhide_rate_limit_model_nudge = true\n')).toBe(true);
    expect(nudgeHiddenOfConfig('[notice]\nhide_rate_limit_model_nudge = "true"\n')).toBe(false);
    expect(nudgeHiddenOfConfig('hide_rate_limit_model_nudge = true\n')).toBe(false);
    expect(nudgeHiddenOfConfig('[notice\nhide_rate_limit_model_nudge = true')).toBe(false);
    expect(nudgeHiddenOfArgs(['codex', '-c', 'notice.hide_rate_limit_model_nudge=true'])).toBe(true);
    expect(nudgeHiddenOfArgs(['codex', '--config', 'notice = { hide_rate_limit_model_nudge = false }'])).toBe(false);
    expect(
      nudgeHiddenOfArgs(['codex', '-c', 'notice.hide_rate_limit_model_nudge=true', '-c', 'notice.hide_rate_limit_model_nudge=false']),
    ).toBe(false);
    expect(nudgeHiddenOfArgs(['codex', '-c', 'notice.hide_rate_limit_model_nudge=yes', '-c', 'model="x"'])).toBeNull();
  });

  it("hands the command line's setting to tether's notify program, which reports it", () => {
    const notify = ['node', '/t/dist/agent/codex/notify.js'];
    expect(codexArgv(['codex', '-c', 'notice.hide_rate_limit_model_nudge=true'], notify, null).at(-1)).toBe(
      'notify=["node", "/t/dist/agent/codex/notify.js", "--nudge-hidden", "true"]',
    );
    expect(codexArgv(['codex'], notify, null)).toEqual(['codex', '-c', 'notify=["node", "/t/dist/agent/codex/notify.js"]']);
  });

  it('by config.toml when Codex started: no ask', async () => {
    const s = setup(true);
    await s.settled();
    s.nudge.records('cx', turn(complete, tokens(95)));
    expect(s.asks()).toEqual([]);
  });

  it('by its command line, which its notify says (over config.toml either way)', async () => {
    const s = setup(true);
    await s.settled();
    s.nudge.notified('cx', { ...NOTIFY, 'nudge-hidden': 'false' });
    s.nudge.records('cx', turn(complete, tokens(95)));
    expect(s.asks()).toHaveLength(1);
    const t = setup();
    await t.settled();
    t.nudge.notified('cx', { ...NOTIFY, 'nudge-hidden': 'true' });
    t.nudge.records('cx', turn(complete, tokens(95)));
    expect(t.asks()).toEqual([]);
  });

  it("before a Codex process's first notify, the ask waits for its turn's notify: it opens with one that does not turn it off", async () => {
    const s = setup(false, false);
    await s.settled();
    s.nudge.records('cx', turn(complete, tokens(95)));
    expect(s.asks()).toEqual([]);
    s.nudge.notified('cx', NOTIFY);
    expect(s.asks()).toHaveLength(1);
    const t = setup(false, false);
    await t.settled();
    t.nudge.records('cx', turn(complete, tokens(95)));
    t.nudge.notified('cx', { ...NOTIFY, 'nudge-hidden': 'true' });
    await new Promise((r) => setTimeout(r, 100));
    expect(t.asks()).toEqual([]);
  });

  it('config.toml turning it off and the command line on again (its notify late): the ask waits, and opens', async () => {
    const s = setup(true, false);
    await s.settled();
    s.nudge.records('cx', turn(complete, tokens(95)));
    expect(s.asks()).toEqual([]);
    s.nudge.notified('cx', { ...NOTIFY, 'nudge-hidden': 'false' });
    expect(s.asks()).toHaveLength(1);
  });

  it('without a notify in time it opens all the same; one that comes later turning the dialog off ends it', async () => {
    const s = setup(false, false);
    await s.settled();
    s.nudge.records('cx', turn(complete, tokens(95)));
    await new Promise((r) => setTimeout(r, 100));
    expect(s.asks()).toHaveLength(1);
    s.nudge.notified('cx', { ...NOTIFY, 'nudge-hidden': 'true' });
    expect(s.ends()).toEqual(['moved-on']);
  });
});

describe("Codex's rate-limit dialog: when its ask ends", () => {
  it("on the next state Codex writes after the turn's end (a key taken), not on the state drawn with the dialog", async () => {
    const s = setup();
    await s.settled();
    s.osc('working', 'done');
    s.nudge.records('cx', turn(complete, tokens(91)));
    s.osc('done');
    expect(s.ends()).toEqual([]);
    s.osc('idle');
    expect(s.ends()).toEqual(['terminal']);
    s.osc('working');
    expect(s.ends()).toEqual(['terminal']);
  });

  it("read before Codex wrote the turn's end: that state does not end it, the one after does", async () => {
    const s = setup();
    await s.settled();
    s.osc('working');
    s.nudge.records('cx', turn(complete, tokens(91)));
    s.osc('done');
    expect(s.ends()).toEqual([]);
    s.osc('idle');
    expect(s.ends()).toEqual(['terminal']);
  });

  it("a key that reached Codex before the turn's end was read: no ask (the dialog took it), and none later", async () => {
    const s = setup();
    await s.settled();
    s.osc('working', 'done', 'idle');
    s.nudge.records('cx', turn(complete, tokens(91)));
    s.nudge.records('cx', turn(complete, tokens(91)));
    expect(s.asks()).toEqual([]);
  });

  it('an interrupted turn (its state idle with the dialog): a new turn ends it; its start in the file leaves the ask to the state machine', async () => {
    const s = setup();
    await s.settled();
    s.osc('working', 'idle');
    s.nudge.records('cx', turn(aborted, tokens(91)));
    expect(s.asks()).toHaveLength(1);
    s.osc('working');
    expect(s.ends()).toEqual(['terminal']);
    const t = setup();
    await t.settled();
    t.nudge.records('cx', turn(complete, tokens(91)));
    t.nudge.records('cx', facts(started));
    t.osc('idle');
    expect(t.ends()).toEqual([]);
  });

  it("a look that read an old turn's end and the next turn's start opens no ask", async () => {
    const s = setup();
    await s.settled();
    s.nudge.records('cx', [...turn(complete, tokens(91)), ...facts(started)]);
    expect(s.asks()).toEqual([]);
  });
});
