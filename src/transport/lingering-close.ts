/**
 * The lingering close (RFC 9112 9.6): an answer given before its request's body was read whole
 * (a 413 for a body over the limit, a refused upload, a 401 to a request with a body) closes its
 * connection in stages, so that every client reads it. The answer says `Connection: close`; once
 * it is written the daemon half-closes (its FIN follows the answer), then keeps reading and
 * discarding what the client still sends, and closes the rest when the client closes its side or
 * at the first bound: `lingerMs` after the answer, or past `lingerBytes` read after it
 * (`lingerBytesUnauthenticated` on a connection no request authenticated).
 *
 * Why: closed at once, a connection that still receives a body is reset by the kernel, and the
 * reset reaches a client while it is still writing. curl reads the answer anyway; Node's fetch
 * (undici) fails the request with `EPIPE` and never sees it, and a reset can erase an answer the
 * client had received but not yet read.
 *
 * Invariants: only a connection whose request body was unread when its answer was written
 * lingers, and it never serves another request (one that comes is closed unanswered); a lingering
 * connection is closed within `lingerMs` whatever the peer does (checked by a timer, not by the
 * peer's traffic), and the bytes it is read are those of the request's body.
 */
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyPluginCallback } from 'fastify';

export interface LingerLimits {
  /** A lingering connection is closed this long after its answer was handed to the socket. */
  readonly lingerMs: number;
  /** ...or once the body it reads after its answer passes this many bytes. */
  readonly lingerBytes: number;
  /** The same on a connection no request authenticated (a 401 to a body). */
  readonly lingerBytesUnauthenticated: number;
}

export interface LingeringCloseOptions {
  readonly limits: LingerLimits;
  /** Whether a request on this connection passed auth (transport/peer-limits.ts `PeerGuard`). */
  readonly authenticated: (socket: Socket) => boolean;
}

/** Whether the request's body is still (partly) on its way: an answer now must close the connection. */
export const bodyUnread = (req: IncomingMessage): boolean => !req.complete;

/** The connections lingering now; one per socket, forgotten when it closes. */
class Lingerer {
  private readonly sockets = new Set<Socket>();

  constructor(private readonly opts: LingeringCloseOptions) {}

  has(socket: Socket): boolean {
    return this.sockets.has(socket);
  }

  /**
   * Takes over the close of `socket` after the answer to `req`. Node closes a `Connection: close`
   * answer's socket with `socket.destroySoon()` (end, then destroy once the answer is written),
   * which resets a connection whose body is still coming: for this one socket, that call becomes
   * the lingering close.
   */
  takeClose(socket: Socket, req: IncomingMessage): void {
    const { limits } = this.opts;
    const bound = this.opts.authenticated(socket) ? limits.lingerBytes : limits.lingerBytesUnauthenticated;
    let read = 0;
    // The body's bytes are read and dropped, and counted: read here before node would "dump" the
    // body (which drops it uncounted), and on also when it had stopped being read (its buffer
    // full), so the socket reads on and the client's close is seen.
    req.removeAllListeners('data');
    req.on('data', (chunk: Buffer) => {
      read += chunk.length;
      if (read > bound) socket.destroy();
    });
    req.resume();
    socket.destroySoon = () => this.linger(socket);
  }

  private linger(socket: Socket): void {
    if (socket.destroyed) return;
    this.sockets.add(socket);
    const timer = setTimeout(() => socket.destroy(), this.opts.limits.lingerMs);
    timer.unref();
    socket.once('close', () => {
      clearTimeout(timer);
      this.sockets.delete(socket);
    });
    // The client closed its side: the rest closes as soon as the answer is out.
    socket.once('end', () => (socket.writableFinished ? socket.destroy() : socket.once('finish', () => socket.destroy())));
    socket.end();
  }
}

const lingeringClose: FastifyPluginCallback<LingeringCloseOptions> = (app, opts, done) => {
  const lingerer = new Lingerer(opts);
  app.addHook('onRequest', (req, reply, next) => {
    const socket = req.raw.socket;
    // A client that sends another request on a connection its answer closed: closed unanswered.
    if (lingerer.has(socket)) {
      socket.destroy();
      void reply.hijack();
      return;
    }
    // Before node's own 'finish' listener, which closes the connection.
    reply.raw.prependOnceListener('finish', () => {
      if (bodyUnread(req.raw) && !socket.destroyed) lingerer.takeClose(socket, req.raw);
    });
    next();
  });
  app.addHook('onSend', (req, reply, payload, next) => {
    if (bodyUnread(req.raw)) reply.header('connection', 'close');
    next(null, payload);
  });
  done();
};

/**
 * The lingering close of answers given before their body was read: register it on the root
 * instance before every other plugin, so its hooks run first.
 */
export const lingeringClosePlugin: FastifyPluginCallback<LingeringCloseOptions> = Object.assign(lingeringClose, {
  [Symbol.for('skip-override')]: true,
  [Symbol.for('fastify.display-name')]: 'tether-lingering-close',
});
