/**
 * One WebSocket's keepalive and link figures: it pings the peer as soon as the socket is open
 * and then every `intervalMs`, times each pong against its ping on a monotonic clock (the last
 * round trip and a smoothed one), counts the bytes written to the connection, and terminates a
 * socket whose pong is overdue (docs/api.md "WebSocket", "Keepalive").
 *
 * Invariants: at most one ping is outstanding, and only the pong that echoes its payload times
 * it (an unsolicited pong times nothing). A dead peer is terminated within `intervalMs` plus
 * `pongTimeoutMs` of its last pong; the one exception is a send queue that is still draining
 * (the peer's TCP is taking bytes, so it is there: the ping waits behind them), which extends
 * the deadline only while the queue shrinks.
 */
import type { WebSocket } from 'ws';

/** Server pings every 20 s: under the idle timeouts of mobile carriers' NATs, and few radio wake-ups. */
export const PING_INTERVAL_MS = 20_000;
/** The longest a pong may take: a phone on a bad cell or in a hand-over stalls for seconds, not tens. */
export const PONG_TIMEOUT_MS = 10_000;
/** Weight of a new round trip in the smoothed one (TCP's SRTT uses 1/8). */
export const RTT_SMOOTHING = 1 / 8;

/** The pong deadline for a ping interval: PONG_TIMEOUT_MS, or the interval when that is shorter. */
export function pongTimeoutFor(intervalMs: number): number {
  return Math.min(PONG_TIMEOUT_MS, intervalMs);
}

/** What the keepalive reads of the connection under the WebSocket (a net or TLS socket). */
export interface RawSocket {
  readonly bytesWritten: number;
  readonly writableLength: number;
}

/** A connection's link as measured here. */
export interface LinkFigures {
  /** When the socket opened (ISO 8601). */
  readonly connectedAt: string;
  /** Seconds since then, on the monotonic clock. */
  readonly connectedS: number;
  /** The last ping's round trip in ms; null until the first pong. */
  readonly rttMs: number | null;
  /** The smoothed round trip in ms; null until the first pong. */
  readonly srttMs: number | null;
  /** Bytes written to the connection since it opened (WebSocket frames as sent: compressed, before TLS). */
  readonly bytesSent: number;
}

export interface KeepaliveOptions {
  readonly intervalMs: number;
  /** Default `pongTimeoutFor(intervalMs)`. */
  readonly pongTimeoutMs?: number;
  /** Monotonic milliseconds; default `performance.now`. */
  readonly now?: () => number;
}

interface Outstanding {
  readonly payload: string;
  /** When the ping reached the connection (its write finished); the round trip starts there. */
  wiredAt: number;
  /** The send queue when the deadline was (re)armed: it must shrink for the deadline to move. */
  queued: number;
}

const round1 = (n: number) => Math.round(n * 10) / 10;

export class Keepalive {
  private readonly now: () => number;
  private readonly pongTimeoutMs: number;
  private readonly openedAt: number;
  private readonly connectedAt = new Date().toISOString();
  private readonly bytesBase: number;
  private serial = 0;
  private outstanding: Outstanding | null = null;
  private rttMs: number | null = null;
  private srttMs: number | null = null;
  private readonly pinger: NodeJS.Timeout;
  private deadline: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(
    private readonly socket: WebSocket,
    private readonly raw: RawSocket | null,
    private readonly opts: KeepaliveOptions,
  ) {
    this.now = opts.now ?? (() => performance.now());
    this.pongTimeoutMs = opts.pongTimeoutMs ?? pongTimeoutFor(opts.intervalMs);
    this.openedAt = this.now();
    // The upgrade's own response is not the client's traffic.
    this.bytesBase = raw ? raw.bytesWritten - raw.writableLength : 0;
    socket.on('pong', (data: Buffer) => this.onPong(data));
    this.pinger = setInterval(() => {
      if (!this.outstanding) this.ping();
    }, opts.intervalMs);
    this.pinger.unref();
    // The first round trip is known within one round trip of connecting, not an interval later.
    this.ping();
  }

  /** Whether the socket is open (a socket whose pong is overdue has been terminated). */
  alive(): boolean {
    return !this.stopped && this.socket.readyState === this.socket.OPEN;
  }

  figures(): LinkFigures {
    const bytes = this.raw ? this.raw.bytesWritten - this.raw.writableLength - this.bytesBase : 0;
    return {
      connectedAt: this.connectedAt,
      connectedS: round1((this.now() - this.openedAt) / 1000),
      rttMs: this.rttMs === null ? null : round1(this.rttMs),
      srttMs: this.srttMs === null ? null : round1(this.srttMs),
      bytesSent: Math.max(0, bytes),
    };
  }

  /** The socket closed: no more pings. */
  stop(): void {
    this.stopped = true;
    clearInterval(this.pinger);
    if (this.deadline) clearTimeout(this.deadline);
    this.deadline = null;
    this.outstanding = null;
  }

  private ping(): void {
    if (this.stopped || this.socket.readyState !== this.socket.OPEN) return;
    const payload = String(++this.serial);
    const o: Outstanding = { payload, wiredAt: this.now(), queued: this.socket.bufferedAmount };
    this.outstanding = o;
    // Timed from when the ping reached the connection, so a queue of output ahead of it in
    // tether's own buffers is not counted as the network's round trip.
    this.socket.ping(payload, undefined, (err?: Error) => {
      if (!err && this.outstanding === o) o.wiredAt = this.now();
    });
    this.arm(o);
  }

  private arm(o: Outstanding): void {
    this.deadline = setTimeout(() => {
      // Socket data that arrived during a stall of this process is read before `setImmediate`
      // runs: a pong waiting there is not taken for a missing one.
      setImmediate(() => this.overdue(o));
    }, this.pongTimeoutMs);
    this.deadline.unref();
  }

  private overdue(o: Outstanding): void {
    if (this.stopped || this.outstanding !== o) return;
    const queued = this.socket.bufferedAmount;
    if (queued < o.queued) {
      // The peer is taking bytes, slowly: the ping is behind them. Wait while the queue shrinks.
      o.queued = queued;
      this.arm(o);
      return;
    }
    this.socket.terminate();
  }

  private onPong(data: Buffer): void {
    const o = this.outstanding;
    if (!o || data.toString('latin1') !== o.payload) return;
    const rtt = Math.max(0, this.now() - o.wiredAt);
    this.rttMs = rtt;
    this.srttMs = this.srttMs === null ? rtt : this.srttMs + (rtt - this.srttMs) * RTT_SMOOTHING;
    this.outstanding = null;
    if (this.deadline) clearTimeout(this.deadline);
    this.deadline = null;
  }
}
