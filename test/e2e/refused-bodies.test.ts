/**
 * A body the daemon refuses reaches every client as its answer (docs/api.md, its paragraph on
 * connections; docs/reliability.md "Peers that hold sockets"): a 2 MB and a 20 MB body to the
 * input route and an upload past `[uploads] max_mb`, sent over TLS (the default) by Node's own
 * fetch, curl and the reference client, are each answered 413 with the error's body, never a reset. A peer that keeps sending
 * after the answer is closed within the documented bound, and the daemon answers others meanwhile.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect, type ConnectionOptions, type TLSSocket } from 'node:tls';
import { beforeAll, describe, expect, it } from 'vitest';
import { readRunFile } from '../../src/runtime/run-file.js';
import { PEER_LIMITS } from '../../src/transport/peer-limits.js';
import { BODY_LIMIT_BYTES } from '../../src/transport/server.js';
import { WorkbenchClient, pinnedTlsOptions, type PinnedTlsOptions, type WorkbenchError } from '../../src/reference-client/index.js';
import { useDaemon } from '../helpers/daemon-fixture.js';
import { pinnedRequest } from '../helpers/https.js';
import { curlPost, nodeFetch, type ClientOutcome, type ClientRequest } from '../helpers/http-clients.js';
import { useTempDirs } from '../helpers/temp-dirs.js';
import { eventually } from '../helpers/tmux.js';

const SESSION = 'rb-main';
const MB = 1024 * 1024;
const fx = useDaemon(`tls = true\n[agent]\ncommand = "/bin/sh"\ndefault_session = "${SESSION}"\n[uploads]\nmax_mb = 1\n`);
const tempDir = useTempDirs('tether-refused-bodies-');

let tls: PinnedTlsOptions;
let port: number;

beforeAll(async () => {
  const run = readRunFile(join(fx.home.dataDir, 'run'));
  if (!run?.fingerprint) throw new Error('the daemon wrote no run file with a fingerprint');
  port = run.port;
  tls = await pinnedTlsOptions('127.0.0.1', run.port, run.fingerprint);
});

/** A request of `mb` megabytes to `path`: JSON keys for the input route, bytes for an upload. */
function requestOf(path: string, mb: number): ClientRequest {
  const dir = tempDir();
  const caFile = join(dir, 'ca.pem');
  writeFileSync(caFile, tls.ca);
  const bodyFile = join(dir, 'body');
  const json = path.endsWith('/input');
  const size = mb * 1000 * 1000;
  writeFileSync(bodyFile, json ? JSON.stringify({ type: 'keys', data: 'x'.repeat(size) }) : Buffer.alloc(size, 0x61));
  return {
    url: `${fx.d.base}${path}`,
    token: fx.d.token,
    contentType: json ? 'application/json' : 'application/octet-stream',
    bodyFile,
    caFile,
  };
}

const INPUT = `/sessions/${SESSION}/input`;
const UPLOAD = `/sessions/${SESSION}/files?name=big.bin`;

/** The answer a refused body must get, whatever the client, each time. */
function expectRefused(outcomes: ClientOutcome | ClientOutcome[], limit: string): void {
  for (const outcome of [outcomes].flat()) {
    expect(outcome).toEqual({ status: 413, body: expect.any(String) as unknown });
    const body = JSON.parse((outcome as { body: string }).body) as unknown;
    expect(body).toEqual({ error: 'payload-too-large', message: expect.stringContaining(limit) as unknown });
  }
}

/**
 * How Node's fetch sends each body, in one process (so on the connections it keeps): a reset meets
 * it on some tries and not on others (measured before the lingering close: about one try in three
 * failed with EPIPE, and a chunked upload after a declared one with ECONNRESET).
 */
const SENDS = ['declared', 'chunked', 'declared', 'chunked', 'declared', 'chunked', 'declared', 'chunked'] as const;

describe('a refused body is answered to every client', () => {
  for (const mb of [2, 20]) {
    it(`a ${mb} MB body to the input route: 413 to Node's fetch (declared and chunked) and to curl`, async () => {
      const req = requestOf(INPUT, mb);
      expectRefused(await nodeFetch(req, SENDS), String(BODY_LIMIT_BYTES));
      expectRefused(await curlPost(req), String(BODY_LIMIT_BYTES));
    });
  }

  it("an upload over [uploads] max_mb: 413 to Node's fetch (declared and chunked), to curl and to the reference client", async () => {
    const req = requestOf(UPLOAD, 20);
    expectRefused(await nodeFetch(req, SENDS), 'max_mb');
    expectRefused(await curlPost(req), 'max_mb');
    const client = new WorkbenchClient({ baseUrl: fx.d.base, token: fx.d.token, tls });
    const refusal = await client.upload(SESSION, 'big.bin', Buffer.alloc(20 * MB, 0x61)).then(
      () => null,
      (e: unknown) => e as WorkbenchError,
    );
    expect(refusal).toMatchObject({ status: 413, code: 'payload-too-large' });
    // Within the limit, an upload is still stored.
    expect((await client.upload(SESSION, 'small.bin', Buffer.alloc(1000, 0x61))).bytes).toBe(1000);
  });
});

/** What a raw peer saw of its connection, in order, with the monotonic times of each step. */
interface RawPeer {
  readonly socket: TLSSocket;
  answer: string;
  answeredAt: number | null;
  endedAt: number | null;
  closedAt: number | null;
  sent: number;
}

/** A TLS connection that sends a chunked POST's headers to `path`, then whatever the test sends. */
async function rawPeer(path: string): Promise<RawPeer> {
  // Half-open allowed (tls.connect passes it on to its socket, though its types omit it): the
  // daemon's FIN after its answer must not end the peer's own sending.
  const options: ConnectionOptions & { allowHalfOpen: boolean } = { host: '127.0.0.1', port, allowHalfOpen: true, ...tls };
  const socket = connect(options);
  await new Promise<void>((resolve, reject) => {
    socket.once('secureConnect', resolve);
    socket.once('error', reject);
  });
  const peer: RawPeer = { socket, answer: '', answeredAt: null, endedAt: null, closedAt: null, sent: 0 };
  socket.on('error', () => undefined);
  // Reading all along: an unread socket never sees the daemon's FIN.
  socket.on('data', (d: Buffer) => {
    peer.answer += d.toString('latin1');
    if (peer.answeredAt === null && peer.answer.includes('\r\n\r\n')) peer.answeredAt = performance.now();
  });
  socket.on('end', () => (peer.endedAt = performance.now()));
  socket.on('close', () => (peer.closedAt = performance.now()));
  socket.write(
    `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${fx.d.token}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`,
  );
  return peer;
}

/** Resolves when `socket` can take more, or closed. */
function drainedOrClosed(socket: TLSSocket): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      socket.off('drain', done).off('close', done);
      resolve();
    };
    socket.on('drain', done).on('close', done);
  });
}

/** One chunk of the chunked body. */
const chunk = (data: Buffer): Buffer => Buffer.concat([Buffer.from(`${data.length.toString(16)}\r\n`), data, Buffer.from('\r\n')]);

/** A GET /health's round trip, in milliseconds. */
async function healthMs(): Promise<number> {
  const t0 = performance.now();
  expect((await pinnedRequest('127.0.0.1', port, '/health', tls, { token: fx.d.token })).status).toBe(200);
  return performance.now() - t0;
}

describe('a peer that keeps sending after the answer', () => {
  // The bound, and what a loaded machine's timers may add to it.
  const BOUND_MS = PEER_LIMITS.lingerMs + 3000;

  it('an endless fast sender reads its 413, then its connection is closed within the bound; others are answered meanwhile', async () => {
    const peer = await rawPeer(INPUT);
    const block = chunk(Buffer.alloc(256 * 1024, 0x78));
    let stop = false;
    const pump = async () => {
      while (!stop && !peer.socket.destroyed) {
        peer.sent += block.length;
        if (!peer.socket.write(block)) await drainedOrClosed(peer.socket);
      }
    };
    void pump();
    try {
      await eventually(() => peer.answeredAt !== null, 15_000, 10, 'the 413 read by the peer');
      expect(peer.answer).toMatch(/^HTTP\/1\.1 413 /);
      expect(peer.answer.toLowerCase()).toContain('connection: close');
      expect(peer.answer).toContain('"error":"payload-too-large"');
      // The daemon answers another client while the flood is read and dropped.
      expect(await healthMs()).toBeLessThan(BOUND_MS);
      await eventually(() => peer.closedAt !== null, BOUND_MS + 5000, 25, 'the flooding connection closed');
      expect(peer.closedAt! - peer.answeredAt!).toBeLessThan(BOUND_MS);
      // It was read on after the answer (a connection closed at once takes no more than the kernel's buffers).
      expect(peer.sent).toBeGreaterThan(16 * MB);
    } finally {
      stop = true;
      peer.socket.destroy();
    }
  });

  it('a slow sender sees the answer, then the half-close, its bytes still taken, and the close at the time bound', async () => {
    const peer = await rawPeer(INPUT);
    peer.socket.write(chunk(Buffer.alloc(BODY_LIMIT_BYTES + 1, 0x78)));
    await eventually(() => peer.answeredAt !== null, 15_000, 10, 'the 413 read by the peer');
    expect(peer.answer).toMatch(/^HTTP\/1\.1 413 /);
    // The daemon's FIN follows its answer: the client knows the answer is whole.
    await eventually(() => peer.endedAt !== null, 5000, 10, "the daemon's half-close after its answer");
    const timer = setInterval(() => peer.socket.write(chunk(Buffer.from('x'))), 100);
    try {
      await eventually(() => peer.closedAt !== null, BOUND_MS + 5000, 25, 'the slow connection closed');
      const lingered = peer.closedAt! - peer.answeredAt!;
      // Read on for the bound (not reset at once), and closed within it.
      expect(lingered).toBeGreaterThan(PEER_LIMITS.lingerMs - 1000);
      expect(lingered).toBeLessThan(BOUND_MS);
      expect(await healthMs()).toBeLessThan(BOUND_MS);
    } finally {
      clearInterval(timer);
      peer.socket.destroy();
    }
  });
});
