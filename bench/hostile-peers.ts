/**
 * The hostile peers of bench/hostile.bench.ts, in a process of their own (thousands of sockets,
 * and their CPU kept apart from the measuring side): connections that try to hold the daemon's
 * sockets, opened at a steady rate from several loopback addresses, each kept doing its thing
 * until the daemon closes it.
 *
 * - `half-open`: the TLS handshake, then half an upgrade request, then a byte every second
 *   (never idle, never whole);
 * - `silent`: TCP, then nothing;
 * - `slow-tls`: a ClientHello sent a byte every 500 ms, never finished.
 *
 * Usage: `node --import tsx bench/hostile-peers.ts '<json options>'`. Writes JSON lines on
 * stdout: `{"event":"ramped"}` once a fifth are open, `{"event":"opened"}` when all are, then
 * `{"event":"done", ...}` with how long each kind stayed open, once every one is closed (or a
 * minute after the last was opened).
 */
import { connect as tcpConnect, createServer, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';

export type HostileKind = 'half-open' | 'silent' | 'slow-tls';
export const HOSTILE_KINDS: readonly HostileKind[] = ['half-open', 'silent', 'slow-tls'];

export interface HostileOptions {
  readonly port: number;
  /** Where they come from; the first one sends `heavyShare` of them, the others the rest. */
  readonly addresses: readonly string[];
  readonly heavyShare: number;
  readonly total: number;
  readonly perSecond: number;
}

/** What became of one kind's connections. */
export interface KindSummary {
  readonly n: number;
  /** Never connected (the kernel refused: the daemon's backlog was full). */
  readonly failed: number;
  /** Still open when the attack gave up waiting. */
  readonly stillOpen: number;
  /** Closed by the daemon within 200 ms of their TCP connect (refused, or made room at once). */
  readonly atOnce: number;
  /** Seconds each closed connection stayed open, from its TCP connect. */
  readonly openSeconds: readonly number[];
  /** How many got a 408 from the daemon. */
  readonly got408: number;
  /** The errors of those that never connected, by code. */
  readonly errors: Record<string, number>;
}

export interface HostileSummary {
  readonly event: 'done';
  readonly kinds: Record<HostileKind, KindSummary>;
  readonly openingSeconds: number;
  readonly cpuSeconds: number;
}

interface Conn {
  readonly kind: HostileKind;
  connectedAt: number | null;
  closedAt: number | null;
  received: string;
  error: string | null;
}

/** The first bytes a real client sends: a ClientHello, captured from node's own TLS client. */
function clientHello(): Promise<Buffer> {
  return new Promise((resolve) => {
    const server = createServer((s) =>
      s.once('data', (d: Buffer) => {
        resolve(d);
        s.destroy();
        server.close();
      }),
    );
    server.listen(0, '127.0.0.1', () => {
      const c = tlsConnect({ port: (server.address() as { port: number }).port, host: '127.0.0.1', rejectUnauthorized: false });
      c.on('error', () => undefined);
    });
  });
}

function open(kind: HostileKind, opts: HostileOptions, from: string, hello: Buffer): Conn {
  const conn: Conn = { kind, connectedAt: null, closedAt: null, received: '', error: null };
  const tcp = tcpConnect({ host: '127.0.0.1', port: opts.port, localAddress: from });
  tcp.once('connect', () => (conn.connectedAt = performance.now()));
  tcp.once('error', (err: NodeJS.ErrnoException) => (conn.error ??= err.code ?? err.message));
  let timer: NodeJS.Timeout | null = null;
  const watch = (s: Socket) => {
    s.on('error', () => undefined);
    s.on('data', (d: Buffer) => (conn.received += d.toString('latin1', 0, Math.min(d.length, 64))));
    s.once('close', () => {
      conn.closedAt = performance.now();
      if (timer) clearInterval(timer);
    });
  };
  if (kind === 'half-open') {
    const tls = tlsConnect({ socket: tcp, rejectUnauthorized: false });
    watch(tls);
    tcp.on('error', () => undefined);
    tls.once('secureConnect', () => {
      tls.write('GET /sessions/hostile/stream HTTP/1.1\r\nHost: tether\r\nUpgrade: websocket\r\n');
      timer = setInterval(() => tls.writable && tls.write('X'), 1000);
    });
  } else {
    watch(tcp);
    if (kind === 'slow-tls') {
      let sent = 0;
      tcp.once('connect', () => {
        timer = setInterval(() => {
          if (sent < hello.length - 1 && tcp.writable) tcp.write(hello.subarray(sent, ++sent));
        }, 500);
      });
    }
  }
  return conn;
}

function summary(conns: readonly Conn[], kind: HostileKind): KindSummary {
  const mine = conns.filter((c) => c.kind === kind);
  const closed = mine.filter((c) => c.connectedAt !== null && c.closedAt !== null);
  const openSeconds = closed.map((c) => (c.closedAt! - c.connectedAt!) / 1000);
  const errors: Record<string, number> = {};
  for (const c of mine)
    if (c.connectedAt === null && c.closedAt !== null) errors[c.error ?? 'closed'] = (errors[c.error ?? 'closed'] ?? 0) + 1;
  return {
    errors,
    n: mine.length,
    failed: mine.filter((c) => c.connectedAt === null && c.closedAt !== null).length,
    stillOpen: mine.filter((c) => c.closedAt === null).length,
    atOnce: openSeconds.filter((s) => s < 0.2).length,
    openSeconds,
    got408: mine.filter((c) => c.received.startsWith('HTTP/1.1 408')).length,
  };
}

async function main(): Promise<void> {
  const opts = JSON.parse(process.argv[2] ?? '{}') as HostileOptions;
  const hello = await clientHello();
  const say = (line: object) => process.stdout.write(`${JSON.stringify(line)}\n`);
  const conns: Conn[] = [];
  const others = opts.addresses.slice(1);
  const start = performance.now();
  const cpu0 = process.cpuUsage();
  // Opened in steps of 10 ms at the given rate; kinds and addresses in turn.
  while (conns.length < opts.total) {
    const due = Math.min(opts.total, Math.ceil(((performance.now() - start) / 1000) * opts.perSecond));
    for (let i = conns.length; i < due; i++) {
      const heavy = (i * 7919) % 1000 < opts.heavyShare * 1000;
      const from = heavy || others.length === 0 ? opts.addresses[0]! : others[i % others.length]!;
      conns.push(open(HOSTILE_KINDS[i % HOSTILE_KINDS.length]!, opts, from, hello));
      if (conns.length === Math.ceil(opts.total / 5)) say({ event: 'ramped' });
    }
    await new Promise((r) => setTimeout(r, 10));
  }
  const openingSeconds = (performance.now() - start) / 1000;
  say({ event: 'opened' });
  const deadline = performance.now() + 60_000;
  while (conns.some((c) => c.closedAt === null) && performance.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  const cpu = process.cpuUsage(cpu0);
  const kinds = Object.fromEntries(HOSTILE_KINDS.map((k) => [k, summary(conns, k)])) as Record<HostileKind, KindSummary>;
  const done: HostileSummary = { event: 'done', kinds, openingSeconds, cpuSeconds: (cpu.user + cpu.system) / 1e6 };
  say(done);
  process.exit(0);
}

if (process.argv[1]?.endsWith('hostile-peers.ts')) await main();
