/**
 * Authentication of every route, WebSocket upgrades included (docs/api.md):
 * `Authorization: Bearer <t>` or `?token=<t>`; anything else is a 401
 * `{"error":"unauthorized"}` with `WWW-Authenticate: Bearer`, answered before any work.
 *
 * Invariant: the check is an `onRequest` hook on the root instance (the plugin skips
 * encapsulation, as fastify-plugin would), so it runs before any body is read and before
 * @fastify/websocket completes an upgrade: a refused upgrade is an HTTP 401 on a socket that is
 * then closed, never an open WebSocket. A route opts out only with `config: { auth: 'none' }`
 * (the pairing route, which checks its pairing token itself).
 *
 * Only an authenticated peer keeps its connection: a refused request's connection, and the
 * connection of a request on a route that opts out, close after the answer, so a peer without a
 * token never reaches a keep-alive (docs/reliability.md "Peers that hold sockets"). A request that
 * passes auth moves its connection out of the unauthenticated counts (`peers`).
 */
import type { FastifyPluginCallback, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError } from '../errors.js';
import { httpFailure } from './error-translation.js';
import type { TokenVerifier, VerifiedToken } from './handles.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The token that authenticated this request; null on a route with `auth: 'none'`. */
    tetherToken: VerifiedToken | null;
  }
  interface FastifyContextConfig {
    /** 'none': this route authenticates by other means (POST /pair). */
    auth?: 'none';
  }
}

/** What auth tells the connection limits (transport/peer-limits.ts `PeerGuard`). */
export interface AuthenticatedConnections {
  /** A request on this socket passed auth; false when no more authenticated connections fit. */
  authenticate(socket: { remoteAddress?: string | undefined; remotePort?: number | undefined }): boolean;
  readonly limits: { readonly authenticated: number };
}

export interface AuthPluginOptions {
  readonly tokens: TokenVerifier;
  readonly peers?: AuthenticatedConnections;
}

const BEARER = /^Bearer +(\S+) *$/i;

/**
 * The token a request carries: a Bearer `Authorization` header wins; otherwise `?token=`.
 * Another scheme in the header (a proxy's Basic auth) is not ours and is passed over.
 */
export function tokenOf(req: FastifyRequest): string | null {
  const header = req.headers.authorization;
  if (typeof header === 'string' && /^Bearer\b/i.test(header)) return BEARER.exec(header)?.[1] ?? null;
  const q = req.url.indexOf('?');
  if (q < 0) return null;
  const value = new URLSearchParams(req.url.slice(q + 1)).get('token');
  return value === null || value === '' ? null : value;
}

/** A request that asks to switch protocols (a WebSocket handshake). */
const isUpgrade = (req: FastifyRequest): boolean => typeof req.headers.upgrade === 'string';

/** The connection ends after this answer: node closes it once the answer is written. */
function closeAfter(req: FastifyRequest, reply: FastifyReply): void {
  reply.header('connection', 'close');
  // An upgrade request's socket has left node's HTTP parser: nothing closes it after the
  // answer unless someone does. @fastify/websocket does, but only when its own onRequest hook
  // ran before this one; closing it here keeps the refusal safe in any registration order.
  if (isUpgrade(req)) reply.raw.once('finish', () => req.raw.socket.destroy());
}

function refuse(req: FastifyRequest, reply: FastifyReply, error: DomainError): FastifyReply {
  closeAfter(req, reply);
  const failure = httpFailure(error);
  if (failure.status === 401) reply.header('www-authenticate', 'Bearer');
  return reply.code(failure.status).send(failure.body);
}

const auth: FastifyPluginCallback<AuthPluginOptions> = (app, { tokens, peers }, done) => {
  app.decorateRequest('tetherToken', null);
  app.addHook('onRequest', async (req, reply) => {
    if (req.routeOptions.config.auth === 'none') {
      // Authenticated by other means, later (a pairing token in the body): the connection is not.
      closeAfter(req, reply);
      return;
    }
    const token = tokenOf(req);
    const verified = token === null ? null : tokens.verify(token);
    if (!verified)
      return refuse(
        req,
        reply,
        new DomainError('unauthorized', 'a valid token is required: Authorization: Bearer <token>, or ?token=<token>'),
      );
    if (peers && !peers.authenticate(req.raw.socket))
      return refuse(
        req,
        reply,
        new DomainError('rate-limited', `too many open connections: at most ${peers.limits.authenticated} authenticated ones at once`),
      );
    // Only the identity travels with the request: never the hash, never the plaintext.
    req.tetherToken = { id: verified.id, name: verified.name };
    tokens.touch?.(verified.id);
  });
  done();
};

/** The authentication plugin; register it on the root instance, before the routes. */
export const authPlugin: FastifyPluginCallback<AuthPluginOptions> = Object.assign(auth, {
  [Symbol.for('skip-override')]: true,
  [Symbol.for('fastify.display-name')]: 'tether-auth',
});
