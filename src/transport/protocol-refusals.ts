/**
 * Requests refused before any route sees them, answered in the one error shape like every other
 * refusal (docs/api.md "Error codes"): bytes node's HTTP parser cannot read (a 400; headers past
 * node's limit, a 431; a request not whole in time, a 408), a URL fastify's router cannot read
 * (a broken percent-encoding, a path part longer than the router takes), a WebSocket handshake
 * ws refuses, and an upgrade sent to a route of the other kind.
 *
 * Invariants: a request that cannot be read is refused whatever its token (nothing was read to
 * authenticate), and its refusal's message starts with `UNREADABLE`; an answer is written only
 * where no other answer has begun on the connection, and the connection is closed after it.
 */
import { STATUS_CODES, type IncomingMessage, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyError, FastifyPluginCallback, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { DomainError } from '../errors.js';
import { httpFailure } from './error-translation.js';

/** How every refusal of a request that could not be read begins. */
export const UNREADABLE = 'the request cannot be read';

/** A raw HTTP answer with the failure's status and body, for a socket no fastify reply owns. */
function rawAnswer(err: DomainError): string {
  const { status, body } = httpFailure(err);
  const text = JSON.stringify(body);
  return `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`;
}

/** The refusal of what node's parser could not take, by its error code. */
function parserRefusal(code: string | undefined): DomainError {
  if (code === 'HPE_HEADER_OVERFLOW') return new DomainError('headers-too-large', `${UNREADABLE}: its headers are larger than 16 KiB`);
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return new DomainError('request-timeout', `${UNREADABLE}: it did not arrive whole in time`);
  return new DomainError('invalid', `${UNREADABLE} as HTTP/1.1 (${code ?? 'a parse error'})`);
}

/** An error of node's HTTP parser or of its request bounds: the peer spoke HTTP and gets an answer. */
const isHttpError = (code: string | undefined): boolean =>
  code !== undefined && (code.startsWith('HPE_') || code === 'ERR_HTTP_REQUEST_TIMEOUT');

/**
 * fastify's `clientErrorHandler`: node's parser refused the bytes. Answers as node itself would
 * (only when no answer on the connection has begun), in tether's shape, and closes. Any other
 * client error (a TLS handshake that failed or ran out of time, which node hands to the same
 * handler) is closed at once: an answer written to a socket whose handshake never ended would
 * wait for it and keep the socket open past its bound.
 */
export function refuseUnreadable(err: Error & { code?: string }, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  if (!isHttpError(err.code)) {
    socket.destroy();
    return;
  }
  const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } | null })._httpMessage;
  if (socket.writable && !inFlight?.headersSent) socket.end(rawAnswer(parserRefusal(err.code)));
  else socket.destroy();
}

/**
 * fastify's `frameworkErrors`: its router could not read the URL (a broken percent-encoding, a
 * path part longer than it takes). A 400, and an upgrade's socket closed after it.
 */
export function refuseUnroutable(err: FastifyError, req: FastifyRequest, reply: FastifyReply): void {
  const why =
    err.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 'a part of its path is longer than 100 characters' : 'its URL is not valid percent-encoding';
  const failure = httpFailure(new DomainError('invalid', `${UNREADABLE}: ${why}`));
  if (typeof req.headers.upgrade === 'string') {
    reply.header('connection', 'close');
    reply.raw.once('finish', () => req.raw.socket.destroy());
  }
  void reply.code(failure.status).send(failure.body);
}

/** ws's `wsClientError`: a handshake it refuses (no or a bad key or version, offers it cannot read). */
export function refuseHandshake(err: Error, socket: Duplex, _req: IncomingMessage): void {
  if (socket.writable) socket.end(rawAnswer(new DomainError('invalid', `the WebSocket handshake is refused: ${err.message}`)));
  else socket.destroy();
}

/**
 * An `Expect` other than `100-continue` is passed over and the request served as any other (node
 * would answer it with an empty 417 before tether saw it, token or not). RFC 9110 lets a server
 * ignore an expectation it does not know.
 */
export function ignoreExpectations(server: Pick<Server, 'on' | 'emit'>): void {
  server.on('checkExpectation', (req: IncomingMessage, res: unknown) => server.emit('request', req, res));
}

type Hook = (req: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => void;

/** An upgrade routed to a plain route, or a plain request to a WebSocket route: a 400 before anything else. */
function upgradeRule(route: RouteOptions): Hook {
  const websocket = (route as RouteOptions & { websocket?: boolean }).websocket === true;
  return (req, _reply, done) => {
    const upgrade = (req as FastifyRequest & { ws?: boolean }).ws === true;
    if (upgrade === websocket) return done();
    done(
      websocket
        ? new DomainError(
            'invalid',
            `${req.method} ${route.url} is a WebSocket: it takes an upgrade (Connection: Upgrade, Upgrade: websocket)`,
          )
        : new DomainError('invalid', `${req.method} ${route.url} takes no WebSocket upgrade`),
    );
  };
}

/**
 * node's own check of the Host header, off (`requireHostHeader: false`): it answers an empty 400
 * before tether sees the request. `hostRule` makes the same refusal in tether's shape.
 */
export const NODE_SERVER_OPTIONS = { requireHostHeader: false } as const;

/** An HTTP/1.1 request without a Host header cannot be read (RFC 9112 3.2), token or not. */
const hostRule: Hook = (req, _reply, done) => {
  const raw = req.raw;
  if (raw.httpVersionMajor === 1 && raw.httpVersionMinor >= 1 && raw.headers.host === undefined)
    return done(new DomainError('invalid', `${UNREADABLE}: an HTTP/1.1 request must carry a Host header`));
  done();
};

const guard: FastifyPluginCallback = (app, _opts, done) => {
  app.addHook('onRequest', hostRule);
  app.addHook('onRoute', (route) => {
    // After the schema (a bad field is named first), before the route's own checks and handler.
    const own = route.preHandler === undefined ? [] : [route.preHandler].flat();
    route.preHandler = [upgradeRule(route), ...own] as RouteOptions['preHandler'];
  });
  done();
};

/**
 * Every route answers only its own kind of request, and only to a request with a Host: register
 * on the root instance after @fastify/websocket (whose hook marks upgrades), before auth and the
 * routes.
 */
export const upgradeGuard: FastifyPluginCallback = Object.assign(guard, {
  [Symbol.for('skip-override')]: true,
  [Symbol.for('fastify.display-name')]: 'tether-upgrade-guard',
});
