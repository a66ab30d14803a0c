/**
 * The HTTP(S) server: fastify with the typebox type provider, @fastify/websocket (permessage-
 * deflate on), the error body, authentication on every route, and the route plugins.
 *
 * Invariant: tokens never reach a log line: fastify's own request logging is off, and the one
 * line per request written here carries the path with any `token` value redacted.
 */
import websocket from '@fastify/websocket';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { registerAuth } from './auth.plugin.js';
import { registerErrorHandling } from './errors.plugin.js';
import type { HealthSource, TokenVerifier } from './handles.js';
import { healthRoutes } from './health.routes.js';
import { sessionsRoutes, type SessionsHandle } from './sessions.routes.js';

/** Largest request body (1 MiB): a paste of a large file fits; more is a 413. */
export const BODY_LIMIT_BYTES = 1024 * 1024;

export interface ServerOptions {
  readonly logger?: FastifyBaseLogger;
  readonly tokens: TokenVerifier;
  readonly health: HealthSource;
  readonly sessions?: SessionsHandle;
  readonly bodyLimit?: number;
  readonly tls?: { key: string | Buffer; cert: string | Buffer };
  /** More routes (the stream), registered after auth. */
  readonly plugins?: readonly ((app: FastifyInstance) => Promise<void> | void)[];
}

/** The request path with the value of any `token` parameter replaced. */
export function redactUrl(url: string): string {
  return url.replace(/([?&]token=)[^&#]*/gi, '$1[redacted]');
}

export async function buildServer(opts: ServerOptions): Promise<FastifyInstance> {
  const app = Fastify({
    ...(opts.logger ? { loggerInstance: opts.logger } : { logger: false }),
    // fastify's own request lines carry the raw URL (and so a ?token=): ours, below, redact it.
    logController: new LogController({ disableRequestLogging: true }),
    // Shutting down must not wait on a client: they reconnect and resume.
    forceCloseConnections: true,
    bodyLimit: opts.bodyLimit ?? BODY_LIMIT_BYTES,
    // Wrong types and unknown fields are errors, not silently coerced or dropped.
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, useDefaults: false } },
    ...(opts.tls ? { https: { key: opts.tls.key, cert: opts.tls.cert } } : {}),
  }).withTypeProvider<TypeBoxTypeProvider>();
  registerErrorHandling(app);
  // Clients send a JSON content type on bodiless requests (DELETE); an empty body is no body.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    if (body === '') {
      done(null, undefined);
      return;
    }
    void parseJson(req, typeof body === 'string' ? body : body.toString('utf8'), done);
  });
  // @fastify/websocket's own hooks mark upgrade requests and destroy their sockets after a
  // response; they must run before auth answers 401, or a refused upgrade leaks its socket
  // (and server.close() waits on it forever). So the plugin is registered first.
  await app.register(websocket, { options: { perMessageDeflate: { threshold: 1024 }, maxPayload: 2 * 1024 * 1024 } });
  registerAuth(app, opts.tokens);
  app.addHook('onResponse', async (req, reply) => {
    req.log.info({ method: req.method, url: redactUrl(req.url), status: reply.statusCode, ms: Math.round(reply.elapsedTime) }, 'request');
  });
  await app.register(healthRoutes, { health: opts.health });
  if (opts.sessions) await app.register(sessionsRoutes, { sessions: opts.sessions });
  for (const plugin of opts.plugins ?? []) await plugin(app);
  return app;
}

/** The port is taken: the one line says which and where to change it. */
export class PortInUseError extends Error {
  constructor(host: string, port: number, configFile: string) {
    super(`port ${port} on ${host} is in use: set bindAddress in ${configFile} to a free port (or port 0 for any)`);
    this.name = 'PortInUseError';
  }
}

export async function listen(app: FastifyInstance, at: { host: string; port: number }, configFile: string): Promise<void> {
  try {
    await app.listen({ host: at.host, port: at.port });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') throw new PortInUseError(at.host, at.port, configFile);
    throw err;
  }
}
