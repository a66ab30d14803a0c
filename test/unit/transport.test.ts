/**
 * The transport as a client meets it: authentication on every route and WebSocket upgrade
 * (with `inject`, and on a real listening server with real `ws` clients), one error body,
 * and logs that never carry a token.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, connect, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { Type } from 'typebox';
import websocket from '@fastify/websocket';
import Fastify, { type FastifyInstance } from 'fastify';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { TokenStore } from '../../src/auth/token-store.js';
import type { HealthReport, VerifiedToken } from '../../src/transport/handles.js';
import { authPlugin } from '../../src/transport/auth.plugin.js';
import { buildServer, listen } from '../../src/transport/server.js';
import { domainError } from '../helpers/domain-error.js';

const report: HealthReport = {
  ok: true,
  status: 'ok',
  version: '0.1.0',
  id: 'Xq3v9LZkQm2uR7bT1cWd0A',
  name: 'devbox',
  mdns: { state: 'off', reason: 'off in the config ([discovery] mdns = false)', instance: null },
  uptime: 12,
  sessions: 1,
  sessionIds: ['pi-main'],
  clients: 2,
  connections: [
    {
      session: 'pi-main',
      kind: 'stream',
      actor: 'session:pi-main/client#1',
      device: 'phone',
      tokenId: 'tok-1',
      connectedAt: '2026-11-25T08:00:00.000Z',
      connectedS: 61.5,
      rttMs: 48.2,
      srttMs: 51.7,
      bytesSent: 123456,
      state: 'live',
      behind: false,
      reconnects: 2,
      awayMs: 5400,
      lastAwayMs: 1200,
    },
    {
      session: 'pi-main',
      kind: 'side',
      actor: null,
      device: 'phone',
      tokenId: 'tok-1',
      connectedAt: '2026-11-25T08:00:00.000Z',
      connectedS: 61.4,
      rttMs: null,
      srttMs: null,
      bytesSent: 900,
      state: null,
      behind: false,
      reconnects: 2,
      awayMs: 5400,
      lastAwayMs: 1200,
    },
  ],
  bufferMb: 3.5,
  diskFreeGb: 40.25,
  watchdog: { state: 'writing', reason: null },
  warnings: [],
  tls: { enabled: true, fingerprint: 'ab'.repeat(32) },
  push: { configured: false, reason: 'push is not configured', sent: 0, failed: 0, lastError: null },
  snapshots: { cold: 1, warmCaptures: 2, warmServed: 5, warmBytes: 4096 },
  restore: {
    enabled: true,
    restoring: [],
    unrestorable: [{ id: 'gone-dir', reason: 'its directory /x is gone', at: '2026-11-25T08:00:00.000Z' }],
  },
};

/** Collects log lines, as the daemon's log file would hold them. */
function logSink(): { stream: Writable; lines: string[] } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      lines.push(...chunk.toString().split('\n').filter(Boolean));
      cb();
    },
  });
  return { stream, lines };
}

/** The test routes: a WebSocket, an echo with a schema, a failure, and one that opts out of auth. */
function testRoutes(seen: { token: VerifiedToken | null }[]) {
  return (a: FastifyInstance) => {
    a.get('/test-ws', { websocket: true }, (socket, req) => socket.send(`hello ${req.tetherToken?.name}`));
    a.post('/echo', (req, reply) => reply.send(req.body));
    a.post(
      '/typed',
      { schema: { body: Type.Object({ name: Type.String(), count: Type.Optional(Type.Integer()) }, { additionalProperties: false }) } },
      (req) => req.body,
    );
    a.get('/boom', () => {
      throw new Error('disk on fire at /home/secret-user');
    });
    a.get('/who', (req) => {
      seen.push({ token: req.tetherToken });
      req.log.info({ headers: req.headers, query: req.query }, 'a route logging more than it should');
      return { token: req.tetherToken };
    });
    a.get('/open', { config: { auth: 'none' } }, (req) => ({ token: req.tetherToken }));
  };
}

type Case = [name: string, at: { query: string; headers: Record<string, string> }, accepted: boolean];

function cases(token: string): Case[] {
  return [
    ['no token', { query: '', headers: {} }, false],
    ['wrong token in the query', { query: '?token=wrong', headers: {} }, false],
    ['wrong token in the header', { query: '', headers: { authorization: 'Bearer wrong' } }, false],
    ['empty bearer', { query: '', headers: { authorization: 'Bearer ' } }, false],
    ['bearer without a token', { query: '', headers: { authorization: 'Bearer' } }, false],
    ['empty query token', { query: '?token=', headers: {} }, false],
    ['token in a cookie', { query: '', headers: { cookie: `token=${token}` } }, false],
    ['token in another header', { query: '', headers: { 'x-token': token } }, false],
    ['token as a Basic credential', { query: '', headers: { authorization: `Basic ${token}` } }, false],
    ['token without a scheme', { query: '', headers: { authorization: token } }, false],
    ['a wrong bearer beats a right query', { query: `?token=${token}`, headers: { authorization: 'Bearer wrong' } }, false],
    ['header', { query: '', headers: { authorization: `Bearer ${token}` } }, true],
    ['lowercase bearer', { query: '', headers: { authorization: `bearer ${token}` } }, true],
    ['query', { query: `?token=${encodeURIComponent(token)}`, headers: {} }, true],
    ['query among others', { query: `?a=1&token=${token}&b=2`, headers: {} }, true],
    ['a proxy’s Basic header beside a right query', { query: `?token=${token}`, headers: { authorization: 'Basic dXNlcjpwdw==' } }, true],
  ];
}

/** A real ws client's outcome: the first message, or the HTTP status of a refused upgrade. */
function wsOutcome(url: string, headers: Record<string, string>): Promise<string> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, { headers });
    ws.on('unexpected-response', (_req, res) => {
      resolve(`http ${res.statusCode} ${String(res.headers['www-authenticate'])}`);
      ws.terminate();
    });
    ws.on('message', (m: Buffer) => {
      resolve(`message ${m.toString()}`);
      ws.close();
    });
    ws.on('error', (err) => resolve(`error ${err.message}`));
  });
}

/** A hand-written WebSocket handshake with a wrong token: the answer's head, and who closed. */
function rawUpgrade(port: number): Promise<{ head: string; closedBy: 'server' | 'timeout' }> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1', () => {
      s.write(
        'GET /test-ws?token=wrong HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n' +
          'Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n',
      );
    });
    let data = '';
    s.on('data', (d: Buffer) => (data += d.toString()));
    const timer = setTimeout(() => {
      resolve({ head: data, closedBy: 'timeout' });
      s.destroy();
    }, 2000);
    s.on('close', () => {
      clearTimeout(timer);
      resolve({ head: data, closedBy: 'server' });
    });
  });
}

describe('transport', () => {
  let dir: string;
  let tokens: TokenStore;
  let token: string;
  let app: FastifyInstance;
  let base: string;
  const log = logSink();
  const seen: { token: VerifiedToken | null }[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tether-transport-'));
    tokens = await TokenStore.open(join(dir, 'auth'));
    token = (await tokens.ensureLocalToken()).token!;
    // The daemon's way: a pino instance of its own.
    app = await buildServer({
      logger: pino({ level: 'debug' }, log.stream),
      tokens,
      health: { health: () => report },
      plugins: [testRoutes(seen)],
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  });
  afterAll(async () => {
    await app.close();
    tokens.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const auth = () => ({ authorization: `Bearer ${token}` });

  describe('authentication', () => {
    it('GET /health (inject): 200 with the report, else 401 with WWW-Authenticate and the error body', async () => {
      for (const [name, at, accepted] of cases(token)) {
        const res = await app.inject({ method: 'GET', url: `/health${at.query}`, headers: at.headers });
        if (accepted) {
          expect(res.statusCode, name).toBe(200);
          expect(res.json(), name).toEqual(report);
        } else {
          expect(res.statusCode, name).toBe(401);
          expect(res.headers['www-authenticate'], name).toBe('Bearer');
          expect(res.json(), name).toEqual({ error: 'unauthorized', message: expect.stringContaining('token') as unknown });
        }
      }
    });

    it('GET /health over a real socket: the same answers', async () => {
      for (const [name, at, accepted] of cases(token)) {
        const res = await fetch(`${base}/health${at.query}`, { headers: at.headers });
        expect(res.status, name).toBe(accepted ? 200 : 401);
        if (!accepted) expect(res.headers.get('www-authenticate'), name).toBe('Bearer');
        expect(await res.json(), name).toMatchObject(accepted ? report : { error: 'unauthorized' });
      }
    });

    it('WebSocket upgrade with a real ws client: refused with HTTP 401 before any socket opens', async () => {
      for (const [name, at, accepted] of cases(token)) {
        const outcome = await wsOutcome(`${base.replace('http', 'ws')}/test-ws${at.query}`, at.headers);
        expect(outcome, name).toBe(accepted ? 'message hello local' : 'http 401 Bearer');
      }
    });

    it('a refused upgrade gets its 401 and then its socket closed by the server', async () => {
      const answer = await rawUpgrade((app.server.address() as { port: number }).port);
      expect(answer.head).toMatch(/^HTTP\/1\.1 401 /);
      expect(answer.head.toLowerCase()).toContain('www-authenticate: bearer');
      expect(answer.closedBy).toBe('server');
    });

    it('closes that socket even when registered before @fastify/websocket (whose own hook then never runs)', async () => {
      const bare = Fastify();
      await bare.register(authPlugin, { tokens });
      await bare.register(websocket);
      bare.get('/test-ws', { websocket: true }, (socket) => socket.send('hello'));
      await bare.listen({ host: '127.0.0.1', port: 0 });
      try {
        const answer = await rawUpgrade((bare.server.address() as { port: number }).port);
        expect(answer.head).toMatch(/^HTTP\/1\.1 401 /);
        expect(answer.closedBy).toBe('server');
      } finally {
        await bare.close();
      }
    });

    it('auth runs before the body is read, and before a 404 could tell which routes exist', async () => {
      const big = await app.inject({ method: 'POST', url: '/echo', headers: { 'content-type': 'application/json' }, payload: '{"a":' });
      expect(big.statusCode).toBe(401);
      expect((await app.inject({ method: 'GET', url: '/no-such-route' })).statusCode).toBe(401);
    });

    it('puts the token’s identity (no hash, no plaintext) on the request, and notes its use', async () => {
      const res = await app.inject({ method: 'GET', url: '/who', headers: auth() });
      expect(res.json()).toEqual({ token: { id: tokens.list()[0]!.id, name: 'local' } });
      expect(seen.at(-1)?.token).toEqual({ id: tokens.list()[0]!.id, name: 'local' });
      tokens.flushTouches();
      expect(tokens.list()[0]!.lastUsedAt).not.toBeNull();
    });

    it("a route with config: { auth: 'none' } is reached without a token", async () => {
      const res = await app.inject({ method: 'GET', url: '/open' });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ token: null });
    });

    it('a revoked token is refused at once (within the store’s one-second look)', async () => {
      const { token: t } = tokens.create('short-lived');
      expect((await app.inject({ method: 'GET', url: '/health', headers: { authorization: `Bearer ${t}` } })).statusCode).toBe(200);
      tokens.revoke('short-lived');
      expect((await app.inject({ method: 'GET', url: '/health', headers: { authorization: `Bearer ${t}` } })).statusCode).toBe(401);
    });
  });

  describe('error bodies', () => {
    it('404 for an unknown route, authenticated', async () => {
      const res = await fetch(`${base}/nope?token=${token}`);
      expect(res.status).toBe(404);
      const body = (await res.json()) as { error: string; message: string };
      expect(body).toEqual({ error: 'not-found', message: 'no route GET /nope' });
    });

    it('413 for a JSON body over the limit', async () => {
      const res = await fetch(`${base}/echo`, {
        method: 'POST',
        headers: { ...auth(), 'content-type': 'application/json' },
        body: JSON.stringify({ a: 'x'.repeat(2 * 1024 * 1024) }),
      });
      expect(res.status).toBe(413);
      expect(await res.json()).toEqual({ error: 'payload-too-large', message: expect.stringContaining('1048576') as unknown });
    });

    it.each([
      ['malformed JSON', 'application/json', '{"a":', { error: 'bad-request', message: 'the body is not valid JSON' }],
      [
        'a JSON body with a __proto__ key',
        'application/json',
        '{"__proto__":{"x":1}}',
        { error: 'bad-request', message: expect.any(String) as unknown },
      ],
      [
        'a content type it does not take',
        'application/xml',
        '<a/>',
        { error: 'bad-request', message: expect.stringContaining('application/xml') as unknown },
      ],
    ])('400 for %s', async (_what, contentType, payload, body) => {
      const res = await app.inject({ method: 'POST', url: '/echo', headers: { ...auth(), 'content-type': contentType }, payload });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual(body);
    });

    it('400 for a body that fails its schema, naming the field', async () => {
      const post = (payload: unknown) => app.inject({ method: 'POST', url: '/typed', headers: auth(), payload: payload as object });
      expect((await post({ name: 'ok', count: 2 })).json()).toEqual({ name: 'ok', count: 2 });
      expect((await post({ name: 5 })).json()).toEqual({ error: 'bad-request', message: 'body.name must be string' });
      expect((await post({ count: 1 })).json()).toEqual({ error: 'bad-request', message: 'body.name is required' });
      expect((await post({ name: 'a', colour: 'red' })).json()).toEqual({
        error: 'bad-request',
        message: 'body.colour is not a known field',
      });
      expect((await post({ name: 'a', count: '2' })).json()).toEqual({ error: 'bad-request', message: 'body.count must be integer' });
    });

    it('500 with a generic message; the detail goes to the log only', async () => {
      const res = await app.inject({ method: 'GET', url: '/boom', headers: auth() });
      expect(res.statusCode).toBe(500);
      expect(res.json()).toEqual({ error: 'internal-error', message: 'an internal error occurred; the tether log has the details' });
      expect(res.body).not.toContain('secret-user');
      expect(log.lines.some((l) => l.includes('disk on fire'))).toBe(true);
    });
  });

  describe('logs', () => {
    it('never carry a token: not from the URL, not from a header, not from a route that logs too much', async () => {
      const before = log.lines.length;
      await fetch(`${base}/health?token=${encodeURIComponent(token)}`);
      await fetch(`${base}/health`, { headers: auth() });
      await fetch(`${base}/health?x=1&token=guess-${token.slice(0, 12)}`);
      await fetch(`${base}/who?token=${token}`, { headers: auth() });
      await fetch(`${base}/boom?token=${token}`);
      await fetch(`${base}/nope?token=${token}`);
      await wsOutcome(`${base.replace('http', 'ws')}/test-ws?token=${token}`, {});
      await wsOutcome(`${base.replace('http', 'ws')}/test-ws?token=bad-${token.slice(0, 12)}`, {});
      await new Promise((r) => setTimeout(r, 50));
      const lines = log.lines.slice(before);
      expect(lines.length).toBeGreaterThan(8);
      const all = lines.join('\n');
      expect(all).not.toContain(token.slice(0, 12));
      expect(all).toContain('/health?token=[redacted]');
      expect(all).toContain('/health?x=1&token=[redacted]');
      const tooMuch = lines
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .find((l) => l.msg === 'a route logging more than it should');
      expect(tooMuch).toMatchObject({ headers: { authorization: '[Redacted]' }, query: { token: '[Redacted]' } });
      // One line per answered request, with method, path, status and time: debug when it
      // succeeded, info when it was refused.
      const requests = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.msg === 'request');
      expect(requests.find((l) => (l.res as { statusCode: number }).statusCode === 200)).toMatchObject({
        level: 20,
        req: { method: 'GET', url: expect.stringContaining('[redacted]') as unknown },
        res: { statusCode: 200 },
      });
      expect(requests.find((l) => (l.res as { statusCode: number }).statusCode === 401)).toMatchObject({ level: 30 });
    });

    it('the same with pino options handed to fastify instead of an instance', async () => {
      const sink = logSink();
      const other = await buildServer({
        logger: { level: 'debug', stream: sink.stream },
        tokens,
        health: { health: () => report },
        plugins: [testRoutes([])],
      });
      try {
        await other.inject({ method: 'GET', url: `/health?token=${token}` });
        await other.inject({ method: 'GET', url: '/who', headers: auth() });
        await other.inject({ method: 'GET', url: `/boom?token=${token}` });
        const all = sink.lines.join('\n');
        expect(all).toContain('[redacted]');
        expect(all).not.toContain(token.slice(0, 12));
      } finally {
        await other.close();
      }
    });
  });

  describe('health', () => {
    it('follows the schema; ok is true exactly when status is ok', async () => {
      const degraded = {
        ...report,
        ok: true,
        status: 'degraded' as const,
        warnings: ['disk almost full'],
        watchdog: { state: 'stopped', reason: 'disk full' },
      };
      const other = await buildServer({ logger: false, tokens, health: { health: () => Promise.resolve(degraded) } });
      try {
        const res = await other.inject({ method: 'GET', url: '/health', headers: auth() });
        expect(res.json()).toEqual({ ...degraded, ok: false });
      } finally {
        await other.close();
      }
    });
  });

  describe('listen', () => {
    it('turns a port in use into one line naming the port and the bindAddress key', async () => {
      const blocker: Server = createServer();
      await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
      const { port } = blocker.address() as { port: number };
      const other = await buildServer({ logger: false, tokens, health: { health: () => report } });
      try {
        const err = await listen(other, { host: '127.0.0.1', port }, '/home/u/.config/tether/config.toml').then(
          () => null,
          (e: unknown) => e,
        );
        expect(err).toEqual(domainError('port-in-use'));
        expect((err as Error).message).toBe(
          `port ${port} on 127.0.0.1 is in use: set bindAddress in /home/u/.config/tether/config.toml to a free port (or port 0 for any)`,
        );
      } finally {
        await other.close();
        await new Promise((r) => blocker.close(r));
      }
    });
  });
});
