/**
 * Codex's rollout files as agent state: what each record means (records shaped as Codex 0.169
 * writes them, test/agents/README.md), the bounded tail reader on real files, and the watch that
 * finds a session's file (by its thread id, or as the one new file in its directory) and reports
 * its turns, on a real temporary sessions folder.
 */
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { HookOutcome } from '../../src/agent/contract/adapter.js';
import { CodexApprovals } from '../../src/agent/codex/approvals.js';
import { approvalCommand, codexApproval, readCodexState } from '../../src/agent/codex/asks.js';
import { rolloutDays } from '../../src/agent/codex/rollout.js';
import { readRolloutLine, readSessionMeta } from '../../src/agent/codex/rollout-records.js';
import { MAX_ROLLOUT_LINE_BYTES, MAX_TAIL_READ_BYTES, ROLLOUT_HEAD_BYTES, RolloutTail } from '../../src/agent/codex/rollout-tail.js';
import { CodexRolloutWatch } from '../../src/agent/codex/rollout-watch.js';
import { silentLogger } from '../../src/log.js';
import { eventually } from '../helpers/tmux.js';

const root = mkdtempSync(join(tmpdir(), 'tether-rollout-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const TS = '2026-11-25T18:26:32.052Z';
const rec = (type: string, payload: Record<string, unknown>) => JSON.stringify({ timestamp: TS, ordinal: 1, type, payload });
const meta = (thread: string, cwd: string) =>
  rec('session_meta', {
    account_scoped: true,
    session_id: thread,
    id: thread,
    timestamp: TS,
    cwd,
    originator: 'codex-tui',
    base_instructions: 'x'.repeat(20_000),
  });
const started = () => rec('event_msg', { type: 'task_started', turn_id: 't1' });
const prompt = (text: string) => rec('response_item', { type: 'message', role: 'user', content: [{ type: 'input_text', text }] });
const call = (id: string, args = '{"cmd":"echo hi"}') =>
  rec('response_item', { type: 'function_call', status: 'completed', id: `fc_${id}`, name: 'exec_command', arguments: args, call_id: id });
const output = (id: string, out = 'hi\n') =>
  rec('response_item', { type: 'function_call_output', id: `fco_${id}`, call_id: id, output: out });
const complete = () => rec('event_msg', { type: 'task_complete', turn_id: 't1', last_agent_message: 'done' });

/** A UUIDv7 made at `ms` (Codex's thread ids are). */
let serial = 0;
function threadAt(ms: number): string {
  const hex = ms.toString(16).padStart(12, '0');
  const tail = (serial++).toString(16).padStart(12, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-7000-8000-${tail}`;
}

/** What a list of outcomes says, in order: `thinking`, `tool <name>`, `end-tool`, `waiting`, `prompt <text>`. */
function said(outcomes: readonly HookOutcome[]): string[] {
  return outcomes.flatMap((o) => [
    ...o.events.map((e) =>
      e.event === 'agent.start'
        ? 'thinking'
        : e.event === 'tool.start'
          ? `tool ${e.tool} ${e.id}`
          : e.event === 'tool.end'
            ? `end-tool ${e.id}`
            : e.event === 'agent.end'
              ? 'waiting'
              : e.event,
    ),
    ...(o.userMessage !== undefined ? [`prompt ${o.userMessage}`] : []),
  ]);
}

describe('rollout records', () => {
  it("maps a turn with a tool call: started, prompt, call, output, complete; Codex's own context and bookkeeping mean nothing", () => {
    const lines = [
      meta('01a213f5-96ad-75d2-9dd1-8a600bf6d787', '/w'),
      started(),
      rec('response_item', {
        type: 'message',
        role: 'user',
        content: [{ type: 'input_text', text: '<environment_context>\n</environment_context>' }],
      }),
      prompt('please run it'),
      call('call_1'),
      rec('event_msg', { type: 'token_count', info: {} }),
      output('call_1'),
      rec('event_msg', { type: 'turn_aborted', reason: 'interrupted' }),
      complete(),
      'not json at all',
    ];
    expect(said(lines.map(readRolloutLine))).toEqual([
      'thinking',
      'prompt please run it',
      'tool exec_command call_1',
      'end-tool call_1',
      'waiting',
      'waiting',
    ]);
  });

  it('reads a session_meta head for its thread and directory (the line is cut: base_instructions are long)', () => {
    const head = meta('01a213f5-96ad-75d2-9dd1-8a600bf6d787', '/tmp/a "quoted" dir').slice(0, 4096);
    expect(readSessionMeta(head)).toEqual({ thread: '01a213f5-96ad-75d2-9dd1-8a600bf6d787', cwd: '/tmp/a "quoted" dir' });
    expect(readSessionMeta(started())).toBeNull();
  });

  it('reads a too-long call from its head: the tool is named, its cut-off call id is empty', () => {
    const head = call('call_big', 'y'.repeat(50_000)).slice(0, ROLLOUT_HEAD_BYTES);
    expect(said([readRolloutLine(head)])).toEqual(['tool exec_command ']);
    expect(said([readRolloutLine(output('call_big', 'z'.repeat(50_000)).slice(0, ROLLOUT_HEAD_BYTES))])).toEqual(['end-tool call_big']);
  });
});

describe('rollout tail', () => {
  it('hands out complete lines only, once each, from where it was made', async () => {
    const path = join(root, 'tail-1.jsonl');
    writeFileSync(path, 'old\n');
    const tail = new RolloutTail(path, 4);
    expect(await tail.read()).toEqual([]);
    appendFileSync(path, 'one\ntw');
    expect(await tail.read()).toEqual(['one']);
    appendFileSync(path, 'o\n');
    expect(await tail.read()).toEqual(['two']);
  });

  it('keeps only the head of a line over the limit, and reads at most its bound per call', async () => {
    const path = join(root, 'tail-2.jsonl');
    writeFileSync(path, `${'a'.repeat(MAX_ROLLOUT_LINE_BYTES + 10)}\nshort\n`);
    const tail = new RolloutTail(path, 0);
    const lines = await tail.read();
    expect(lines.map((l) => l.length)).toEqual([ROLLOUT_HEAD_BYTES, 5]);

    const big = join(root, 'tail-3.jsonl');
    const line = `${'b'.repeat(1023)}\n`;
    writeFileSync(big, line.repeat(MAX_TAIL_READ_BYTES / 1024 + 100));
    const t = new RolloutTail(big, 0);
    expect((await t.read()).length).toBe(MAX_TAIL_READ_BYTES / 1024);
    expect((await t.read()).length).toBe(100);
  });

  it('reads a file that shrank (replaced) from its start', async () => {
    const path = join(root, 'tail-4.jsonl');
    writeFileSync(path, 'one\ntwo\n');
    const tail = new RolloutTail(path, 0);
    expect(await tail.read()).toEqual(['one', 'two']);
    truncateSync(path, 0);
    appendFileSync(path, 'new\n');
    expect(await tail.read()).toEqual(['new']);
  });
});

describe('rollout watch', () => {
  const watches: CodexRolloutWatch[] = [];
  afterEach(() => {
    for (const w of watches.splice(0)) w.stop();
  });

  function setup() {
    const sessionsDir = mkdtempSync(join(root, 'sessions-'));
    const got = new Map<string, HookOutcome[]>();
    const watch = new CodexRolloutWatch({
      sessionsDir,
      now: Date.now,
      log: silentLogger,
      pollMs: 20,
      report: (session, outcome) => got.set(session, [...(got.get(session) ?? []), outcome]),
    });
    watches.push(watch);
    /** Writes a new rollout file for `thread` (its first lines), as Codex does at a first prompt. */
    const file = (thread: string, lines: string[]) => {
      const ms = parseInt(thread.replace(/-/g, '').slice(0, 12), 16);
      const day = join(sessionsDir, rolloutDays(ms)[0]!);
      mkdirSync(day, { recursive: true });
      const path = join(day, `rollout-2026-11-25T18-26-31-${thread}.jsonl`);
      writeFileSync(path, lines.map((l) => `${l}\n`).join(''));
      return path;
    };
    return { watch, file, of: (session: string) => said(got.get(session) ?? []) };
  }

  /** Sessions a and b watched in `dirA` and `dirB`, and a new thread's file in `dirA`, its first prompt begun. */
  function newThreadBeside(dirA: string, dirB: string) {
    const s = setup();
    s.watch.watch('a', dirA, null);
    s.watch.watch('b', dirB, null);
    const thread = threadAt(Date.now());
    const path = s.file(thread, [meta(thread, dirA), started(), prompt('go')]);
    return { ...s, thread, path };
  }

  it("finds a new session's file as the one new file in its directory, and reports its turn from the start", async () => {
    const { watch, of, thread, path } = newThreadBeside('/work/a', '/work/b');
    await eventually(() => of('a').length === 2, 10_000, 20, "session a's first records");
    appendFileSync(path, [call('c1'), output('c1'), complete()].map((l) => `${l}\n`).join(''));
    await eventually(() => of('a').length === 5, 10_000, 20, "session a's turn");
    expect(of('a')).toEqual(['thinking', 'prompt go', 'tool exec_command c1', 'end-tool c1', 'waiting']);
    expect(of('b')).toEqual([]);
    // Following that thread, a notify of it leaves the turn's end to the file.
    expect(watch.notified('a', thread)).toBe(true);
  });

  it('takes no new file that two sessions in one directory could own; a notify names the thread, whose file is read from its start', async () => {
    const { watch, file, of, thread, path } = newThreadBeside('/work/same', '/work/same');
    const control = threadAt(Date.now());
    watch.watch('c', '/work/c', null);
    file(control, [meta(control, '/work/c'), started()]);
    await eventually(() => of('c').length === 1, 10_000, 20, 'the unambiguous session c found');
    expect(of('a')).toEqual([]);
    expect(of('b')).toEqual([]);
    appendFileSync(path, [call('c2'), output('c2'), complete()].map((l) => `${l}\n`).join(''));
    // The notify of b's turn: its thread was made since b was watched, so its file tells the whole turn.
    expect(watch.notified('b', thread)).toBe(true);
    await eventually(() => of('b').length === 5, 10_000, 20, "b's first turn, from its file's start");
    expect(of('b')).toEqual(['thinking', 'prompt go', 'tool exec_command c2', 'end-tool c2', 'waiting']);
    appendFileSync(path, [started(), complete()].map((l) => `${l}\n`).join(''));
    await eventually(() => of('b').length === 7, 10_000, 20, "b's next turn");
    expect(of('b').slice(5)).toEqual(['thinking', 'waiting']);
    expect(of('a')).toEqual([]);
  });

  it('reads the whole first turn when the notify comes before a look found its new file; an older thread is followed from its end', async () => {
    const { watch, file, of } = setup();
    // No directory known (a Codex started with `-C`, or a look not yet done): only the notify names the thread.
    watch.watch('n', null, null);
    const thread = threadAt(Date.now());
    file(thread, [meta(thread, '/work/n'), started(), prompt('go'), call('c4'), output('c4'), complete()]);
    expect(watch.notified('n', thread)).toBe(true);
    await eventually(() => of('n').length === 5, 10_000, 20, "n's first turn, from its file's start");
    expect(of('n')).toEqual(['thinking', 'prompt go', 'tool exec_command c4', 'end-tool c4', 'waiting']);

    // A thread made long before the session was watched (a Codex running before the daemon): its
    // past is not replayed; the notify's own word counts, and the file is followed from its end.
    watch.watch('o', null, null);
    const old = threadAt(Date.now() - 3_600_000);
    const path = file(old, [meta(old, '/work/o'), started(), prompt('old'), complete()]);
    expect(watch.notified('o', old)).toBe(false);
    await eventually(() => watch.notified('o', old), 10_000, 20, 'o following its file');
    appendFileSync(path, [started(), complete()].map((l) => `${l}\n`).join(''));
    await eventually(() => of('o').length === 2, 10_000, 20, "o's next turn");
    expect(of('o')).toEqual(['thinking', 'waiting']);
  });

  it('follows a known thread (a resume) from the end of its file, and pairs an output with a call whose id was cut off', async () => {
    const { watch, file, of } = setup();
    const thread = threadAt(Date.now() - 3_600_000);
    const path = file(thread, [meta(thread, '/work/r'), started(), prompt('old'), complete()]);
    watch.watch('r', '/work/r', thread);
    await eventually(() => watch.notified('r', thread), 10_000, 20, 'r following its file');
    appendFileSync(
      path,
      [started(), call('c3', 'y'.repeat(MAX_ROLLOUT_LINE_BYTES)), output('c3'), complete()].map((l) => `${l}\n`).join(''),
    );
    await eventually(() => of('r').length === 4, 10_000, 20, "r's resumed turn");
    expect(of('r')).toEqual(['thinking', 'tool exec_command ', 'end-tool ', 'waiting']);
  });
});

describe("Codex's approvals: what it writes to its terminal, and the call its rollout recorded", () => {
  it("reads the call's command and justification from its record, whichever shell tool", () => {
    const escalated = JSON.stringify({ cmd: 'touch /x', sandbox_permissions: 'require_escalated', justification: 'write outside' });
    expect(readRolloutLine(call('c1', escalated)).call).toEqual({
      id: 'c1',
      name: 'exec_command',
      command: 'touch /x',
      justification: 'write outside',
    });
    expect(readRolloutLine(call('c2', JSON.stringify({ command: ['bash', '-lc', 'ls -l'] }))).call?.command).toBe('ls -l');
    expect(readRolloutLine(call('c3', JSON.stringify({ command: ['rg', 'x y'] }))).call?.command).toBe('rg x y');
    expect(readRolloutLine(call('c4', 'not json')).call).toEqual({ id: 'c4', name: 'exec_command' });
    expect(readRolloutLine(output('c1')).call).toBeUndefined();
  });

  it('its state notice and its approval notice', () => {
    expect(readCodexState('state=blocked:app=codex:kind=permission')).toEqual({ state: 'blocked', app: 'codex', kind: 'permission' });
    expect(approvalCommand('Approval requested: touch /tmp/a && echo hi')).toBe('touch /tmp/a && echo hi');
    expect(approvalCommand('Agent turn complete')).toBeNull();
  });

  it('an approval: yes is y, no is Escape; the command from the notice, else from the call', () => {
    const a = codexApproval(null, { id: 'c1', name: 'exec_command', command: 'touch /x', justification: 'write outside' });
    expect(a).toMatchObject({ kind: 'permission', tool: 'exec_command', concern: 'touch /x', detail: 'write outside', landing: 'report' });
    expect(a.choices.map((c) => [c.id, c.keys, c.effect])).toEqual([
      ['yes', [{ type: 'keys', data: 'y' }], 'run'],
      ['no', [{ type: 'key', name: 'escape' }], 'resume'],
    ]);
    expect(codexApproval('ls /', null)).toMatchObject({ concern: 'ls /', tool: 'exec_command' });
  });

  it('blocked opens one ask once the rollout was read; leaving blocked ends it; a state that left while reading opens none', async () => {
    const reports: HookOutcome[] = [];
    let release!: () => void;
    const look = new Promise<void>((r) => (release = r));
    const approvals = new CodexApprovals({
      report: (_s, o) => reports.push(o),
      now: () => 1000,
      log: silentLogger,
      rollouts: { lookNow: () => look, lastCall: () => ({ id: 'c1', name: 'exec_command', command: 'from the rollout' }) },
    });
    approvals.notice('cx', { code: 9, text: 'Approval requested: from the notice' });
    approvals.notice('cx', { code: 7501, text: 'state=blocked:app=codex:kind=permission' });
    approvals.notice('cx', { code: 7501, text: 'state=blocked:app=codex:kind=permission' });
    release();
    await eventually(() => reports.length === 1, 5_000, 5);
    expect(reports[0]!.ask).toMatchObject({ concern: 'from the notice' });
    approvals.notice('cx', { code: 7501, text: 'state=working:app=codex' });
    expect(reports[1]).toEqual({ events: [], askEnded: { why: 'terminal' } });
    approvals.notice('cx', { code: 7501, text: 'state=idle:app=codex' });
    // Its first idle: an empty report, which moves no agent that reported already.
    expect(reports.slice(2)).toEqual([{ events: [] }]);
    // Answered at the terminal while the rollout was being read: nothing to ask.
    approvals.notice('cy', { code: 7501, text: 'state=blocked:app=codex:kind=permission' });
    approvals.notice('cy', { code: 7501, text: 'state=working:app=codex' });
    await new Promise((r) => setImmediate(r));
    expect(reports.filter((r) => r.ask !== undefined)).toHaveLength(1);
  });
});

describe("Codex's first state", () => {
  it('its first idle makes it there (an empty report, once), whatever state came before it', () => {
    const reports: [string, HookOutcome][] = [];
    const approvals = new CodexApprovals({
      report: (s, o) => reports.push([s, o]),
      now: () => 1000,
      log: silentLogger,
      rollouts: { lookNow: () => Promise.resolve(), lastCall: () => null },
    });
    approvals.notice('cx', { code: 7501, text: 'state=idle:app=codex' });
    approvals.notice('cx', { code: 7501, text: 'state=working:app=codex' });
    approvals.notice('cx', { code: 7501, text: 'state=idle:app=codex' });
    // Codex also writes `clear`, and a turn it started by itself is `working` first: the idle after counts.
    approvals.notice('cy', { code: 7501, text: 'state=clear' });
    approvals.notice('cy', { code: 7501, text: 'state=working:app=codex' });
    expect(reports).toEqual([['cx', { events: [] }]]);
    approvals.notice('cy', { code: 7501, text: 'state=idle:app=codex' });
    approvals.notice('cy', { code: 7501, text: 'state=idle:app=codex' });
    approvals.notice('cz', { code: 7501, text: 'state=idle:app=another' });
    expect(reports).toEqual([
      ['cx', { events: [] }],
      ['cy', { events: [] }],
    ]);
    approvals.forget('cx');
    approvals.notice('cx', { code: 7501, text: 'state=idle:app=codex' });
    expect(reports).toHaveLength(3);
  });
});

describe("Codex's stops in its rollout file", () => {
  const reset = 1_795_882_260;
  const tokenCount = (used: number) =>
    rec('event_msg', {
      type: 'token_count',
      info: null,
      rate_limits: {
        primary: { used_percent: used, window_minutes: 300, resets_at: reset },
        secondary: { used_percent: 12.0, window_minutes: 10080, resets_at: reset + 86_400 },
      },
    });
  const failed = (message: string, info: string) =>
    rec('event_msg', { type: 'task_complete', turn_id: 't1', last_agent_message: null, error: { message, codex_error_info: info } });

  it('a turn that ended on an error is the stop with its words, not a finished turn', () => {
    const m = readRolloutLine(
      failed('We’re currently experiencing high demand, which may cause temporary errors.', 'internal_server_error'),
    );
    expect(m.events).toEqual([]);
    expect(m.stop).toEqual({ kind: 'error', message: 'We’re currently experiencing high demand, which may cause temporary errors.' });
    expect(readRolloutLine(rec('event_msg', { type: 'task_complete', turn_id: 't1', last_agent_message: 'ok' })).stop).toBeUndefined();
  });

  it('a usage limit is its stop; the used-up window before it says the reset and which limit', () => {
    expect(readRolloutLine(tokenCount(40)).limit).toBeUndefined();
    expect(readRolloutLine(tokenCount(100)).limit).toEqual({ resetsAt: reset * 1000, limit: 'five_hour' });
    const m = readRolloutLine(failed("You've hit your usage limit.", 'usage_limit_exceeded'));
    expect(m.stop).toEqual({ kind: 'usage-limit', message: "You've hit your usage limit." });
  });

  it('the watch reports the usage limit with the reset its file said', async () => {
    const sessionsDir = mkdtempSync(join(root, 'limit-'));
    const thread = threadAt(Date.now() - 3_600_000);
    const day = join(sessionsDir, rolloutDays(parseInt(thread.replace(/-/g, '').slice(0, 12), 16))[0]!);
    mkdirSync(day, { recursive: true });
    const path = join(day, `rollout-2026-11-25T18-26-31-${thread}.jsonl`);
    writeFileSync(path, `${meta(thread, '/work/l')}\n`);
    const reports: HookOutcome[] = [];
    const watch = new CodexRolloutWatch({ sessionsDir, now: Date.now, log: silentLogger, pollMs: 20, report: (_s, o) => reports.push(o) });
    try {
      watch.watch('l', '/work/l', thread);
      await eventually(() => watch.notified('l', thread), 10_000, 20, 'l following its file');
      appendFileSync(path, `${started()}\n${tokenCount(100)}\n${failed("You've hit your usage limit.", 'usage_limit_exceeded')}\n`);
      await eventually(() => reports.some((r) => r.stop !== undefined), 10_000, 20, 'the stop reported');
      expect(reports.find((r) => r.stop !== undefined)?.stop).toEqual({
        kind: 'usage-limit',
        message: "You've hit your usage limit.",
        resetsAt: reset * 1000,
        limit: 'five_hour',
      });
    } finally {
      watch.stop();
    }
  });
});
