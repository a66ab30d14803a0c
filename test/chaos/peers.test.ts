/**
 * Peers that try to hold the daemon's sockets (docs/reliability.md "Peers that hold sockets"),
 * with real sockets from several loopback addresses (127.0.0.2, .3 ... stand for other
 * machines on the network): every stage a connection can stall in is closed within its bound,
 * connections without a token are capped per address and in total, and the person's own phone
 * connects, resumes and echoes all the while. The daemons here run with short bounds (injected,
 * as `DaemonIo.peerLimits`) so each stall is seen in seconds; the assertions wait with generous
 * bounds and never time anything.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect as tcpConnect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TokenStore } from '../../src/auth/token-store.js';
import { SessionStream, pinnedTlsOptions, type PinnedTlsOptions } from '../../src/reference-client/index.js';
import type { HealthReport } from '../../src/transport/handles.js';
import { buildServer } from '../../src/transport/server.js';
import { useInProcessDaemon } from '../helpers/daemon-fixture.js';
import { makeCertificate } from '../helpers/in-process-daemon.js';
import { eventually } from '../helpers/tmux.js';

const AGENT = `tls = true\n[agent]\ncommand = "/bin/sh"\ndefault_session = "peers"\n`;
/** How long a test waits for a hostile connection to be closed: many times any bound here. */
const CLOSED_WITHIN_MS = 30_000;

/** How a connection ended, seen from the peer. */
interface Ending {
  /** Whether the TLS handshake completed before the end. */
  readonly secured: boolean;
  /** What the daemon wrote, as text. */
  readonly received: string;
}

/** A connection and how it ends (never an unhandled error); `open` while it is still up. */
interface Watched {
  readonly socket: Socket;
  readonly ended: Promise<Ending>;
  readonly open: () => boolean;
  /** What the daemon wrote so far. */
  readonly text: () => string;
  readonly secured: Promise<boolean>;
}

function watch(socket: Socket, tls: boolean): Watched {
  let received = '';
  let secured = false;
  let closed = false;
  socket.on('data', (d: Buffer) => (received += d.toString('latin1')));
  socket.on('error', () => undefined);
  const securedP = new Promise<boolean>((resolve) => {
    if (!tls) resolve(false);
    socket.once('secureConnect', () => {
      secured = true;
      resolve(true);
    });
    socket.once('close', () => resolve(false));
  });
  const ended = new Promise<Ending>((resolve) =>
    socket.once('close', () => {
      closed = true;
      resolve({ secured, received });
    }),
  );
  return { socket, ended, open: () => !closed, text: () => received, secured: securedP };
}

/** A bare TCP connection from `from`. */
const tcp = (port: number, from = '127.0.0.1'): Watched => watch(tcpConnect({ host: '127.0.0.1', port, localAddress: from }), false);
/** A TLS connection from `from` (the daemon's certificate accepted unchecked: these are not the phone). */
const tls = (port: number, from = '127.0.0.1'): Watched =>
  watch(tlsConnect({ socket: tcpConnect({ host: '127.0.0.1', port, localAddress: from }), rejectUnauthorized: false }), true);

/** Waits until the daemon closed the connection; fails, saying what, if it never does. */
async function closedByDaemon(w: Watched, what: string): Promise<Ending> {
  await eventually(() => !w.open(), CLOSED_WITHIN_MS, 50, `the daemon to close ${what}`);
  return w.ended;
}

/** The phone: the reference client pinned to the daemon's certificate, recording what it got. */
class Phone {
  readonly stream: SessionStream;
  readonly statuses: string[] = [];
  text = '';
  metas = 0;

  constructor(base: string, token: string, pinned: PinnedTlsOptions) {
    this.stream = new SessionStream({ baseUrl: base, token, session: 'peers', tls: pinned });
    this.stream.on('status', (s) => this.statuses.push(s));
    this.stream.on('meta', () => this.metas++);
    this.stream.on('snapshot', (bytes) => (this.text += bytes.toString('latin1')));
    this.stream.on('data', (bytes) => (this.text += bytes.toString('latin1')));
  }

  /**
   * Wakes as a phone does: a new connection carrying the position it holds (none the first
   * time), resumed once the session's meta and a position are there; then types and waits for
   * the echo.
   */
  async wake(tag: string): Promise<void> {
    if (this.stream.status !== 'closed') this.stream.close();
    const metas = this.metas;
    this.stream.connect();
    await eventually(
      () => this.stream.status === 'open' && this.metas > metas && this.stream.lastSeq !== null,
      20_000,
      25,
      `the phone's stream to open and resume (${tag})`,
    );
    this.stream.sendKeys(`echo ${tag}-$((6*7))\r`);
    await eventually(() => this.text.includes(`${tag}-42`), 20_000, 25, `the echo of ${tag} on the phone`);
  }

  close(): void {
    this.stream.close();
  }
}

function runFile(fx: { readonly home: { readonly dataDir: string } }): { port: number; fingerprint: string } {
  return JSON.parse(readFileSync(join(fx.home.dataDir, 'run', 'daemon.json'), 'utf8')) as { port: number; fingerprint: string };
}

describe('every stage a connection can stall in is bounded (TLS daemon, short bounds)', () => {
  const limits = {
    handshakeMs: 1000,
    headersMs: 1000,
    unauthenticatedMs: 3000,
    bodyWindowMs: 1500,
    bodyMinBytes: 1024,
    keepAliveMs: 1000,
    checkIntervalMs: 200,
  };
  const fx = useInProcessDaemon(AGENT, { parts: { peerLimits: limits }, prepare: ({ home }) => makeCertificate(home) });
  let port: number;
  let pinned: PinnedTlsOptions;
  const token = () => fx.d.token;

  beforeAll(async () => {
    port = runFile(fx).port;
    pinned = await pinnedTlsOptions('127.0.0.1', port, runFile(fx).fingerprint);
  });

  it('closes a connection that never starts TLS, and one whose handshake never ends', async () => {
    const silent = tcp(port, '127.0.0.2');
    const half = tcp(port, '127.0.0.2');
    // The first bytes of a ClientHello, then nothing.
    half.socket.write(Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03]));
    expect(await closedByDaemon(silent, 'a silent TCP connection')).toEqual({ secured: false, received: '' });
    expect(await closedByDaemon(half, 'a half-finished TLS handshake')).toEqual({ secured: false, received: '' });
  });

  it('closes a connection after TLS that sends half a request, dribbling a byte at a time, with a 408', async () => {
    const half = tls(port, '127.0.0.3');
    expect(await half.secured).toBe(true);
    half.socket.write('GET /health HTTP/1.1\r\nHost: x\r\n');
    const dribble = setInterval(() => half.open() && half.socket.write('X'), 100);
    try {
      const ending = await closedByDaemon(half, 'half a request');
      expect(ending.received).toMatch(/^HTTP\/1\.1 408 /);
    } finally {
      clearInterval(dribble);
    }
  });

  it('answers a request without a token with a 401 and closes its connection, its body unread', async () => {
    const asks = tls(port, '127.0.0.3');
    expect(await asks.secured).toBe(true);
    // Keep-alive is HTTP/1.1's default; the body is announced and never sent.
    asks.socket.write('POST /sessions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{');
    const ending = await closedByDaemon(asks, 'a refused request');
    expect(ending.received).toMatch(/^HTTP\/1\.1 401 /);
    expect(ending.received).toMatch(/\r\nconnection: close\r\n/i);
  });

  it('closes an unauthenticated request whose body dribbles (the pairing route reads a body without a token)', async () => {
    const pair = tls(port, '127.0.0.4');
    expect(await pair.secured).toBe(true);
    pair.socket.write('POST /pair HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n{');
    const dribble = setInterval(() => pair.open() && pair.socket.write(' '), 100);
    try {
      const ending = await closedByDaemon(pair, 'a pairing request whose body dribbles');
      expect(ending.received).toBe('');
    } finally {
      clearInterval(dribble);
    }
  });

  it('closes an authenticated upload whose body only dribbles, and keeps one that makes progress', async () => {
    const slow = tls(port, '127.0.0.5');
    expect(await slow.secured).toBe(true);
    slow.socket.write(
      `POST /sessions/peers/files?name=dribbled.txt HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token()}\r\nContent-Type: text/plain\r\nContent-Length: 100000\r\n\r\nx`,
    );
    const dribble = setInterval(() => slow.open() && slow.socket.write('x'), 100);
    try {
      const ending = await closedByDaemon(slow, 'an upload that only dribbles');
      expect(ending.received).not.toMatch(/^HTTP\/1\.1 201 /);
    } finally {
      clearInterval(dribble);
    }
    // 64 KiB every 100 ms for about 2 s: well over bodyMinBytes in every window, longer than one.
    const steady = tls(port, '127.0.0.5');
    expect(await steady.secured).toBe(true);
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    const chunks = 20;
    steady.socket.write(
      `POST /sessions/peers/files?name=steady.txt HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token()}\r\nContent-Type: text/plain\r\nContent-Length: ${chunk.length * chunks}\r\nConnection: close\r\n\r\n`,
    );
    for (let i = 0; i < chunks && steady.open(); i++) {
      steady.socket.write(chunk);
      await new Promise((r) => setTimeout(r, 100));
    }
    const done = await closedByDaemon(steady, 'the steady upload, answered');
    expect(done.received).toMatch(/^HTTP\/1\.1 201 /);
  });

  it('closes an idle kept-alive connection after its answer', async () => {
    const kept = tls(port, '127.0.0.6');
    expect(await kept.secured).toBe(true);
    kept.socket.write(`GET /health HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token()}\r\n\r\n`);
    const ending = await closedByDaemon(kept, 'an idle kept-alive connection');
    expect(ending.received).toMatch(/^HTTP\/1\.1 200 /);
    expect(ending.received).toMatch(/\r\nkeep-alive: timeout=1\r\n/i);
  });

  it("keeps the phone's stream open past every bound of a connection without a token", async () => {
    const phone = new Phone(`https://127.0.0.1:${port}`, token(), pinned);
    try {
      await phone.wake('first');
      // A connection opened after the phone's, closed only by the unauthenticated bound: when it
      // is gone, the phone's connection has lived longer than that bound.
      const waiting = tls(port, '127.0.0.7');
      expect(await waiting.secured).toBe(true);
      waiting.socket.write('POST /pair HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n{');
      await closedByDaemon(waiting, 'a pairing request never finished');
      phone.stream.sendKeys('echo still-$((6*7))\r');
      await eventually(() => phone.text.includes('still-42'), 20_000, 25, 'the echo on the same stream');
      expect(phone.statuses).toEqual(['connecting', 'open']);
    } finally {
      phone.close();
    }
  });
});

describe('connections without a token are capped per address and in total; the phone gets in', () => {
  // Stage bounds long enough that nothing here is closed by one: only the caps act.
  const limits = {
    handshakeMs: 120_000,
    headersMs: 120_000,
    unauthenticatedMs: 120_000,
    upgradeMs: 120_000,
    keepAliveMs: 120_000,
    perAddress: 3,
    perAddressWhenFull: 2,
    unauthenticated: 6,
    authenticated: 8,
  };
  const fx = useInProcessDaemon(AGENT, { parts: { peerLimits: limits }, prepare: ({ home }) => makeCertificate(home) });
  let port: number;
  let pinned: PinnedTlsOptions;
  const held: Watched[] = [];

  beforeAll(async () => {
    port = runFile(fx).port;
    pinned = await pinnedTlsOptions('127.0.0.1', port, runFile(fx).fingerprint);
  });
  afterAll(() => {
    for (const w of held) w.socket.destroy();
  });

  /** A connection that finished its handshake (so the daemon counts it) and then says nothing. */
  async function silentAfterTls(from: string): Promise<Watched> {
    const w = tls(port, from);
    held.push(w);
    expect(await w.secured, `a handshake from ${from}`).toBe(true);
    return w;
  }

  it('refuses the connection over an address cap at once, before any handshake, while the phone connects, resumes and echoes', async () => {
    const first = [await silentAfterTls('127.0.0.2'), await silentAfterTls('127.0.0.2'), await silentAfterTls('127.0.0.2')];
    const excess = tls(port, '127.0.0.2');
    held.push(excess);
    expect(await excess.secured).toBe(false);
    expect(await closedByDaemon(excess, 'the connection over the cap')).toEqual({ secured: false, received: '' });
    expect(first.every((w) => w.open())).toBe(true);

    const phone = new Phone(`https://127.0.0.1:${port}`, fx.d.token, pinned);
    try {
      await phone.wake('capped');
      // Away and back: a new connection resuming from the position it held.
      await phone.wake('resumed');
    } finally {
      phone.close();
    }
    expect(first.every((w) => w.open())).toBe(true);
  });

  it('with the unauthenticated total full, refuses more from a busy address and makes room for the phone', async () => {
    // .2 holds three from the test before; .3 two and .4 one more: six, the total.
    await silentAfterTls('127.0.0.3');
    await silentAfterTls('127.0.0.3');
    await silentAfterTls('127.0.0.4');
    const flood = held.filter((w) => w.open());
    expect(flood).toHaveLength(6);
    // .3 already holds perAddressWhenFull: refused at once, and nobody made room for it.
    const more = tls(port, '127.0.0.3');
    held.push(more);
    expect(await more.secured).toBe(false);
    expect(await closedByDaemon(more, 'a connection from a busy address while the total is full')).toEqual({
      secured: false,
      received: '',
    });
    expect(flood.every((w) => w.open())).toBe(true);
    // The phone's address holds none: the oldest connection of the busiest address (.2) makes room.
    const phone = new Phone(`https://127.0.0.1:${port}`, fx.d.token, pinned);
    try {
      await phone.wake('full');
    } finally {
      phone.close();
    }
    await eventually(() => !flood[0]!.open(), CLOSED_WITHIN_MS, 50, 'the oldest connection of .2 closed');
    expect(flood.slice(1).every((w) => w.open())).toBe(true);
  });

  it('refuses an authenticated connection over the authenticated cap with a 429 and closes it', async () => {
    const kept: Watched[] = [];
    let refused: Ending | null = null;
    try {
      for (let i = 0; i < 3 * limits.authenticated && refused === null; i++) {
        const w = tls(port, '127.0.0.8');
        kept.push(w);
        expect(await w.secured).toBe(true);
        w.socket.write(`GET /health HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${fx.d.token}\r\n\r\n`);
        await eventually(() => !w.open() || /\r\n\r\n/.test(w.text()), 20_000, 25, 'an answer');
        if (/^HTTP\/1\.1 429 /.test(w.text())) refused = await closedByDaemon(w, 'the connection over the authenticated cap');
        else expect(w.text()).toMatch(/^HTTP\/1\.1 200 /);
      }
      expect(refused?.received).toMatch(/rate-limited/);
    } finally {
      for (const w of kept) w.socket.destroy();
    }
  });
});

/** A server of tether's transport alone on a port of its own, in a temporary folder (removed after). */
function useBareServer(
  options: (dir: string) => Partial<Parameters<typeof buildServer>[0]> | Promise<Partial<Parameters<typeof buildServer>[0]>>,
) {
  const srv = { dir: '', token: '', port: 0, app: null as FastifyInstance | null, tokens: null as TokenStore | null };
  beforeAll(async () => {
    srv.dir = mkdtempSync(join(tmpdir(), 'tether-peers-'));
    srv.tokens = await TokenStore.open(join(srv.dir, 'auth'));
    srv.token = (await srv.tokens.ensureLocalToken()).token!;
    srv.app = await buildServer({
      logger: false,
      tokens: srv.tokens,
      health: { health: () => ({ ok: true }) as unknown as HealthReport },
      ...(await options(srv.dir)),
    });
    await srv.app.listen({ host: '127.0.0.1', port: 0 });
    srv.port = (srv.app.server.address() as { port: number }).port;
  });
  afterAll(async () => {
    await srv.app?.close();
    srv.tokens?.close();
    rmSync(srv.dir, { recursive: true, force: true });
  });
  return srv;
}

describe('a plain-http server: bounds from the connection start, and an upgrade never answered', () => {
  const srv = useBareServer(() => ({
    // The daemon starting, for ever: an upgrade waits on it and is never answered.
    ready: new Promise<void>(() => undefined),
    peerLimits: { headersMs: 1000, upgradeMs: 1000, checkIntervalMs: 200 },
    plugins: [(a) => void a.get('/ws', { websocket: true }, () => undefined)],
  }));

  it('closes a TCP connection that never sends a byte, counting from its start, with a 408', async () => {
    const silent = tcp(srv.port, '127.0.0.2');
    expect((await closedByDaemon(silent, 'a silent TCP connection')).received).toMatch(/^HTTP\/1\.1 408 /);
  });

  it('closes an authenticated upgrade that gets no answer', async () => {
    const up = tcp(srv.port, '127.0.0.3');
    up.socket.write(
      `GET /ws HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${srv.token}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: ${Buffer.alloc(16, 1).toString('base64')}\r\n\r\n`,
    );
    expect(await closedByDaemon(up, 'an upgrade never answered')).toEqual({ secured: false, received: '' });
  });
});

describe('a TLS server whose handshake bound is far below its other bounds', () => {
  const srv = useBareServer(async (dir) => {
    await makeCertificate({ dataDir: dir } as Parameters<typeof makeCertificate>[0]);
    return {
      tls: { key: readFileSync(join(dir, 'tls', 'key.pem')), cert: readFileSync(join(dir, 'tls', 'cert.pem')) },
      // Only the handshake's bound can close these within the wait: the others are ten minutes.
      peerLimits: { handshakeMs: 500, headersMs: 600_000, unauthenticatedMs: 600_000, checkIntervalMs: 200 },
    };
  });

  it('closes a connection that never starts TLS, and one whose handshake never ends, by the handshake bound', async () => {
    const silent = tcp(srv.port, '127.0.0.2');
    const half = tcp(srv.port, '127.0.0.2');
    half.socket.write(Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03]));
    expect(await closedByDaemon(silent, 'a silent TCP connection')).toEqual({ secured: false, received: '' });
    expect(await closedByDaemon(half, 'a half-finished TLS handshake')).toEqual({ secured: false, received: '' });
  });
});
