/**
 * Opening a stream without a round trip: the position in the upgrade URL (`?lastSeq=`) gives
 * exactly what a `resume` message gives, at once; bad positions are refused before any upgrade;
 * and over TLS a reconnect resumes the TLS session (no certificate exchange), pin kept.
 * Real daemon, real tmux, real WebSocket clients.
 */
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { decodeChunkFrame } from '../../src/protocol/frames.js';
import { SessionStream } from '../../src/reference-client/index.js';
import { pinnedTlsOptions } from '../../src/reference-client/pinning.js';
import { watchOpening } from '../helpers/raw-socket.js';
import { expectSameScreen, screenOf } from '../helpers/screen.js';
import { Mirror } from '../helpers/stream.js';
import { eventually } from '../helpers/tmux.js';
import { useDaemon } from '../helpers/daemon-fixture.js';

const AGENT = `[agent]\ncommand = "/bin/sh"\ndefault_session = "pi-main"\n`;

/** What one raw socket got: its text frames, and the stream bytes after `from` up to where it is. */
function recorder(url: string, token: string, from: number | null) {
  const ws = new WebSocket(url, { headers: { authorization: `Bearer ${token}` } });
  const texts: { type: string; seq?: number; data?: string }[] = [];
  const bytes: Buffer[] = [];
  let at = from;
  ws.on('message', (data, isBinary) => {
    const buf = data as Buffer;
    if (!isBinary) {
      const frame = JSON.parse(buf.toString('utf8')) as { type: string; seq?: number; data?: string };
      texts.push(frame);
      if (frame.type === 'snapshot') at = frame.seq!;
      return;
    }
    const { seq, data: chunk } = decodeChunkFrame(buf);
    if (at === null || seq <= at) return;
    const start = seq - chunk.length;
    bytes.push(chunk.subarray(Math.max(0, at - start)));
    at = seq;
  });
  const { opened, status } = watchOpening(ws);
  return { ws, texts, opened, at: () => at, bytes: () => Buffer.concat(bytes), status };
}

describe('the position in the upgrade URL', () => {
  const fx = useDaemon(AGENT);
  let ws: string;
  const sockets: WebSocket[] = [];
  const open = (query: string, from: number | null) => {
    const r = recorder(`${ws}/sessions/pi-main/stream${query}`, fx.d.token, from);
    sockets.push(r.ws);
    return r;
  };

  beforeAll(() => {
    ws = fx.d.base.replace(/^http/, 'ws');
  });
  afterAll(() => {
    for (const s of sockets) s.terminate();
  });

  /** The daemon's count of captures taken while a pane was quiet (GET /health). */
  const warmCaptures = async () =>
    ((await (await fx.d.get('/health')).json()) as { snapshots: { warmCaptures: number } }).snapshots.warmCaptures;

  /** Prints a marker after some lines and returns the stream position once the pane is quiet. */
  async function quietPosition(marker: string): Promise<number> {
    const m = new Mirror(fx.d.base, fx.d.token, 'pi-main').connect();
    try {
      await eventually(() => m.received.some((r) => r.kind === 'snapshot'), 15_000, 25, 'the first snapshot');
      m.stream.sendKeys(`i=0; while [ $i -lt 40 ]; do echo "line-$i"; i=$((i+1)); done; echo ${marker}-$((6*7))\r`);
      await eventually(async () => (await m.screen()).text.includes(`${marker}-42`), 15_000, 25, `${marker}-42 on the screen`);
      // Quiet: the position stays put for a while (the shell printed its prompt).
      let last = -1;
      return (await eventually(
        async () => {
          const now = m.stream.lastSeq ?? -1;
          const same = now === last;
          last = now;
          await new Promise((r) => setTimeout(r, 200));
          return same && now > 0 && now;
        },
        15_000,
        0,
        'the pane to stay quiet',
      )) as number;
    } finally {
      m.close();
    }
  }

  it('?lastSeq=<n> gives the same bytes as a resume message, without the client sending anything', async () => {
    const end = await quietPosition('url-delta');
    const from = end - 300;
    const byUrl = open(`?lastSeq=${from}`, from);
    const byMessage = open('', from);
    expect(await byUrl.opened).toBe(true);
    expect(await byMessage.opened).toBe(true);
    byMessage.ws.send(JSON.stringify({ type: 'resume', lastSeq: from }));
    await eventually(() => byUrl.at() === end && byMessage.at() === end, 15_000, 25, 'both sockets to reach the quiet position');
    expect(byUrl.bytes().length).toBe(300);
    expect(byUrl.bytes().equals(byMessage.bytes())).toBe(true);
    // A delta: no snapshot for either, and session-meta came first.
    for (const r of [byUrl, byMessage]) {
      expect(r.texts.some((t) => t.type === 'snapshot')).toBe(false);
      expect(r.texts[0]?.type).toBe('session-meta');
    }
  });

  it('?lastSeq=null and a stale position give the same snapshot as the message does', async () => {
    const end = await quietPosition('url-snap');
    for (const [query, message] of [
      ['?lastSeq=null', null],
      ['?lastSeq=1', 1],
    ] as const) {
      const warmBefore = await warmCaptures();
      const byUrl = open(query, null);
      const byMessage = open('', null);
      expect(await byMessage.opened).toBe(true);
      byMessage.ws.send(JSON.stringify({ type: 'resume', lastSeq: message }));
      await eventually(
        () => byUrl.texts.some((t) => t.type === 'snapshot') && byMessage.texts.some((t) => t.type === 'snapshot'),
        15_000,
        25,
        `a snapshot on both sockets (${query})`,
      );
      const a = byUrl.texts.find((t) => t.type === 'snapshot')!;
      const b = byMessage.texts.find((t) => t.type === 'snapshot')!;
      expect(a.seq).toBe(end);
      expect(b.seq).toBe(end);
      // The same position draws the same screen, however each snapshot was made.
      const [sa, sb] = [await screenOf([Buffer.from(a.data!, 'base64')]), await screenOf([Buffer.from(b.data!, 'base64')])];
      expectSameScreen(sa, sb, 40);
      expect(sa.text.some((row) => row.includes('url-snap-42'))).toBe(true);
      // And the same bytes, unless the pane's quiet capture landed between the two (up to 5 s
      // after the output, docs/architecture.md "Warm snapshots"): then one is the earlier capture
      // plus the ring's bytes after it, the other the new capture.
      if ((await warmCaptures()) === warmBefore) expect(a.data).toBe(b.data);
    }
  });

  it('a snapshot over a long history comes screen first: two frames at one position, the screen, then everything', async () => {
    // About 120 KB of history, far more than the screen.
    const m = new Mirror(fx.d.base, fx.d.token, 'pi-main').connect();
    try {
      await eventually(() => m.received.some((r) => r.kind === 'snapshot'), 15_000, 25, 'the first snapshot');
      m.stream.sendKeys(
        'i=0; while [ $i -lt 1500 ]; do echo "history line $i with some words in it"; i=$((i+1)); done; echo long-$((6*7))\r',
      );
      await eventually(async () => (await m.screen()).text.includes('long-42'), 15_000, 25, 'long-42 on the screen');
    } finally {
      m.close();
    }
    const end = await quietPosition('screen-first');
    // Until the pane's quiet capture covers the long output, a snapshot is that capture plus the
    // output as it came: a client then gets one frame. Until it covers what came after the long
    // output too (quietPosition's forty lines: the capture is taken once the pane has been quiet
    // for WARM_QUIET_MS, and the position is read quiet sooner), the screen frame is an earlier
    // capture plus those lines, which scroll into its history. Ask again until the capture is there.
    const fresh = (await eventually(
      async (): Promise<ReturnType<typeof recorder> | false> => {
        const r = open('?lastSeq=null', null);
        await eventually(() => r.texts.some((t) => t.type === 'snapshot'), 15_000, 10, 'a snapshot frame');
        const first = r.texts.find((t) => t.type === 'snapshot')!;
        const tail = first.data!.length <= 32 * 1024 && (await screenOf([Buffer.from(first.data!, 'base64')])).scrollback.length >= 10;
        if (first.data!.length > 32 * 1024 || tail) {
          r.ws.terminate();
          return false;
        }
        await eventually(() => r.texts.filter((t) => t.type === 'snapshot').length === 2, 15_000, 10, 'the second snapshot frame');
        return r;
      },
      20_000,
      500,
      'a snapshot that comes screen first',
    )) as ReturnType<typeof recorder>;
    const [screen, full] = fresh.texts.filter((t) => t.type === 'snapshot');
    expect(screen!.seq).toBe(end);
    expect(full!.seq).toBe(end);
    const screenBytes = Buffer.from(screen!.data!, 'base64');
    const fullBytes = Buffer.from(full!.data!, 'base64');
    expect(screenBytes.length * 5).toBeLessThan(fullBytes.length);
    const a = await screenOf([screenBytes]);
    const b = await screenOf([fullBytes]);
    // The same screen, cursor and modes; only the history differs.
    expect(a.text).toEqual(b.text);
    expect(a.attrs).toEqual(b.attrs);
    expect(a.cursor).toEqual(b.cursor);
    expect(a.modes).toEqual(b.modes);
    // The screen alone, its history under ten lines, is what the loop above waited for (within its bound).
    expect(b.scrollback.some((l) => l.includes('history line 100 '))).toBe(true);
  });

  it('refuses a malformed position before any upgrade, and the session is untouched', async () => {
    // The list less its `changes`: the summary of the files in the session's tree is computed in the
    // background once the list is first asked for, whatever happens to the session meanwhile.
    const sessionsNow = async () =>
      ((await (await fx.d.get('/sessions')).json()) as Record<string, unknown>[]).map(({ changes: _, ...session }) => session);
    const before = await sessionsNow();
    for (const query of ['?lastSeq=abc', '?lastSeq=-1', '?lastSeq=1e3', '?lastSeq=9007199254740993', '?lastSeq=', '?lastSeq=1&x=2']) {
      const r = open(query, null);
      expect(await r.opened, query).toBe(false);
      await eventually(() => r.status() === 400, 15_000, 25, `400 for ${query}`);
    }
    const res = await fx.d.get('/sessions/pi-main/stream?lastSeq=abc');
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: 'bad-request', message: expect.stringMatching(/lastSeq/) as unknown });
    const side = recorder(`${ws}/sessions/pi-main/side?lastSeq=5`, fx.d.token, null);
    sockets.push(side.ws);
    expect(await side.opened).toBe(false);
    await eventually(() => side.status() === 400, 15_000, 25, '400 for a position on the side channel');
    expect(await sessionsNow()).toEqual(before);
  });
});

describe('a reconnect over TLS', () => {
  const fx = useDaemon(`tls = true\n${AGENT}`);

  it('resumes the TLS session (pinned), and the screen carries on', async () => {
    const run = JSON.parse(readFileSync(join(fx.home.dataDir, 'run', 'daemon.json'), 'utf8')) as { port: number; fingerprint: string };
    const tls = await pinnedTlsOptions('127.0.0.1', run.port, run.fingerprint);
    const stream = new SessionStream({ baseUrl: `https://127.0.0.1:${run.port}`, token: fx.d.token, session: 'pi-main', tls });
    const opened: boolean[] = [];
    stream.on('status', (s) => {
      if (s === 'open') opened.push(stream.tlsResumed);
    });
    let text = '';
    stream.on('data', (b) => (text += b.toString('latin1')));
    stream.connect();
    try {
      await eventually(() => opened.length === 1 && stream.lastSeq !== null, 15_000, 25, 'the first connection and its snapshot');
      expect(opened[0]).toBe(false);
      // Wait for the session ticket TLS 1.3 sends after the handshake, then come back to the foreground.
      await eventually(() => stream.tlsTicketHeld, 15_000, 25, 'a TLS session ticket');
      stream.foreground();
      await eventually(() => opened.length === 2, 15_000, 25, 'the reconnection');
      expect(opened[1]).toBe(true);
      stream.sendKeys('echo resumed-$((6*7))\r');
      await eventually(() => text.includes('resumed-42'), 15_000, 25, 'the echo after the resumed connection');
    } finally {
      stream.close();
    }
  });
});

/**
 * A tmux program that holds `new-session` while a flag file exists: tmux is slow to create a
 * session for that moment (a loaded machine), so the session is known before it has a stream.
 */
function slowCreatingTmux(): { dir: string; flag: string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'tether-slow-tmux-'));
  const flag = join(dir, 'hold');
  const real = ['/usr/bin/tmux', '/usr/local/bin/tmux', '/bin/tmux'].find((p) => existsSync(p)) ?? 'tmux';
  writeFileSync(
    join(dir, 'tmux'),
    `#!/bin/sh\nfor a in "$@"; do\n  if [ "$a" = new-session ]; then\n    while [ -e '${flag}' ]; do sleep 0.05; done\n  fi\ndone\nexec '${real}' "$@"\n`,
  );
  chmodSync(join(dir, 'tmux'), 0o755);
  return { dir, flag, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

describe('a stream that cannot be opened yet', () => {
  const slow = slowCreatingTmux();
  const fx = useDaemon(AGENT, { extraEnv: { PATH: `${slow.dir}:${process.env.PATH ?? ''}` }, after: () => slow.cleanup() });

  /** One raw socket: its text frames and its close code (null while open or when refused over HTTP). */
  function attempt(session: string): Promise<{ status: number | null; texts: { type: string; code?: string }[]; close: number | null }> {
    const ws = new WebSocket(`${fx.d.base.replace(/^http/, 'ws')}/sessions/${session}/stream?lastSeq=null`, {
      headers: { authorization: `Bearer ${fx.d.token}` },
    });
    const texts: { type: string; code?: string }[] = [];
    return new Promise((resolve) => {
      ws.on('message', (data, isBinary) => {
        if (!isBinary) texts.push(JSON.parse((data as Buffer).toString('utf8')) as { type: string; code?: string });
      });
      ws.on('unexpected-response', (_req, res) => {
        resolve({ status: res.statusCode ?? null, texts, close: null });
        ws.terminate();
      });
      ws.on('error', () => undefined);
      ws.on('close', (code) => resolve({ status: 101, texts, close: code }));
    });
  }

  it('is refused as stream-unavailable with close 1013 while tmux creates the session, never as ended; the reference client gets it once made', async () => {
    writeFileSync(slow.flag, '');
    const created = fx.json('POST', '/sessions', { name: 'later' });
    let reference: SessionStream | null = null;
    try {
      // Known to the daemon (no 404 any more) but tmux has not made it yet.
      const refused = (await eventually(
        async () => {
          const r = await attempt('later');
          return r.status === 101 ? r : null;
        },
        15_000,
        50,
        'the upgrade of a stream on the session being created',
      ))!;
      expect(refused.texts).toEqual([
        { type: 'error', code: 'stream-unavailable', message: expect.stringMatching(/try again/) as unknown },
      ]);
      expect(refused.close).toBe(1013);

      reference = new SessionStream({ baseUrl: fx.d.base, token: fx.d.token, session: 'later', retryCeilingMs: 500 });
      const errors: string[] = [];
      const statuses: string[] = [];
      reference.on('errorFrame', (f) => errors.push(f.code));
      reference.on('status', (s) => statuses.push(s));
      let text = '';
      reference.on('data', (b) => (text += b.toString('latin1')));
      reference.on('snapshot', (b) => (text = b.toString('latin1')));
      reference.connect();
      await eventually(() => errors.includes('stream-unavailable'), 15_000, 25, 'the reference client to be told to try again');
      expect(existsSync(slow.flag)).toBe(true); // still being created

      rmSync(slow.flag);
      expect((await created).status).toBe(201);
      const stream = reference;
      await eventually(() => stream.status === 'open' && stream.lastSeq !== null, 15_000, 25, 'the reference client streaming the session');
      stream.sendKeys('echo made-$((6*7))\r');
      await eventually(() => text.includes('made-42'), 15_000, 25, 'the echo in the new session');
      expect(statuses).not.toContain('ended');
      expect(errors).not.toContain('session-ended');
    } finally {
      reference?.close();
      rmSync(slow.flag, { force: true });
      await created.catch(() => undefined);
    }
  });
});
