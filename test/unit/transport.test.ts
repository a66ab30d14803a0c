/**
 * The transport on a real listening server with real ws clients: authentication on every
 * route and upgrade, error bodies, and logs that never carry a token.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { TokenStore } from '../../src/auth/token-store.js';
import type { HealthReport } from '../../src/transport/handles.js';
import { buildServer } from '../../src/transport/server.js';

const report: HealthReport = {
  ok: true,
  status: 'ok',
  version: 't',
  uptime: 1,
  sessions: 0,
  sessionIds: [],
  clients: 0,
  bufferMb: 0,
  diskFreeGb: 1,
  watchdog: { state: 'writing', reason: null },
  warnings: [],
};

describe('transport', () => {
  let dir: string;
  let app: FastifyInstance;
  let base: string;
  let token: string;
  const logLines: string[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tether-transport-'));
    const tokens = await TokenStore.open(join(dir, 'auth'));
    token = (await tokens.ensureLocalToken()).token!;
    const sink = new Writable({
      write(chunk: Buffer, _enc, cb) {
        logLines.push(chunk.toString());
        cb();
      },
    });
    app = await buildServer({
      logger: pino({ level: 'debug' }, sink),
      tokens,
      health: { health: () => report },
      plugins: [
        (a) => {
          a.get('/echo-ws', { websocket: true }, (socket) => socket.send('hello'));
          a.post('/echo', (req, reply) => reply.send(req.body));
        },
      ],
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const addr = app.server.address() as { port: number };
    base = `http://127.0.0.1:${addr.port}`;
  });
  afterAll(async () => {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const cases = (): [string, { path: string; headers: Record<string, string> }, boolean][] => [
    ['no token', { path: '', headers: {} }, false],
    ['wrong token', { path: '?token=wrong', headers: {} }, false],
    ['wrong bearer', { path: '', headers: { authorization: 'Bearer wrong' } }, false],
    ['empty bearer', { path: '', headers: { authorization: 'Bearer ' } }, false],
    ['token in a cookie', { path: '', headers: { cookie: `token=${token}` } }, false],
    ['basic auth', { path: '', headers: { authorization: `Basic ${token}` } }, false],
    ['header', { path: '', headers: { authorization: `Bearer ${token}` } }, true],
    ['lowercase scheme', { path: '', headers: { authorization: `bearer ${token}` } }, true],
    ['query', { path: `?token=${encodeURIComponent(token)}`, headers: {} }, true],
  ];

  it('GET /health: 401 with WWW-Authenticate unless the token is in the header or the query', async () => {
    for (const [name, c, ok] of cases()) {
      const res = await fetch(`${base}/health${c.path}`, { headers: c.headers });
      expect(res.status, name).toBe(ok ? 200 : 401);
      if (!ok) {
        expect(res.headers.get('www-authenticate'), name).toBe('Bearer');
        expect(await res.json()).toMatchObject({ error: 'unauthorized' });
      } else expect(await res.json()).toEqual(report);
    }
  });

  it('WebSocket upgrades: refused with HTTP 401 before any socket opens', async () => {
    for (const [name, c, ok] of cases()) {
      const outcome = await new Promise<string>((resolve) => {
        const ws = new WebSocket(`${base.replace('http', 'ws')}/echo-ws${c.path}`, { headers: c.headers });
        ws.on('unexpected-response', (_req, res) => {
          resolve(`http ${res.statusCode}`);
          ws.terminate();
        });
        ws.on('message', (m: Buffer) => {
          resolve(`message ${m.toString()}`);
          ws.close();
        });
        ws.on('error', () => resolve('error'));
      });
      expect(outcome, name).toBe(ok ? 'message hello' : 'http 401');
    }
  });

  it('error bodies: 404, malformed JSON 400, oversized 413', async () => {
    const auth = { authorization: `Bearer ${token}` };
    const nf = await fetch(`${base}/nope`, { headers: auth });
    expect(nf.status).toBe(404);
    expect(await nf.json()).toMatchObject({ error: 'not-found' });
    const bad = await fetch(`${base}/echo`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: '{"a":' });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: 'bad-request' });
    const big = await fetch(`${base}/echo`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ a: 'x'.repeat(2 * 1024 * 1024) }) });
    expect(big.status).toBe(413);
    expect(await big.json()).toMatchObject({ error: 'payload-too-large' });
  });

  it('never writes a token to the log', async () => {
    await fetch(`${base}/health?token=${encodeURIComponent(token)}`);
    await fetch(`${base}/health`, { headers: { authorization: `Bearer ${token}` } });
    await fetch(`${base}/health?token=guess-${token.slice(0, 10)}`);
    await new Promise((r) => setTimeout(r, 50));
    const all = logLines.join('');
    expect(all).toContain('/health?token=[redacted]');
    expect(all).not.toContain(token);
    expect(all).not.toContain(token.slice(0, 10));
  });
});
