/**
 * Authentication of every route, WebSocket upgrades included: `Authorization: Bearer <t>` or
 * `?token=<t>`. Registered on the root instance (not encapsulated), as an `onRequest` hook, so
 * it runs before any body is read and before @fastify/websocket completes an upgrade: a refused
 * upgrade is an HTTP 401, never an open socket. A route opts out only with
 * `config: { auth: 'none' }` (the pairing route, authenticated by its pairing token).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TokenVerifier, VerifiedToken } from './handles.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The token that authenticated this request (undefined on routes that opt out). */
    tetherToken?: VerifiedToken;
  }
  interface FastifyContextConfig {
    auth?: 'none';
  }
}

/** The token a request carries, from the header or the query string. */
export function tokenOf(req: FastifyRequest): string | null {
  const header = req.headers.authorization;
  if (typeof header === 'string') {
    const m = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
    return m ? m[1]! : null;
  }
  const q = req.url.indexOf('?');
  if (q < 0) return null;
  const value = new URLSearchParams(req.url.slice(q + 1)).get('token');
  return value === null || value === '' ? null : value;
}

function refuse(reply: FastifyReply): FastifyReply {
  return reply
    .code(401)
    .header('www-authenticate', 'Bearer')
    .send({ error: 'unauthorized', message: 'a valid token is required: Authorization: Bearer <token> or ?token=<token>' });
}

/** Adds the authentication hook to the root instance. */
export function registerAuth(app: FastifyInstance, tokens: TokenVerifier): void {
  app.addHook('onRequest', async (req, reply) => {
    if (req.routeOptions.config.auth === 'none') return;
    const token = tokenOf(req);
    const verified = token === null ? null : tokens.verify(token);
    if (!verified) return refuse(reply);
    req.tetherToken = verified;
  });
}
