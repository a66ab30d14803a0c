/**
 * The live WebSocket connections, by the token that opened them and by session, so that
 * revoking a token (4401) or deleting a session (4404) closes exactly those connections; and
 * each device's comings and goings (a device is a token: one per paired phone), so that its
 * reconnects and the time it was away can be shown.
 *
 * Invariant: a connection is registered for as long as its socket is open; closing it here
 * removes it, and a close on an already-closed socket does nothing. A device is away from the
 * moment its last stream or side connection goes until its next one comes.
 */
import type { WebSocket } from 'ws';
import { CLOSE_CODES } from '../../errors.js';
import type { ClientConnection } from '../../service/health/health.js';
import type { LinkFigures } from './keepalive.js';
import type { TokenStore } from '../../auth/token-store.js';
import type { Logger } from '../../log.js';
import { compareSessionNames } from '../../protocol/session-name.js';

/**
 * What ends a socket after an error, for every WebSocket route: a protocol error (bad UTF-8, a
 * frame over the limit) has already started ws's close with its code (1007, 1009), and that
 * close frame may still wait behind a compressed frame, so it is left to finish (ws ends the
 * socket within its close timeout); cutting it off would show the client 1006 instead. Any
 * other error ends the socket at once.
 */
export function endSocketAfterError(socket: WebSocket): void {
  if (socket.readyState !== socket.CLOSING) socket.terminate();
}

/** What the registry needs of one connection. */
export interface RegisteredConnection {
  readonly tokenId: string;
  /** The session it watches; '' for an /ops viewer. */
  readonly sessionId: string;
  /** `stream` counts for "the device is in the foreground"; `side` and `ops` (an /ops viewer) do not. */
  readonly kind: 'stream' | 'side' | 'ops';
  close(code: number, reason: string): void;
  /** Whether the socket is open and its pong not overdue (a silent socket does not count). */
  alive?(): boolean;
  /** Its figures (stream and side connections): the link's, and its stream client's state. */
  figures?(): ConnectionFigures;
}

/** What a connection reports of itself; the registry adds its device's reconnects. */
export interface ConnectionFigures extends LinkFigures {
  readonly device: string;
  readonly actor: string | null;
  readonly state: string | null;
}

/** A device's comings and goings (monotonic milliseconds). */
interface DeviceAway {
  goneAt: number | null;
  reconnects: number;
  awayMs: number;
  lastAwayMs: number | null;
}

/** Devices whose comings and goings are remembered; past it the one gone longest is forgotten. */
export const MAX_DEVICES_REMEMBERED = 1000;

const isClient = (c: RegisteredConnection) => c.kind !== 'ops';

export class ConnectionRegistry {
  private readonly all = new Set<RegisteredConnection>();
  /** By token id, in the order they were last touched (a Map keeps insertion order). */
  private readonly devices = new Map<string, DeviceAway>();

  /** `now` is a monotonic clock in milliseconds. */
  constructor(private readonly now: () => number = () => performance.now()) {}

  /** Registers a connection; the returned function removes it (call it on close). */
  add(conn: RegisteredConnection): () => void {
    if (isClient(conn) && !this.hasClientOf(conn.tokenId)) this.arrived(conn.tokenId);
    this.all.add(conn);
    return () => this.remove(conn);
  }

  /** The live stream and side connections with their figures, by session, oldest first. */
  clients(): ClientConnection[] {
    const out: ClientConnection[] = [];
    for (const c of this.all) {
      if (!isClient(c) || (c.alive && !c.alive()) || !c.figures) continue;
      const f = c.figures();
      const d = this.devices.get(c.tokenId);
      out.push({
        session: c.sessionId,
        kind: c.kind === 'side' ? 'side' : 'stream',
        actor: f.actor,
        device: f.device,
        tokenId: c.tokenId,
        connectedAt: f.connectedAt,
        connectedS: f.connectedS,
        rttMs: f.rttMs,
        srttMs: f.srttMs,
        bytesSent: f.bytesSent,
        state: f.state,
        behind: f.state === 'behind',
        reconnects: d?.reconnects ?? 0,
        awayMs: Math.round(d?.awayMs ?? 0),
        lastAwayMs: d?.lastAwayMs === undefined || d.lastAwayMs === null ? null : Math.round(d.lastAwayMs),
      });
    }
    return out.sort((a, b) => compareSessionNames(a.session, b.session) || b.connectedS - a.connectedS);
  }

  /** Closes every connection opened with this token (it was revoked); its device is forgotten. */
  closeToken(tokenId: string, code: number = CLOSE_CODES.tokenRevoked, reason = 'token revoked'): number {
    const n = this.closeWhere((c) => c.tokenId === tokenId, code, reason);
    this.devices.delete(tokenId);
    return n;
  }

  /** Closes every connection of this session (it was deleted or ended). */
  closeSession(sessionId: string, code: number = CLOSE_CODES.sessionEnded, reason = 'session ended'): number {
    return this.closeWhere((c) => c.sessionId === sessionId, code, reason);
  }

  /** Closes every connection (the daemon is stopping). */
  closeAll(code: number = CLOSE_CODES.goingAway, reason = 'tether is stopping'): number {
    return this.closeWhere(() => true, code, reason);
  }

  /**
   * The live clients of a session, streams and side connections (the session list's `clients`).
   * A socket whose pong is overdue is not counted: it is being closed. Counted without building
   * each connection's figures: the list asks once per session.
   */
  liveClients(sessionId: string): number {
    let n = 0;
    for (const c of this.all) if (isClient(c) && c.sessionId === sessionId && (!c.alive || c.alive())) n++;
    return n;
  }

  /** Whether the device of this token has a live stream open: the app is in the foreground (push stays quiet). */
  inForeground(tokenId: string): boolean {
    return this.count({ kind: 'stream', tokenId, liveOnly: true }) > 0;
  }

  /** Live connections, optionally only one kind or one token's. */
  count(filter: { kind?: RegisteredConnection['kind']; tokenId?: string; sessionId?: string; liveOnly?: boolean } = {}): number {
    let n = 0;
    for (const c of this.all) {
      if (filter.liveOnly && c.alive && !c.alive()) continue;
      if (filter.kind !== undefined && c.kind !== filter.kind) continue;
      if (filter.tokenId !== undefined && c.tokenId !== filter.tokenId) continue;
      if (filter.sessionId !== undefined && c.sessionId !== filter.sessionId) continue;
      n++;
    }
    return n;
  }

  private closeWhere(match: (c: RegisteredConnection) => boolean, code: number, reason: string): number {
    const hit = [...this.all].filter(match);
    for (const c of hit) {
      this.remove(c);
      c.close(code, reason);
    }
    return hit.length;
  }

  private remove(conn: RegisteredConnection): void {
    if (!this.all.delete(conn)) return;
    if (isClient(conn) && !this.hasClientOf(conn.tokenId)) this.left(conn.tokenId);
  }

  private hasClientOf(tokenId: string): boolean {
    for (const c of this.all) if (isClient(c) && c.tokenId === tokenId) return true;
    return false;
  }

  /** The device's first connection after none: a reconnect when it had been here before. */
  private arrived(tokenId: string): void {
    const d = this.devices.get(tokenId);
    if (!d) {
      this.touch(tokenId, { goneAt: null, reconnects: 0, awayMs: 0, lastAwayMs: null });
      return;
    }
    if (d.goneAt === null) return;
    const away = Math.max(0, this.now() - d.goneAt);
    d.goneAt = null;
    d.reconnects++;
    d.awayMs += away;
    d.lastAwayMs = away;
    this.touch(tokenId, d);
  }

  /** The device's last connection went: it is away from now. */
  private left(tokenId: string): void {
    const d = this.devices.get(tokenId);
    if (d) this.touch(tokenId, { ...d, goneAt: this.now() });
  }

  private touch(tokenId: string, d: DeviceAway): void {
    this.devices.delete(tokenId);
    this.devices.set(tokenId, d);
    if (this.devices.size <= MAX_DEVICES_REMEMBERED) return;
    // The first one gone is the one touched longest ago (a connected device is never dropped).
    for (const [id, other] of this.devices) {
      if (other.goneAt !== null) {
        this.devices.delete(id);
        return;
      }
    }
  }
}

/** A token revoked (by the API or by `tether auth revoke`) loses its open sockets at once; returns the undo. */
export function closeConnectionsOfRevokedTokens(
  tokens: Pick<TokenStore, 'watchRevocations'>,
  connections: ConnectionRegistry,
  log: Logger,
): () => void {
  return tokens.watchRevocations((record) => {
    const closed = connections.closeToken(record.id);
    log.info({ tokenId: record.id, name: record.name, closed }, 'token revoked: its connections are closed');
  });
}
