/**
 * The lingering close on a real listening server (plain TCP, where node's parser reads the
 * socket itself): a connection answered before its body was read closes when the client closes
 * its side, at the byte bound (smaller without a token), and never serves a request sent after the
 * answer.
 */
import { connect, type Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildServer } from '../../src/transport/server.js';
import { eventually } from '../helpers/tmux.js';

const LIMITS = { lingerMs: 3000, lingerBytes: 4 * 1024 * 1024, lingerBytesUnauthenticated: 256 * 1024 };
const TOKEN = 'tok-lingering';

let app: FastifyInstance;
let port: number;
let served = 0;

beforeAll(async () => {
  app = await buildServer({
    logger: false,
    tokens: { verify: (t) => (t === TOKEN ? { id: 't', name: 't' } : null) },
    health: { health: () => ({}) as never },
    bodyLimit: 1024,
    peerLimits: LIMITS,
    plugins: [
      (a) => {
        a.post('/echo', async (_req, reply) => reply.code(204).send());
        a.get('/served', () => Promise.resolve({ served: ++served }));
      },
    ],
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  port = (app.server.address() as { port: number }).port;
});
afterAll(() => app.close());

interface Peer {
  readonly socket: Socket;
  answer: string;
  answeredAt: number | null;
  closedAt: number | null;
  sent: number;
}

/** A connection that sends `head`, reading all along (an unread socket never sees the FIN). */
async function peer(head: string): Promise<Peer> {
  const socket = connect({ host: '127.0.0.1', port, allowHalfOpen: true });
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  const p: Peer = { socket, answer: '', answeredAt: null, closedAt: null, sent: 0 };
  socket.on('error', () => undefined);
  socket.on('data', (d: Buffer) => {
    p.answer += d.toString('latin1');
    if (p.answeredAt === null && p.answer.includes('\r\n\r\n')) p.answeredAt = performance.now();
  });
  socket.on('close', () => (p.closedAt = performance.now()));
  socket.write(head);
  return p;
}

const post = (auth: boolean, extra = '') =>
  `POST /echo HTTP/1.1\r\nHost: x\r\n${auth ? `Authorization: Bearer ${TOKEN}\r\n` : ''}Content-Type: application/json\r\n${extra}\r\n`;

/** Sends chunks of `size` until the connection closes. */
async function flood(p: Peer, size = 64 * 1024): Promise<void> {
  const block = Buffer.concat([Buffer.from(`${size.toString(16)}\r\n`), Buffer.alloc(size, 0x78), Buffer.from('\r\n')]);
  while (!p.socket.destroyed && p.closedAt === null) {
    p.sent += size;
    if (!p.socket.write(block))
      await new Promise<void>((resolve) => {
        const done = () => {
          p.socket.off('drain', done).off('close', done);
          resolve();
        };
        p.socket.on('drain', done).on('close', done);
      });
  }
}

describe('lingering close', () => {
  it('closes as soon as the client closes its side after reading the answer', async () => {
    const p = await peer(post(true, 'Content-Length: 2000000\r\n'));
    p.socket.write(Buffer.alloc(100_000, 0x78));
    await eventually(() => p.answeredAt !== null, 10_000, 10, 'the 413');
    expect(p.answer).toMatch(/^HTTP\/1\.1 413 /);
    p.socket.end();
    await eventually(() => p.closedAt !== null, 10_000, 10, 'the close');
    expect(p.closedAt! - p.answeredAt!).toBeLessThan(LIMITS.lingerMs - 1000);
  });

  it('reads at most the byte bound after the answer: the token’s, and a smaller one without', async () => {
    const withToken = await peer(post(true, 'Transfer-Encoding: chunked\r\n'));
    await flood(withToken);
    expect(withToken.answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(withToken.sent).toBeGreaterThan(LIMITS.lingerBytes);
    expect(withToken.closedAt! - withToken.answeredAt!).toBeLessThan(LIMITS.lingerMs);

    const without = await peer(post(false, 'Transfer-Encoding: chunked\r\n'));
    await flood(without);
    expect(without.answer).toMatch(/^HTTP\/1\.1 401 /);
    expect(without.answer).toContain('"error":"unauthorized"');
    // Far less than the token's bound (what the kernel's buffers take counts as sent too).
    expect(without.sent).toBeLessThan(LIMITS.lingerBytes);
    expect(without.closedAt! - without.answeredAt!).toBeLessThan(LIMITS.lingerMs);
  });

  it('never serves a request sent after its answer closed the connection', async () => {
    const before = served;
    const get = `GET /served HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\n\r\n`;
    // A body over the limit, answered before it is sent; then the rest of it and another request.
    const p = await peer(post(true, 'Content-Length: 2048\r\n'));
    await eventually(() => p.answeredAt !== null, 10_000, 10, 'the 413');
    p.socket.write('x'.repeat(2048) + get);
    // A closed connection shows only when written to (its FIN came with the answer).
    const probe = setInterval(() => p.socket.write('x'), 50);
    await eventually(() => p.closedAt !== null, 10_000, 10, 'the close').finally(() => clearInterval(probe));
    expect(p.answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(p.answer.match(/HTTP\/1\.1/g)).toHaveLength(1);
    expect(p.closedAt! - p.answeredAt!).toBeLessThan(LIMITS.lingerMs);
    expect(served).toBe(before);
    // The server itself still serves.
    const ok = await peer(get);
    await eventually(() => ok.answer.includes('"served"'), 10_000, 10, 'the GET answered');
    ok.socket.destroy();
  });
});
