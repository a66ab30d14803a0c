/**
 * The guard that keeps the peer limits (peer-limits.ts) node does not keep itself: it counts
 * every connection from its TCP accept, refuses or evicts over the caps, and closes what
 * outlives its bound.
 *
 * Invariants: a connection is counted from its TCP accept (before any TLS) until it closes, as
 * unauthenticated until a request on it passes auth and as authenticated from then on, never
 * both. Over its address's cap a new connection is reset at once, before any TLS. With the
 * unauthenticated total full, a newcomer whose address already holds `perAddressWhenFull` is
 * reset too (the flood pays, not the daemon's CPU), and any other makes room by closing the oldest
 * connection of the address holding the most: a phone from an address of its own always gets
 * in. Every bound is checked every `checkIntervalMs`, so a connection outlives it by at most that.
 */
import type { IncomingMessage, Server as HttpServer } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from '../log.js';
import { addressKey, type PeerLimits } from './peer-limits.js';

interface Peer {
  readonly socket: Socket;
  readonly address: string;
  readonly endpoint: string;
  readonly at: number;
  authenticated: boolean;
  released: boolean;
}

/** A request body being read: how far it had come at the start of its current window. */
interface BodyWatch {
  readonly socket: Socket;
  bytes: number;
  at: number;
}

/** What the guard did since it started (the warning in the log says the same per minute). */
export interface PeerCounts {
  readonly unauthenticated: number;
  readonly authenticated: number;
  readonly refused: number;
  readonly evicted: number;
  readonly expired: number;
  readonly slowBodies: number;
  readonly unansweredUpgrades: number;
  readonly overAuthenticatedCap: number;
}

const endpointOf = (s: { remoteAddress?: string | undefined; remotePort?: number | undefined }): string | null =>
  s.remoteAddress === undefined || s.remotePort === undefined ? null : `${s.remoteAddress}|${s.remotePort}`;

/** How often the guard may say in the log what it refused or closed (only when it did). */
export const REPORT_EVERY_MS = 10_000;

export class PeerGuard {
  /** Every counted connection, by its remote endpoint (the raw and the TLS socket share it). */
  private readonly peers = new Map<string, Peer>();
  /** The unauthenticated ones, oldest first. */
  private readonly pending = new Set<Peer>();
  private readonly byAddress = new Map<string, Set<Peer>>();
  private authenticatedCount = 0;
  private readonly bodies = new Map<IncomingMessage, BodyWatch>();
  private readonly upgrades = new Map<Socket, number>();
  private counts = { refused: 0, evicted: 0, expired: 0, slowBodies: 0, unansweredUpgrades: 0, overAuthenticatedCap: 0 };
  private reported = { ...this.counts };
  private reportedAt = Number.NEGATIVE_INFINITY;
  /** The longest an unauthenticated connection lived, of those that ended since the last report. */
  private longestUnauthenticatedMs = 0;
  private timer: NodeJS.Timeout | null = null;
  private lastCheck: number | null = null;
  private skipped = false;

  constructor(
    readonly limits: PeerLimits,
    private readonly log: Logger,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Counts the server's connections from their TCP accept and starts the checks (stopped when it closes). */
  attach(server: HttpServer): void {
    // Before TLS wraps the socket, and in its place for a refused one: the server's own
    // listeners (TLS's, or node's HTTP) only ever see a connection the guard let in, so a refusal
    // costs no TLS socket, no handshake and no parser.
    const own = server.listeners('connection') as ((socket: Socket) => void)[];
    server.removeAllListeners('connection');
    server.on('connection', (socket: Socket) => {
      if (this.accepted(socket)) for (const listener of own) listener.call(server, socket);
    });
    server.on('upgrade', (_req: IncomingMessage, socket: Socket) => {
      this.upgrades.set(socket, this.now());
      socket.once('close', () => this.upgrades.delete(socket));
    });
    server.on('listening', () => {
      this.timer ??= setInterval(() => this.check(), this.limits.checkIntervalMs);
      this.timer.unref();
      // Out of descriptors, accept() fails: said in the log, never a crash of the daemon.
      server.on('error', (err) => this.log.warn({ err: err.message }, 'a connection could not be accepted'));
    });
    server.on('close', () => {
      if (this.timer) clearInterval(this.timer);
      this.timer = null;
    });
  }

  /**
   * A request on this socket passed auth: the connection leaves the unauthenticated counts.
   * False when the authenticated cap is full (the caller refuses the request and closes it).
   */
  authenticate(socket: { remoteAddress?: string | undefined; remotePort?: number | undefined }): boolean {
    const endpoint = endpointOf(socket);
    const peer = endpoint === null ? undefined : this.peers.get(endpoint);
    // Not a connection the guard counted (an injected request): nothing to move.
    if (!peer || peer.authenticated) return true;
    if (this.authenticatedCount >= this.limits.authenticated) {
      this.counts.overAuthenticatedCap++;
      return false;
    }
    this.leavePending(peer);
    peer.authenticated = true;
    this.authenticatedCount++;
    return true;
  }

  /** Whether a request on this connection passed auth (an injected request's socket counts as not). */
  isAuthenticated(socket: { remoteAddress?: string | undefined; remotePort?: number | undefined }): boolean {
    const endpoint = endpointOf(socket);
    return endpoint !== null && this.peers.get(endpoint)?.authenticated === true;
  }

  /** A request's headers were read: its body, if it has one and its connection is authenticated, must keep coming. */
  requestStarted(req: IncomingMessage): void {
    const length = req.headers['content-length'];
    const hasBody = req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
    if (!hasBody || req.complete || typeof req.headers.upgrade === 'string') return;
    const endpoint = endpointOf(req.socket);
    // An unauthenticated connection's body is bounded by its life (`unauthenticatedMs`).
    if (endpoint === null || this.peers.get(endpoint)?.authenticated !== true) return;
    this.bodies.set(req, { socket: req.socket, bytes: req.socket.bytesRead, at: this.now() });
  }

  /** The 101 of an upgrade is being written: it completed. */
  upgraded(socket: Socket): void {
    this.upgrades.delete(socket);
  }

  figures(): PeerCounts {
    return { unauthenticated: this.pending.size, authenticated: this.authenticatedCount, ...this.counts };
  }

  /** Counts a new connection, or refuses it (false: it was reset). */
  private accepted(socket: Socket): boolean {
    const endpoint = endpointOf(socket);
    // A refused socket has no other listener: whatever it reports on its way out is not a crash.
    const refuse = () => {
      socket.on('error', () => undefined);
      socket.resetAndDestroy();
      return false;
    };
    // The peer was gone before the daemon saw it.
    if (endpoint === null) return refuse();
    const address = addressKey(socket.remoteAddress!);
    const mine = this.byAddress.get(address);
    const held = mine?.size ?? 0;
    const full = this.pending.size >= this.limits.unauthenticated;
    if (held >= this.limits.perAddress || (full && held >= this.limits.perAddressWhenFull)) {
      this.counts.refused++;
      return refuse();
    }
    if (full) this.evict();
    const peer: Peer = { socket, address, endpoint, at: this.now(), authenticated: false, released: false };
    this.peers.set(endpoint, peer);
    this.pending.add(peer);
    const set = mine ?? new Set<Peer>();
    set.add(peer);
    if (!mine) this.byAddress.set(address, set);
    socket.once('close', () => this.release(peer));
    return true;
  }

  /** Makes room: the oldest unauthenticated connection of the address that holds the most. */
  private evict(): void {
    let biggest: Set<Peer> | null = null;
    for (const set of this.byAddress.values()) if (!biggest || set.size > biggest.size) biggest = set;
    const oldest = biggest?.values().next().value;
    if (!oldest) return;
    this.counts.evicted++;
    this.close(oldest);
  }

  private close(peer: Peer): void {
    this.release(peer);
    peer.socket.resetAndDestroy();
  }

  private leavePending(peer: Peer): void {
    if (!this.pending.delete(peer)) return;
    const set = this.byAddress.get(peer.address);
    set?.delete(peer);
    if (set?.size === 0) this.byAddress.delete(peer.address);
  }

  /** The connection no longer counts (closed, or being closed here); safe to call again. */
  private release(peer: Peer): void {
    if (peer.released) return;
    peer.released = true;
    if (this.peers.get(peer.endpoint) === peer) this.peers.delete(peer.endpoint);
    if (peer.authenticated) this.authenticatedCount--;
    else {
      this.leavePending(peer);
      this.longestUnauthenticatedMs = Math.max(this.longestUnauthenticatedMs, this.now() - peer.at);
    }
  }

  /** Every `checkIntervalMs`: the bounds node does not keep itself. */
  private check(): void {
    const now = this.now();
    const last = this.lastCheck;
    this.lastCheck = now;
    if (last !== null && now - last > 2 * this.limits.checkIntervalMs && !this.skipped) {
      // The daemon itself stood still (a busy machine): what peers sent meanwhile waits unread in
      // the kernel. Nobody is judged on this turn; the windows start again, and the next turn,
      // after those bytes were read, judges (even if the daemon is still that busy).
      this.skipped = true;
      for (const watch of this.bodies.values()) {
        watch.bytes = watch.socket.bytesRead;
        watch.at = now;
      }
      return;
    }
    this.skipped = false;
    for (const peer of this.pending) {
      if (now - peer.at < this.limits.unauthenticatedMs) break; // oldest first: the rest are younger
      this.counts.expired++;
      this.close(peer);
    }
    for (const [socket, at] of this.upgrades) {
      if (now - at < this.limits.upgradeMs) continue;
      this.upgrades.delete(socket);
      this.counts.unansweredUpgrades++;
      socket.destroy();
    }
    for (const [req, watch] of this.bodies) this.checkBody(req, watch, now);
    this.report(now);
  }

  private checkBody(req: IncomingMessage, watch: BodyWatch, now: number): void {
    if (req.complete || req.destroyed || watch.socket.destroyed) {
      this.bodies.delete(req);
      return;
    }
    if (now - watch.at < this.limits.bodyWindowMs) return;
    const read = watch.socket.bytesRead;
    // Bytes the daemon has not taken yet (a slow disk): the wait is the daemon's, not the peer's.
    const heldHere = req.readableLength > 0;
    if (!heldHere && read - watch.bytes < this.limits.bodyMinBytes) {
      this.bodies.delete(req);
      this.counts.slowBodies++;
      watch.socket.destroy();
      return;
    }
    watch.bytes = read;
    watch.at = now;
  }

  private report(now: number): void {
    if (now - this.reportedAt < REPORT_EVERY_MS) return;
    const since = Object.fromEntries(Object.entries(this.counts).map(([k, v]) => [k, v - this.reported[k as keyof typeof this.counts]]));
    if (Object.values(since).every((n) => n === 0)) return;
    this.reportedAt = now;
    this.reported = { ...this.counts };
    const longestUnauthenticatedMs = Math.round(this.longestUnauthenticatedMs);
    this.longestUnauthenticatedMs = 0;
    this.log.warn(
      { ...since, longestUnauthenticatedMs, unauthenticated: this.pending.size, authenticated: this.authenticatedCount },
      'connections refused or closed by the connection limits since the last such line (docs/reliability.md)',
    );
  }
}
