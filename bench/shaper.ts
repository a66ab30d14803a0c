/**
 * A shaping TCP proxy: a phone's network between a client and the daemon, on one machine.
 * Each direction has its own bandwidth cap (bytes leave one after another at that rate, as on
 * the bottleneck link), a one-way delay of half the round trip, and jitter (each piece is
 * delayed by up to `jitterMs` more, never reordered: TCP delivers in order). It counts the bytes
 * it carries each way, so a benchmark can compute its floor from what actually crossed.
 *
 * The TCP handshake's round trip is modelled (a client's first byte waits one round trip). What
 * it does not model: loss and TCP's own congestion control on the shaped path (both ends of
 * each hop are on loopback), so its floor is the round trips plus the bytes over the bandwidth,
 * and a real link adds slow start on top.
 */
import net from 'node:net';

export interface LinkProfile {
  readonly name: string;
  /** Round-trip time added (half each way). */
  readonly rttMs: number;
  /** Bandwidth towards the client (the daemon's bytes), bits per second. */
  readonly downBps: number;
  /** Bandwidth towards the daemon (the client's bytes), bits per second. */
  readonly upBps: number;
  /** Extra delay per piece, uniform in [0, jitterMs]. */
  readonly jitterMs: number;
}

export const PROFILES: readonly LinkProfile[] = [
  { name: 'LTE', rttMs: 60, downBps: 20e6, upBps: 5e6, jitterMs: 4 },
  { name: 'bad 3G', rttMs: 300, downBps: 1e6, upBps: 256e3, jitterMs: 20 },
];

/** Largest piece paced as one: about a dozen TCP segments. */
const PIECE_BYTES = 16 * 1024;

/** One direction of the link: paced, delayed, in order. */
class Lane {
  private busyUntil = 0;
  private lastDelivery = 0;
  private readonly queue: { at: number; data: Buffer | null }[] = [];
  private timer: NodeJS.Timeout | null = null;
  bytes = 0;

  constructor(
    private readonly bps: number,
    private readonly oneWayMs: number,
    private readonly jitterMs: number,
    private readonly rand: () => number,
    private readonly deliver: (data: Buffer | null) => void,
  ) {}

  /** Nothing leaves before `at` (the TCP handshake's round trip, which the proxy's own accept skips). */
  hold(at: number): void {
    this.busyUntil = Math.max(this.busyUntil, at);
  }

  /** Bytes that entered the link now (null: the end of the stream, after every byte). */
  push(data: Buffer | null): void {
    const now = performance.now();
    if (data === null) {
      this.enqueue(Math.max(now, this.busyUntil) + this.oneWayMs, null);
      return;
    }
    this.bytes += data.length;
    for (let i = 0; i < data.length; i += PIECE_BYTES) {
      const piece = data.subarray(i, i + PIECE_BYTES);
      const start = Math.max(now, this.busyUntil);
      this.busyUntil = start + (piece.length * 8 * 1000) / this.bps;
      this.enqueue(this.busyUntil + this.oneWayMs + this.rand() * this.jitterMs, piece);
    }
  }

  private enqueue(at: number, data: Buffer | null): void {
    const when = Math.max(at, this.lastDelivery);
    this.lastDelivery = when;
    this.queue.push({ at: when, data });
    if (!this.timer) this.arm();
  }

  private arm(): void {
    const next = this.queue[0];
    if (!next) {
      this.timer = null;
      return;
    }
    this.timer = setTimeout(() => this.flush(), Math.max(0, next.at - performance.now()));
  }

  private flush(): void {
    const now = performance.now();
    while (this.queue.length > 0 && this.queue[0]!.at <= now + 0.5) this.deliver(this.queue.shift()!.data);
    this.arm();
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.queue.length = 0;
  }
}

/** The proxy: listens on 127.0.0.1, forwards each connection to `target` through two lanes. */
export class ShapingProxy {
  private server: net.Server | null = null;
  private readonly open = new Set<{ close: () => void }>();
  private readonly lanes = new Set<Lane>();
  /** Bytes delivered since the last `resetCounts`, each way. */
  down = 0;
  up = 0;
  private seed: number;

  constructor(
    private readonly targetPort: number,
    readonly profile: LinkProfile,
    seed = 20261125,
  ) {
    this.seed = seed;
  }

  /** A small deterministic generator, so runs are comparable. */
  private rand = (): number => {
    this.seed = (this.seed * 1664525 + 1013904223) >>> 0;
    return this.seed / 2 ** 32;
  };

  async listen(): Promise<number> {
    this.server = net.createServer((client) => this.carry(client));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return (this.server.address() as net.AddressInfo).port;
  }

  resetCounts(): void {
    this.down = 0;
    this.up = 0;
  }

  private carry(client: net.Socket): void {
    client.setNoDelay(true);
    const upstream = net.connect(this.targetPort, '127.0.0.1');
    upstream.setNoDelay(true);
    const oneWay = this.profile.rttMs / 2;
    // Bytes are counted as they come out of the link: what the other end has received.
    const toServer = new Lane(this.profile.upBps, oneWay, this.profile.jitterMs, this.rand, (d) => {
      if (d === null) return void upstream.end();
      this.up += d.length;
      upstream.write(d);
    });
    const toClient = new Lane(this.profile.downBps, oneWay, this.profile.jitterMs, this.rand, (d) => {
      if (d === null) return void client.end();
      this.down += d.length;
      client.write(d);
    });
    // The client connected to the proxy at once; on the real link its SYN and the SYN-ACK take
    // a round trip before its first byte can go.
    toServer.hold(performance.now() + this.profile.rttMs);
    this.lanes.add(toServer).add(toClient);
    client.on('data', (d: Buffer) => toServer.push(d));
    upstream.on('data', (d: Buffer) => toClient.push(d));
    client.on('end', () => toServer.push(null));
    upstream.on('end', () => toClient.push(null));
    const entry = {
      close: () => {
        toServer.stop();
        toClient.stop();
        client.destroy();
        upstream.destroy();
      },
    };
    this.open.add(entry);
    const done = () => {
      this.open.delete(entry);
      this.lanes.delete(toServer);
      this.lanes.delete(toClient);
      entry.close();
    };
    client.on('close', done);
    upstream.on('close', done);
    client.on('error', () => undefined);
    upstream.on('error', () => undefined);
  }

  async close(): Promise<void> {
    for (const c of [...this.open]) c.close();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

/**
 * The floor of one wake on a profile: the round trips its handshakes need (TCP, TLS 1.3, the
 * WebSocket upgrade: three) plus the bytes that crossed each way over that way's bandwidth.
 */
export function floorMs(profile: LinkProfile, roundTrips: number, down: number, up: number): number {
  return roundTrips * profile.rttMs + (down * 8 * 1000) / profile.downBps + (up * 8 * 1000) / profile.upBps;
}
