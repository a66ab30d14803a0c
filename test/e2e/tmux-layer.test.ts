/**
 * The tmux layer against real tmux on a private socket: session creation and its options byte
 * for byte, listing beside a hostile non-tether session, killing, literal keys, named keys,
 * bracketed paste, and user options round-tripping through both argv and control mode.
 */
import { execFile, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TmuxCli, isNoSessionError } from '../../src/tmux/exec.js';
import { pasteCommands, resolveKey, sendKeyCommands, sendKeysHexCommands } from '../../src/tmux/pane/input.js';
import { buildControlCommand } from '../../src/tmux/quote.js';
import { domainError } from '../helpers/domain-error.js';
import { hasSession, killSession, readUserOption, setUserOption, unsetUserOption } from '../../src/tmux/sessions/sessions.js';
import { AFTER_NEW_WINDOW_HOOK, createSession } from '../../src/tmux/sessions/session-create.js';
import { listSessions } from '../../src/tmux/sessions/session-list.js';
import { readServerVersion, readTmuxVersion } from '../../src/tmux/version.js';
import { eventually, privateTmux, type PrivateTmux } from '../helpers/tmux.js';

const run = promisify(execFile);
const HOSTILE = 'a;b #{pane_id} $HOME $(touch /tmp/tether-pwned) `id` ~ "q" \'s\' \\ \t\n\x1f\x01 é€😀 ;';

let tmux: PrivateTmux;

beforeAll(async () => {
  tmux = await privateTmux();
});

afterAll(async () => {
  await tmux?.cleanup();
});

/** Pipes control-mode lines into a control client of `session`; resolves with its output once it exits. */
async function control(session: string, lines: readonly string[]): Promise<string> {
  const child = spawn('tmux', ['-S', tmux.socket, '-C', 'attach-session', '-t', `=${session}`], { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString('utf8')));
  child.stdin.end(lines.map((l) => `${l}\n`).join(''));
  await new Promise<void>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', () => resolve());
  });
  expect(out).not.toContain('%error');
  return out;
}

/** A session whose agent writes every byte it reads to `file`, unchanged (raw tty, no echo). */
async function recorder(name: string, setup = ''): Promise<{ paneId: string; file: string }> {
  const file = join(tmux.dir, `${name}.bin`);
  writeFileSync(file, '');
  const script = `${setup}stty raw -echo -iexten; exec cat > "$1"`;
  const { paneId } = await createSession(tmux.cli, {
    name,
    command: ['/bin/sh', '-c', script, 'sh', file],
    createdAt: new Date().toISOString(),
  });
  await eventually(async () => (await tmux.tmux('display', '-p', '-t', paneId, '#{pane_current_command}')).trim() === 'cat');
  return { paneId, file };
}

async function recorded(file: string, expected: Buffer): Promise<void> {
  await eventually(() => readFileSync(file).length >= expected.length, 15_000);
  expect(readFileSync(file).toString('hex')).toBe(expected.toString('hex'));
}

async function globalState(): Promise<string> {
  const parts = await Promise.all([
    tmux.tmux('show-options', '-g'),
    tmux.tmux('show-options', '-gw'),
    tmux.tmux('show-options', '-s'),
    tmux.tmux('show-hooks', '-g'),
    tmux.tmux('show-environment', '-g'),
  ]);
  return parts.join('\n---\n');
}

describe('sessions on real tmux', () => {
  let hostileName = '';
  let agentPane = '';

  it('creates a session with hostile data stored byte for byte, touching no global option', async () => {
    // A user's own session with a hostile name and options, in the same server.
    await run('tmux', ['-S', tmux.socket, 'new-session', '-d', '-s', 'user;x #{pane_id} $HOME\x1f.:', '-x', '80', '-y', '24', 'cat']);
    hostileName = (await tmux.tmux('list-sessions', '-F', '#{session_name}')).replace(/\n$/, '');
    await run('tmux', ['-S', tmux.socket, 'set-option', '-t', '$0:', '@project', 'x\x1f$9\x1ffake\x1f1\n$7\x1ffake']);
    const before = await globalState();

    const dir = join(tmux.dir, 'work #{pane_id};$HOME dir');
    mkdirSync(dir);
    const createdAt = '2026-01-02T03:04:05.678Z';
    const { paneId } = await createSession(tmux.cli, {
      name: 'agent-1',
      command: ['/bin/sh', '-c', 'printf "[%s|%s|%s]" "$FOO" "$(pwd)" "$1"; exec cat', 'sh', 'arg;'],
      env: { FOO: 'v;#{pane_id}$HOME', TETHER_SESSION: 'agent-1' },
      cwd: dir,
      project: HOSTILE,
      createdAt,
      options: { '@description': HOSTILE, '@tether-seq': '-1 ; kill-server' },
    });
    agentPane = paneId;
    expect(paneId).toMatch(/^%\d+$/);

    expect(await readUserOption(tmux.cli, 'agent-1', '@project')).toBe(HOSTILE);
    expect(await tmux.tmux('show-options', '-v', '-t', '=agent-1:', '@project')).toBe(`${HOSTILE}\n`);
    expect(await readUserOption(tmux.cli, 'agent-1', '@created')).toBe(createdAt);
    expect(await readUserOption(tmux.cli, 'agent-1', '@tether-pane')).toBe(paneId);
    expect(await readUserOption(tmux.cli, 'agent-1', '@description')).toBe(HOSTILE);
    expect(await readUserOption(tmux.cli, 'agent-1', '@tether-seq')).toBe('-1 ; kill-server');

    const info = await tmux.tmux(
      'display',
      '-p',
      '-t',
      paneId,
      '#{window_width}x#{window_height} #{window-size} #{history_limit} #{remain-on-exit} #{session_windows} #{window_panes}',
    );
    expect(info.trim()).toBe('120x40 manual 10000 on 1 1');
    expect(await tmux.tmux('show-hooks', '-t', '=agent-1:', 'after-new-window')).toContain(AFTER_NEW_WINDOW_HOOK);
    await eventually(async () => (await tmux.capture(paneId)).includes(']'));
    expect((await tmux.capture(paneId)).split('\n')[0]).toBe(`[v;#{pane_id}$HOME|${dir}|arg;]`);
    expect(existsSync('/tmp/tether-pwned')).toBe(false);
    expect(await globalState()).toBe(before);
  });

  it('runs a one-word command directly, not through the shell', async () => {
    const script = join(tmux.dir, 'run me;$HOME #x');
    writeFileSync(script, '#!/bin/sh\necho ran-directly; exec cat\n');
    chmodSync(script, 0o755);
    const { paneId } = await createSession(tmux.cli, { name: 'one-word', command: [script], createdAt: new Date().toISOString() });
    await eventually(async () => (await tmux.capture(paneId)).includes('ran-directly'));
    // The window is named after the program, exactly, and keeps the name (automatic-rename is off).
    expect(await tmux.tmux('display', '-p', '-t', paneId, '#{automatic-rename}')).toBe('0\n');
    expect(await tmux.tmux('display', '-p', '-t', paneId, '#{window_name}')).toBe('run me;$HOME #x\n');
    await killSession(tmux.cli, 'one-word');
  });

  it('keeps the agent window at 120x40 when a terminal of another size attaches, and treats new windows the same', async () => {
    const outer = join(tmux.dir, 'outer.sock');
    try {
      // An ordinary client in a 200x60 terminal: a pane of a second private server.
      await run('tmux', [
        '-S',
        outer,
        'new-session',
        '-d',
        '-s',
        'o',
        '-x',
        '200',
        '-y',
        '60',
        'env',
        '-u',
        'TMUX',
        'tmux',
        '-S',
        tmux.socket,
        'attach-session',
        '-t',
        '=agent-1',
      ]);
      await eventually(async () => (await tmux.tmux('list-clients', '-F', '#{client_width}x#{client_height}')).includes('200x60'));
      expect((await tmux.tmux('display', '-p', '-t', agentPane, '#{window_width}x#{window_height} #{window-size}')).trim()).toBe(
        '120x40 manual',
      );
      await run('tmux', ['-S', outer, 'resize-window', '-t', 'o', '-x', '70', '-y', '20']);
      await eventually(async () => (await tmux.tmux('list-clients', '-F', '#{client_width}x#{client_height}')).includes('70x20'));
      expect((await tmux.tmux('display', '-p', '-t', agentPane, '#{window_width}x#{window_height}')).trim()).toBe('120x40');

      const pane = (await tmux.tmux('new-window', '-d', '-P', '-F', '#{pane_id}', '-t', '=agent-1:', 'sh', '-c', 'exit 5')).trim();
      // Dead and still there: remain-on-exit came from the hook. (Not its status: under load
      // tmux 3.3a now and then misses a pane's SIGCHLD and records none; the session link
      // nudges tmux for its own panes, this bare window has no link.)
      await eventually(async () => (await tmux.tmux('display', '-p', '-t', pane, '#{pane_dead}')).trim() === '1');
      expect(
        (await tmux.tmux('display', '-p', '-t', pane, '#{window_width}x#{window_height} #{window-size} #{remain-on-exit}')).trim(),
      ).toBe('120x40 manual on');
      await tmux.tmux('kill-pane', '-t', pane);
    } finally {
      await run('tmux', ['-S', outer, 'kill-server']).catch(() => undefined);
    }
  });

  it('refuses an invalid name before running anything, and a taken name with session-exists', async () => {
    const never = new TmuxCli({ bin: '/nonexistent/tmux', socketArgs: [] });
    for (const name of ['', 'a b', 'a;b', 'a:b', 'x'.repeat(65), '=agent-1']) {
      await expect(createSession(never, { name, command: ['cat'], createdAt: 'now' })).rejects.toThrow(domainError('invalid'));
    }
    await expect(createSession(never, { name: 'ok', command: ['cat', 'a\0b'], createdAt: 'now' })).rejects.toThrow(domainError('invalid'));
    await expect(createSession(never, { name: 'ok', command: ['cat'], env: { 'A=B': 'x' }, createdAt: 'now' })).rejects.toThrow(
      domainError('invalid'),
    );
    for (const option of ['status', '@a;b', '@#{x}', '-g']) {
      await expect(createSession(never, { name: 'ok', command: ['cat'], options: { [option]: 'x' }, createdAt: 'now' })).rejects.toThrow(
        domainError('invalid'),
      );
    }
    await expect(
      createSession(never, { name: 'ok', command: ['cat'], options: { '@description': 'a\0b' }, createdAt: 'now' }),
    ).rejects.toThrow(domainError('invalid'));
    await expect(createSession(tmux.cli, { name: 'agent-1', command: ['cat'], createdAt: 'later' })).rejects.toThrow(
      domainError('session-exists'),
    );
    expect(await readUserOption(tmux.cli, 'agent-1', '@created')).toBe('2026-01-02T03:04:05.678Z');
    expect(await readUserOption(tmux.cli, 'agent-1', '@tether-pane')).toBe(agentPane);
  });

  it('lists tether and non-tether sessions; a hostile name or option breaks nothing', async () => {
    // A session marked as tether's by hand, with a project that imitates list lines, and no @tether-pane.
    await tmux.tmux('new-session', '-d', '-s', 'marked', 'cat');
    await setUserOption(tmux.cli, 'marked', '@created', 'by-hand');
    await setUserOption(tmux.cli, 'marked', '@project', '\x1f$0\x1fagent-1\x1f1\n$1\x1f');
    const sessions = await listSessions(tmux.cli);
    const byName = new Map(sessions.map((s) => [s.name, s]));
    expect([...byName.keys()].sort()).toEqual(['agent-1', 'marked', hostileName].sort());

    const user = byName.get(hostileName)!;
    expect(user).toMatchObject({ isTether: false, createdAt: null, project: null, paneDead: false, paneDeadStatus: null });
    expect(user.sessionId).toBe('$0');

    const agent = byName.get('agent-1')!;
    expect(agent).toMatchObject({
      isTether: true,
      createdAt: '2026-01-02T03:04:05.678Z',
      project: HOSTILE,
      paneId: agentPane,
      paneDead: false,
    });
    expect(agent.attachedClients).toBe(0);
    expect(agent.panePid).toBeGreaterThan(1);
    expect(Math.abs(agent.created - Date.now() / 1000)).toBeLessThan(120);

    const marked = byName.get('marked')!;
    // Marked as tether's, but its @created is not a time: the list says "created: unknown", never the raw text.
    expect(marked).toMatchObject({ isTether: true, createdAt: null, project: '\x1f$0\x1fagent-1\x1f1\n$1\x1f' });
    expect(marked.paneId).toBe((await tmux.tmux('display', '-p', '-t', '=marked:', '#{pane_id}')).trim());
    await killSession(tmux.cli, 'marked');
  });

  it("lists a session's worktree and description; a description written by tether shows at once, one set by hand in tmux at the next refresh", async () => {
    const worktree = { repo: '/r', branch: 'b;#{x}', path: '/r-wt', base: 'a'.repeat(40), newBranch: true };
    await createSession(tmux.cli, { name: 'kept', command: ['cat'], createdAt: new Date().toISOString(), agent: 'codex', worktree });
    const kept = async (refresh = false) => (await listSessions(tmux.cli, { refresh })).find((s) => s.name === 'kept')!;
    expect(await kept()).toMatchObject({ isTether: true, agent: 'codex', worktree, description: null });
    await setUserOption(tmux.cli, 'kept', '@description', 'by tether');
    expect((await kept()).description).toBe('by tether');
    await tmux.tmux('set-option', '-t', '=kept:', '@description', 'by hand');
    expect((await kept(true)).description).toBe('by hand');
    expect((await kept()).worktree).toEqual(worktree);
    await killSession(tmux.cli, 'kept');
    expect((await listSessions(tmux.cli)).some((s) => s.name === 'kept')).toBe(false);
  });

  it('reports a dead agent pane with its exit status, the session kept', async () => {
    await createSession(tmux.cli, { name: 'dies', command: ['/bin/sh', '-c', 'exit 3'], createdAt: new Date().toISOString() });
    // tmux marks the pane dead a moment before it has the status, and under load tmux 3.3a can
    // miss the SIGCHLD that brings it: the daemon's link then nudges the server with one more
    // SIGCHLD (src/actors/session.actor.ts), and so does this test, on the server it started.
    const dead = await eventually(
      async () => {
        const s = (await listSessions(tmux.cli)).find((x) => x.name === 'dies');
        if (s?.paneDead && s.paneDeadStatus === null && s.serverPid !== null) process.kill(s.serverPid, 'SIGCHLD');
        return s?.paneDead && s.paneDeadStatus !== null ? s : null;
      },
      15_000,
      50,
      'the dead pane listed with its exit status',
    );
    expect(dead?.paneDeadStatus).toBe(3);
    await killSession(tmux.cli, 'dies');
  });

  it('kills by exact name; a missing session is a typed not-found error', async () => {
    await createSession(tmux.cli, { name: 'gone', command: ['cat'], createdAt: new Date().toISOString() });
    await createSession(tmux.cli, { name: 'gone-too', command: ['cat'], createdAt: new Date().toISOString() });
    expect(await hasSession(tmux.cli, 'gone')).toBe(true);
    await killSession(tmux.cli, 'gone');
    expect(await hasSession(tmux.cli, 'gone')).toBe(false);
    expect(await hasSession(tmux.cli, 'gone-too')).toBe(true);
    const err: unknown = await killSession(tmux.cli, 'gone').catch((e: unknown) => e);
    expect(err).toEqual(domainError('session-not-found'));
    expect(isNoSessionError(err)).toBe(true);
    await expect(readUserOption(tmux.cli, 'gone', '@created')).rejects.toThrow(domainError('session-not-found'));
    await expect(setUserOption(tmux.cli, 'gone', '@x', 'v')).rejects.toThrow(domainError('session-not-found'));
    await killSession(tmux.cli, 'gone-too');
  });

  it('answers sensibly when no server runs', async () => {
    const none = new TmuxCli({ bin: 'tmux', socketArgs: ['-S', join(tmux.dir, 'no-server.sock')] });
    expect(await listSessions(none)).toEqual([]);
    expect(await hasSession(none, 'x')).toBe(false);
    await expect(killSession(none, 'x')).rejects.toThrow(domainError('session-not-found'));
    expect(await readServerVersion(none.target)).toBeNull();
    expect(await readServerVersion(tmux.target)).toBe((await readTmuxVersion(tmux.target)).label);
  });
});

describe('user options on real tmux', () => {
  const value = fc
    .oneof(
      fc.string({ unit: 'binary', maxLength: 40 }),
      fc.string({
        unit: fc.constantFrom(';', '#', '{', '}', '$', '(', ')', '~', '"', "'", '\\', '\n', '\t', '\r', '\x1b', '\x1f', '-', ' ', 'é'),
        maxLength: 20,
      }),
    )
    .filter((s) => !s.includes('\0'));

  beforeAll(async () => {
    await createSession(tmux.cli, { name: 'opts', command: ['cat'], createdAt: new Date().toISOString() });
  });

  // About 140 tmux processes one after another: tens of seconds on a busy two-core machine.
  it('round-trips exactly through argv (set-option / show-options)', async () => {
    await fc.assert(
      fc.asyncProperty(value, async (v) => {
        await setUserOption(tmux.cli, 'opts', '@tether-test', v);
        expect(await readUserOption(tmux.cli, 'opts', '@tether-test')).toBe(v);
      }),
      { numRuns: 60 },
    );
    for (const v of ['', '\n', 'x;', 'x\\;', ';', '-t', '--', ' lead\n\ntrail\n', HOSTILE]) {
      await setUserOption(tmux.cli, 'opts', '@tether-test', v);
      expect(await readUserOption(tmux.cli, 'opts', '@tether-test')).toBe(v);
    }
  }, 180_000);

  it('round-trips exactly through control-mode command lines', async () => {
    const values = [...fc.sample(value, { numRuns: 80, seed: 7 }), '', HOSTILE, '-x', 'x;'];
    const name = (i: number): string => `@q-${i.toString(26).replace(/./g, (d) => String.fromCharCode(97 + parseInt(d, 26)))}`;
    await control(
      'opts',
      values.map((v, i) => buildControlCommand(['set-option', '-t', '=opts:', name(i), v])),
    );
    for (const [i, v] of values.entries()) expect(await readUserOption(tmux.cli, 'opts', name(i))).toBe(v);
  });

  it('tells unset from empty, and unsets', async () => {
    expect(await readUserOption(tmux.cli, 'opts', '@never-set')).toBeNull();
    await setUserOption(tmux.cli, 'opts', '@tether-test', '');
    expect(await readUserOption(tmux.cli, 'opts', '@tether-test')).toBe('');
    await unsetUserOption(tmux.cli, 'opts', '@tether-test');
    expect(await readUserOption(tmux.cli, 'opts', '@tether-test')).toBeNull();
    await unsetUserOption(tmux.cli, 'opts', '@tether-test');
  });

  it('refuses NUL and option names that are not ours', async () => {
    await expect(setUserOption(tmux.cli, 'opts', '@x', 'a\0b')).rejects.toThrow(domainError('invalid'));
    await expect(setUserOption(tmux.cli, 'opts', 'status', 'off')).rejects.toThrow(domainError('invalid'));
    await expect(readUserOption(tmux.cli, 'opts', '@X;')).rejects.toThrow(domainError('invalid'));
    expect(await tmux.tmux('show-options', '-t', '=opts:', 'status')).toBe('');
  });
});

describe('input on real tmux', () => {
  it('delivers literal bytes exactly: nothing is a command, a format, a variable or a key name', async () => {
    const { paneId, file } = await recorder('keys');
    const marker = join(tmux.dir, 'pwned');
    const text = Buffer.from(`a;kill-server\n#{pane_id} $HOME $(touch ${marker}) ~ Enter C-c \\; "x" 'y'\r\0é€\x1b[A`, 'utf8');
    await control('keys', sendKeysHexCommands(paneId, text));
    await recorded(file, text);
    expect(existsSync(marker)).toBe(false);
    expect(await hasSession(tmux.cli, 'keys')).toBe(true);
  });

  it('delivers every byte value, chunked, in order', async () => {
    const { paneId, file } = await recorder('bytes');
    const all = Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7 + (i >> 8)) & 0xff));
    const lines = sendKeysHexCommands(paneId, all, 1000);
    expect(lines).toHaveLength(5);
    await control('bytes', lines);
    await recorded(file, all);
  });

  it('sends named keys the way a terminal would, following the cursor-key mode', async () => {
    const names = [
      'up',
      'enter',
      'tab',
      'shift-tab',
      'ctrl-a',
      'f1',
      'f12',
      'ctrl-space',
      'backspace',
      'delete',
      'insert',
      'home',
      'end',
      'pageup',
      'pagedown',
      'ctrl-left',
      'escape',
      'space',
      'alt-x',
    ];
    const normal = await recorder('named');
    await control(
      'named',
      names.flatMap((n) => sendKeyCommands(normal.paneId, resolveKey(n)!)),
    );
    const expected = [
      '\x1b[A',
      '\r',
      '\t',
      '\x1b[Z',
      '\x01',
      '\x1bOP',
      '\x1b[24~',
      '\0',
      '\x7f',
      '\x1b[3~',
      '\x1b[2~',
      '\x1b[1~',
      '\x1b[4~',
      '\x1b[5~',
      '\x1b[6~',
      '\x1b[1;5D',
      '\x1b',
      ' ',
      '\x1bx',
    ];
    await recorded(normal.file, Buffer.from(expected.join(''), 'latin1'));

    const app = await recorder('named-app', "printf '\\033[?1h'; ");
    await control(
      'named-app',
      ['up', 'left'].flatMap((n) => sendKeyCommands(app.paneId, resolveKey(n)!)),
    );
    await recorded(app.file, Buffer.from('\x1bOA\x1bOD', 'latin1'));
  });

  const pasted = '-first;\r\nline2 #{pane_id} $HOME\x1b[201~ end\nlast;';
  const delivered = '-first;\rline2 #{pane_id} $HOME end\rlast;';

  it('pastes bracketed when the application asked for it, through a buffer it deletes', async () => {
    const { paneId, file } = await recorder('paste-on', "printf '\\033[?2004h'; ");
    await control('paste-on', pasteCommands(paneId, 'tether-paste-1', pasted));
    await recorded(file, Buffer.from(`\x1b[200~${delivered}\x1b[201~`, 'utf8'));
    expect(await tmux.tmux('list-buffers', '-F', '#{buffer_name}')).not.toContain('tether-paste-1');
  });

  it('pastes plain text, no stray escapes, when the application did not ask; large pastes arrive whole', async () => {
    const { paneId, file } = await recorder('paste-off');
    await control('paste-off', pasteCommands(paneId, 'tether-paste-2', pasted));
    await recorded(file, Buffer.from(delivered, 'utf8'));
    const big = Array.from({ length: 4000 }, (_, i) => `line ${i}: ;#{x}$y é\x1f`).join('\n');
    await control('paste-off', pasteCommands(paneId, 'tether-paste-3', big));
    await recorded(file, Buffer.from(delivered + big.replaceAll('\n', '\r'), 'utf8'));
  });

  it('builds nothing for an empty paste and refuses NUL', () => {
    expect(pasteCommands('%1', 'b', '')).toEqual([]);
    expect(pasteCommands('%1', 'b', '\x1b[201~')).toEqual([]);
    expect(() => pasteCommands('%1', 'b', 'a\0')).toThrow(domainError('invalid'));
    expect(() => pasteCommands('%1', 'b;c', 'a')).toThrow(domainError('invalid'));
  });
});
