/**
 * The stream and the side channel against a real daemon, real tmux and real WebSocket
 * clients: what a client gets first, input over the socket, bad frames, the side channel,
 * and the end of a session.
 */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { eventually } from '../helpers/tmux.js';
import { useDaemon } from '../helpers/daemon-fixture.js';
import { watchOpening } from '../helpers/raw-socket.js';
import type { Mirror } from '../helpers/stream.js';

const AGENT = `[agent]\ncommand = "/bin/sh"\ndefault_session = "pi-main"\n`;

/** A raw WebSocket on a path, collecting text frames, binary frame count and the close. */
function rawSocket(base: string, path: string, token: string | null) {
  const url = base.replace(/^http/, 'ws') + path;
  const ws = new WebSocket(url, token === null ? {} : { headers: { authorization: `Bearer ${token}` } });
  const texts: { type: string; [k: string]: unknown }[] = [];
  let binaries = 0;
  let closed: { code: number; reason: string } | null = null;
  ws.on('message', (data, isBinary) => {
    if (isBinary) binaries++;
    else texts.push(JSON.parse((data as Buffer).toString('utf8')) as { type: string });
  });
  ws.on('close', (code, reason) => (closed = { code, reason: reason.toString() }));
  const { opened, status } = watchOpening(ws);
  return {
    ws,
    opened,
    texts,
    binaries: () => binaries,
    closed: () => closed,
    status,
    send: (v: unknown) => ws.send(typeof v === 'string' ? v : JSON.stringify(v)),
  };
}

describe('stream and side channel', () => {
  const fx = useDaemon(AGENT);
  const { mirror, json } = fx;

  it('a fresh client gets session-meta, then a snapshot, then live output; its keys reach the shell', async () => {
    const m = mirror('pi-main');
    await eventually(() => m.kinds().includes('snapshot'), 15_000);
    expect(m.kinds()[0]).toBe('meta');
    expect(m.received[0]).toMatchObject({ kind: 'meta', frame: { name: 'pi-main' } });
    m.stream.sendKeys('echo tether-$((6*7))');
    m.stream.sendKey('enter');
    await eventually(async () => (await m.text()).includes('tether-42'), 15_000);
    // The pane itself shows it: an ordinary tmux client sees the same input.
    await eventually(async () => (await fx.tmux.capture('=pi-main:')).includes('tether-42'), 15_000);
    expect(m.kinds().slice(m.kinds().indexOf('snapshot') + 1)).toContain('data');
  });

  it('input over the socket reaches an ordinary tmux client attached to the same session', async () => {
    // A person at the desk: a real tmux client on a terminal (script gives it one).
    const attached = spawn('script', ['-qfc', `tmux -S ${fx.tmux.socket} attach -t =pi-main`, '/dev/null'], {
      stdio: ['pipe', 'pipe', 'ignore'],
      env: { ...process.env, TERM: 'xterm-256color', TMUX: '' },
    });
    let seen = '';
    attached.stdout.on('data', (d: Buffer) => (seen += d.toString('utf8')));
    try {
      await eventually(async () => (await fx.tmux.tmux('list-clients', '-t', '=pi-main')).includes('pi-main'), 15_000);
      const m = mirror('pi-main');
      await eventually(() => m.kinds().includes('snapshot'), 15_000);
      m.stream.sendKeys('echo desk-$((8*8))');
      m.stream.sendKey('enter');
      await eventually(() => seen.includes('desk-64'), 15_000);
      await eventually(async () => (await m.text()).includes('desk-64'), 15_000);
    } finally {
      attached.kill('SIGTERM');
    }
  });

  /** Waits until the shell is back at its prompt, `$` (or `#` as root): the tty drops input typed ahead of a ^C. */
  const atPrompt = () =>
    eventually(
      async () => {
        const command = (await fx.tmux.tmux('display', '-p', '-t', '=pi-main:', '#{pane_current_command}')).trim();
        const lines = (await fx.tmux.capture('=pi-main:')).trimEnd().split('\n');
        return command === 'sh' && /^[$#]$/.test(lines[lines.length - 1] ?? '');
      },
      15_000,
      50,
      'the shell back at its prompt',
    );

  it('paste is wrapped only while the application has bracketed paste on', async () => {
    const m = mirror('pi-main');
    await eventually(() => m.kinds().includes('snapshot'), 15_000);
    m.stream.sendKeys("printf '\\033[?2004h'; cat -v\r");
    await eventually(() => m.stream.paste.on, 15_000);
    m.stream.sendText('pasted; $(x) #{y}');
    m.stream.sendKeys('\r');
    await eventually(async () => (await fx.tmux.capture('=pi-main:')).includes('^[[200~pasted; $(x) #{y}^[[201~'), 15_000);
    m.stream.sendKey('ctrl-c');
    await atPrompt();
    m.stream.sendKeys("printf '\\033[?2004l'; cat -v\r");
    await eventually(() => !m.stream.paste.on, 15_000);
    await eventually(
      async () => (await fx.tmux.tmux('display', '-p', '-t', '=pi-main:', '#{pane_current_command}')).trim() === 'cat',
      15_000,
    );
    m.stream.sendPaste('plain paste'); // a paste frame, even: no stray escape bytes
    m.stream.sendKeys('\r');
    await eventually(async () => /\nplain paste\n/.test(await fx.tmux.capture('=pi-main:')), 15_000);
    expect(await fx.tmux.capture('=pi-main:')).not.toMatch(/\^\[\[200~plain/);
    m.stream.sendKey('ctrl-c');
    await atPrompt();
  });

  it('answers bad frames with error frames and stays usable', async () => {
    const s = rawSocket(fx.d.base, '/sessions/pi-main/stream', fx.d.token);
    expect(await s.opened).toBe(true);
    s.send({ type: 'resume', lastSeq: null });
    s.send('{not json');
    s.send({ type: 'resume', lastSeq: 'x' });
    s.send({ type: 'teleport' });
    s.send({ type: 'keys', data: 5 });
    s.send({ type: 'key', name: 'hyperspace' });
    s.ws.send(Buffer.from([1, 2, 3]), { binary: true });
    s.send({ type: 'keys', data: 'echo still-$((2+3))\r' });
    await eventually(() => s.texts.filter((t) => t.type === 'error').length >= 6, 15_000);
    const errors = s.texts.filter((t) => t.type === 'error');
    // Parse errors answer at once; an unknown key is found when the input is handled, so it
    // may come after a later frame's answer.
    expect(errors.map((e) => e.code).sort()).toEqual(['bad-frame', 'bad-frame', 'bad-frame', 'bad-frame', 'bad-frame', 'unknown-key']);
    const messages = errors.map((e) => String(e.message));
    expect(messages.some((m) => /lastSeq/.test(m))).toBe(true);
    expect(messages.some((m) => /data/.test(m))).toBe(true);
    expect(messages.some((m) => /binary/.test(m))).toBe(true);
    await eventually(async () => (await fx.tmux.capture('=pi-main:')).includes('still-5'), 15_000);
    expect(s.closed()).toBeNull();
    s.ws.close();
  });

  it('refuses an unknown session (404) and a missing token (401) before any upgrade', async () => {
    const unknown = rawSocket(fx.d.base, '/sessions/nope/stream', fx.d.token);
    expect(await unknown.opened).toBe(false);
    await eventually(() => unknown.status() === 404, 15_000);
    const noToken = rawSocket(fx.d.base, '/sessions/pi-main/stream', null);
    expect(await noToken.opened).toBe(false);
    await eventually(() => noToken.status() === 401, 15_000);
  });

  it('the side channel gets meta and no terminal bytes, and answers messages with an error', async () => {
    const side = rawSocket(fx.d.base, '/sessions/pi-main/side', fx.d.token);
    expect(await side.opened).toBe(true);
    side.send({ type: 'resume', lastSeq: null });
    side.send('garbage');
    const main = mirror('pi-main');
    await eventually(() => main.kinds().includes('snapshot'), 15_000);
    main.stream.sendKeys('echo side-$((1+1))\r');
    await eventually(async () => (await main.text()).includes('side-2'), 15_000);
    await eventually(() => side.texts.filter((t) => t.type === 'error').length === 2, 15_000);
    expect(side.texts[0]).toMatchObject({ type: 'session-meta', name: 'pi-main' });
    expect(side.binaries()).toBe(0);
    expect(side.closed()).toBeNull();
    side.ws.close();
  });

  it('sends a new session-meta when the description changes', async () => {
    const m = mirror('pi-main');
    await eventually(() => m.kinds().includes('snapshot'), 15_000);
    expect((await json('PATCH', '/sessions/pi-main', { description: 'fix the build' })).status).toBe(200);
    await eventually(() => m.received.some((r) => r.kind === 'meta' && r.frame.description === 'fix the build'), 15_000);
  });

  it(
    'a description set from a shell, behind tether, reaches a client that connects and the one already there',
    { timeout: 60_000 },
    async () => {
      const first = mirror('pi-main');
      await eventually(() => first.kinds().includes('snapshot'), 15_000);
      const description = 'set from a shell; $(x) #{y}';
      await fx.tmux.tmux('set-option', '-t', '=pi-main:', '@description', description);
      const metasOf = (m: Mirror) => m.received.flatMap((r) => (r.kind === 'meta' ? [r.frame] : []));
      // A client connecting gets the meta tether remembers at once; tmux is read again a moment
      // later (within 10 s of the last such read), and a change goes to every client of the session.
      const again = mirror('pi-main');
      await eventually(() => metasOf(again).some((f) => f.description === description), 30_000);
      await eventually(() => metasOf(first).some((f) => f.description === description), 30_000);
      expect(again.errors()).toEqual([]);
    },
  );

  /** Creates session `name` and opens a stream client (once it has its snapshot) and a side socket to it. */
  async function newSessionWithClients(name: string) {
    expect((await json('POST', '/sessions', { name })).status).toBe(201);
    const m = mirror(name);
    const side = rawSocket(fx.d.base, `/sessions/${name}/side`, fx.d.token);
    await eventually(() => m.kinds().includes('snapshot'), 15_000);
    expect(await side.opened).toBe(true);
    return { m, side };
  }

  it('closes stream and side clients with session-ended / 4404 when the session is deleted', async () => {
    const { m, side } = await newSessionWithClients('doomed');
    expect((await json('DELETE', '/sessions/doomed')).status).toBe(204);
    await eventually(() => m.stream.status === 'ended', 15_000);
    expect(m.errors().map((e) => e.code)).toContain('session-ended');
    await eventually(() => side.closed()?.code === 4404, 15_000);
    expect(side.texts.some((t) => t.type === 'error' && t.code === 'session-ended')).toBe(true);
  });

  it('keeps clients open when the pane dies: session-meta says exited, and a delete still ends them with 4404', async () => {
    const { m, side } = await newSessionWithClients('mortal');
    m.stream.sendKeys('exit\r');
    const exited = (frame: { type: string; state?: unknown; exitStatus?: unknown }) =>
      frame.type === 'session-meta' && frame.state === 'exited' && frame.exitStatus === 0;
    await eventually(() => m.received.some((r) => r.kind === 'meta' && exited(r.frame)), 15_000);
    await eventually(() => side.texts.some(exited), 15_000);
    expect(m.stream.status).toBe('open');
    expect(m.errors()).toEqual([]);
    expect(side.closed()).toBeNull();
    expect((await json('DELETE', '/sessions/mortal')).status).toBe(204);
    await eventually(() => m.stream.status === 'ended', 15_000);
    expect(m.errors().map((e) => e.code)).toContain('session-ended');
    await eventually(() => side.closed()?.code === 4404, 15_000);
  });
});
