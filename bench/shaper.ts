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

/** The profiles the targets are set on, and the worse one again with jitter, to show what it adds. */
export const PROFILES: readonly LinkProfile[] = [
  { name: 'LTE', rttMs: 60, downBps: 20e6, upBps: 5e6, jitterMs: 0 },
  { name: 'bad 3G', rttMs: 300, downBps: 1e6, upBps: 256e3, jitterMs: 0 },
  { name: 'bad 3G + 0-40 ms jitter', rttMs: 300, downBps: 1e6, upBps: 256e3, jitterMs: 40 },
];

/** Largest piece paced as one: about a dozen TCP segments. */
const PIECE_BYTES = 16 * 1024;

type Deliver = (data: Buffer | null) => void;

/**
 * One direction of the link, shared by every connection through it (a phone has one radio):
 * paced at the bandwidth, delayed, delivered in order.
 */
class Lane {
  private busyUntil = 0;
  private lastDelivery = 0;
  private readonly queue: { at: number; data: Buffer | null; deliver: Deliver }[] = [];
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly bps: number,
    private readonly oneWayMs: number,
    private readonly jitterMs: number,
    private readonly rand: () => number,
  ) {}

  /**
   * Bytes that entered the link now for `deliver` (null: the end of that connection's stream,
   * after its bytes). Nothing leaves before `notBefore` (a new connection's TCP handshake).
   */
  push(data: Buffer | null, deliver: Deliver, notBefore = 0): void {
    const now = performance.now();
    if (data === null) {
      this.enqueue(Math.max(now, this.busyUntil, notBefore) + this.oneWayMs, null, deliver);
      return;
    }
    for (let i = 0; i < data.length; i += PIECE_BYTES) {
      const piece = data.subarray(i, i + PIECE_BYTES);
      const start = Math.max(now, this.busyUntil, notBefore);
      this.busyUntil = start + (piece.length * 8 * 1000) / this.bps;
      this.enqueue(this.busyUntil + this.oneWayMs + this.rand() * this.jitterMs, piece, deliver);
    }
  }

  /** Whether nothing is on its way. */
  get idle(): boolean {
    return this.queue.length === 0 && this.busyUntil <= performance.now();
  }

  private enqueue(at: number, data: Buffer | null, deliver: Deliver): void {
    const when = Math.max(at, this.lastDelivery);
    this.lastDelivery = when;
    this.queue.push({ at: when, data, deliver });
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
    while (this.queue.length > 0 && this.queue[0]!.at <= now + 0.5) {
      const item = this.queue.shift()!;
      item.deliver(item.data);
    }
    this.arm();
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.queue.length = 0;
  }
}

/** The proxy: listens on 127.0.0.1 and carries each connection to `target` over the one shaped link. */
export class ShapingProxy {
  private server: net.Server | null = null;
  private readonly open = new Set<() => void>();
  /** Each open connection's way to strand it (see `strand`). */
  private readonly strands = new Set<() => void>();
  private readonly up: Lane;
  private readonly down: Lane;
  /** Bytes delivered since the last `resetCounts`, each way. */
  downBytes = 0;
  upBytes = 0;
  private seed: number;

  constructor(
    private readonly targetPort: number,
    readonly profile: LinkProfile,
    seed = 20261125,
  ) {
    this.seed = seed;
    this.up = new Lane(profile.upBps, profile.rttMs / 2, profile.jitterMs, this.rand);
    this.down = new Lane(profile.downBps, profile.rttMs / 2, profile.jitterMs, this.rand);
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
    this.downBytes = 0;
    this.upBytes = 0;
  }

  /** Resolves once nothing is in flight either way (a wake starts on a quiet link). */
  async idle(): Promise<void> {
    while (!this.up.idle || !this.down.idle) await new Promise((r) => setTimeout(r, 5));
  }

  private carry(client: net.Socket): void {
    client.setNoDelay(true);
    const upstream = net.connect(this.targetPort, '127.0.0.1');
    upstream.setNoDelay(true);
    // The client connected to the proxy at once; on the real link its SYN and the SYN-ACK take
    // a round trip before its first byte can go.
    const connectedAt = performance.now() + this.profile.rttMs;
    // Bytes are counted as they come out of the link: what the other end has received.
    let stranded = false;
    const toServer: Deliver = (d) => {
      if (stranded) return;
      if (d === null) return void upstream.end();
      this.upBytes += d.length;
      upstream.write(d);
    };
    const toClient: Deliver = (d) => {
      if (stranded) return;
      if (d === null) return void client.end();
      this.downBytes += d.length;
      client.write(d);
    };
    client.on('data', (d: Buffer) => this.up.push(d, toServer, connectedAt));
    upstream.on('data', (d: Buffer) => this.down.push(d, toClient, connectedAt));
    client.on('end', () => this.up.push(null, toServer, connectedAt));
    upstream.on('end', () => this.down.push(null, toClient, connectedAt));
    const close = () => {
      client.destroy();
      upstream.destroy();
    };
    this.open.add(close);
    const strand = (): void => {
      stranded = true;
      this.strands.delete(strand);
      // The phone's end is gone; the daemon's end hears nothing: never read again, never closed by
      // the link (only by the daemon, or the proxy's own close).
      upstream.removeAllListeners('data');
      upstream.pause();
      client.removeAllListeners('close');
      client.destroy();
    };
    this.strands.add(strand);
    const done = () => {
      this.open.delete(close);
      this.strands.delete(strand);
      close();
    };
    client.on('close', done);
    upstream.on('close', done);
    client.on('error', () => undefined);
    upstream.on('error', () => undefined);
  }

  /**
   * The radio goes (a phone put in a pocket): every open connection is cut on the phone's side,
   * and the far end hears nothing, no FIN and no reset; what it sends is never read. Only its own
   * keepalive can tell it the peer is gone.
   */
  strand(): void {
    for (const s of [...this.strands]) s();
  }

  async close(): Promise<void> {
    for (const c of [...this.open]) c();
    this.up.stop();
    this.down.stop();
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
