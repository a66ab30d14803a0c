/**
 * The live WebSocket connections, by the token that opened them and by session, so that
 * revoking a token (4401) or deleting a session (4404) closes exactly those connections.
 *
 * Invariant: a connection is registered for as long as its socket is open; closing it here
 * removes it, and a close on an already-closed socket does nothing.
 */
import type { WebSocket } from 'ws';
import { CLOSE_CODES } from '../errors.js';

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
  /** Whether the peer was heard from within its ping deadline (a silent socket does not count). */
  alive?(): boolean;
}

export class ConnectionRegistry {
  private readonly all = new Set<RegisteredConnection>();

  /** Registers a connection; the returned function removes it (call it on close). */
  add(conn: RegisteredConnection): () => void {
    this.all.add(conn);
    return () => this.all.delete(conn);
  }

  /** Closes every connection opened with this token (it was revoked). */
  closeToken(tokenId: string, code: number = CLOSE_CODES.tokenRevoked, reason = 'token revoked'): number {
    return this.closeWhere((c) => c.tokenId === tokenId, code, reason);
  }

  /** Closes every connection of this session (it was deleted or ended). */
  closeSession(sessionId: string, code: number = CLOSE_CODES.sessionEnded, reason = 'session ended'): number {
    return this.closeWhere((c) => c.sessionId === sessionId, code, reason);
  }

  /** Closes every connection (the daemon is stopping). */
  closeAll(code: number = CLOSE_CODES.goingAway, reason = 'tether is stopping'): number {
    return this.closeWhere(() => true, code, reason);
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
      this.all.delete(c);
      c.close(code, reason);
    }
    return hit.length;
  }
}
