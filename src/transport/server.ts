/**
 * The HTTP(S) server: fastify with the typebox type provider, @fastify/websocket
 * (permessage-deflate on), one error body, authentication on every route and upgrade, and the
 * route plugins.
 *
 * Invariants: registration order is errors, websocket, auth, routes, so every route (and the
 * not-found handler) sits behind auth and answers errors in one shape; no log line carries a
 * token, whatever logger is passed in (see errors.plugin.ts); every stage a connection can stall
 * in is bounded and connections without a token are capped (peer-limits.ts); an answer given
 * before its body was read closes its connection in stages, so the client reads it
 * (lingering-close.ts).
 */
import websocket from '@fastify/websocket';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { authPlugin } from './auth.plugin.js';
import { endSocketAfterError } from './stream/connections.js';
import { errorsPlugin, LOG_REDACT_PATHS, LOG_SERIALIZERS, RequestLogController } from './errors.plugin.js';
import {
  ignoreExpectations,
  NODE_SERVER_OPTIONS,
  refuseHandshake,
  refuseUnreadable,
  refuseUnroutable,
  upgradeGuard,
} from './protocol-refusals.js';
import { DomainError } from '../errors.js';
import { MAX_CLIENT_FRAME_BYTES } from '../protocol/frames.js';
import { illFormedAt, illFormedMessage } from '../protocol/well-formed.js';
import type { HealthSource, TokenVerifier } from './handles.js';
import { healthRoutes } from './routes/health.routes.js';
import { lingeringClosePlugin } from './lingering-close.js';
import { PeerGuard } from './peer-guard.js';
import { PEER_LIMITS, serverTimeouts, type PeerLimits } from './peer-limits.js';
import { typeboxCompilersFactory } from './schema-compilers.js';
import { sessionsRoutes, type SessionsRoutesOptions } from './routes/sessions.routes.js';

/**
 * How long a TLS session can be resumed (the lifetime of the tickets the server hands out): a
 * phone that reconnects within it skips the certificate exchange, one round trip instead of
 * two, and the pin still holds (the ticket came from a pinned handshake). TLS 1.3 resumption
 * keeps forward secrecy (a fresh key exchange each time). Tickets are per daemon run.
 */
export const TLS_SESSION_SECONDS = 24 * 3600;

/** Largest request body (1 MiB): a paste of a large file fits; more is a 413. */
export const BODY_LIMIT_BYTES = 1024 * 1024;
/** WebSocket messages from a client larger than this close the socket with 1009. */
export const WS_MAX_PAYLOAD_BYTES = MAX_CLIENT_FRAME_BYTES;
/**
 * zlib level for outgoing messages: 1, the fastest. Terminal output is repetitive enough that
 * level 1 keeps most of the saving, and in a flood deflate at the default level (6) was the
 * daemon's biggest cost, competing with tmux for the same cores (docs/benchmarks.md).
 */
export const WS_DEFLATE_LEVEL = 1;

/** One route of the server: how it is reached and how it authenticates. */
export interface ServedRoute {
  readonly method: string;
  readonly url: string;
  readonly websocket: boolean;
  /** `token` (a bearer token) or `none` (authenticated by other means, e.g. a pairing token). */
  readonly auth: string;
  /** The JSON schemas its request is checked against (so a fuzzer can make requests for a route added later). */
  readonly schema: { readonly params?: unknown; readonly querystring?: unknown; readonly body?: unknown };
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Every route registered, in order (see buildServer). */
    readonly tetherRoutes: readonly ServedRoute[];
  }
}

/** A pino logger (the daemon's), pino options for fastify to build one, or true/false. */
export type ServerLogger = FastifyBaseLogger | FastifyServerOptions['logger'];

export interface ServerOptions {
  readonly logger?: ServerLogger;
  readonly tokens: TokenVerifier;
  readonly health: HealthSource;
  /** The sessions' routes (the sessions service as it is, and where each session's continue is). */
  readonly sessions?: SessionsRoutesOptions;
  /** Default BODY_LIMIT_BYTES. */
  readonly bodyLimit?: number;
  readonly tls?: { key: string | Buffer; cert: string | Buffer } | null;
  /** More routes (the stream), registered after auth, so behind it. */
  readonly plugins?: readonly ((app: FastifyInstance) => Promise<void> | void)[];
  /**
   * Authenticated requests wait for this before anything else (the daemon listens before it has
   * adopted its sessions, so a second daemon is refused before touching them; a phone that
   * reconnects meanwhile waits instead of hearing of no session).
   */
  readonly ready?: Promise<void>;
  /** The connection limits (default PEER_LIMITS; tests shorten them). */
  readonly peerLimits?: Partial<PeerLimits>;
}

type RedactOption = string[] | { paths: string[]; censor?: unknown; remove?: boolean } | undefined;

function withOurRedaction(redact: RedactOption): RedactOption {
  if (redact === undefined) return [...LOG_REDACT_PATHS];
  if (Array.isArray(redact)) return [...redact, ...LOG_REDACT_PATHS];
  return { ...redact, paths: [...redact.paths, ...LOG_REDACT_PATHS] };
}

const isLoggerInstance = (l: ServerLogger): l is FastifyBaseLogger => typeof (l as { child?: unknown } | undefined)?.child === 'function';

/** fastify's logger options with tether's serializers and redaction added, whatever was given. */
export function safeLoggerOptions(logger: ServerLogger): Pick<FastifyServerOptions, 'logger' | 'loggerInstance'> {
  if (isLoggerInstance(logger)) {
    // fastify takes the instance's serializers over its own, so a child carrying ours wins.
    return { loggerInstance: logger.child({}, { serializers: LOG_SERIALIZERS, redact: [...LOG_REDACT_PATHS] }) };
  }
  if (logger === undefined || logger === false) return { logger: false };
  const given = logger === true ? {} : logger;
  return {
    logger: {
      ...given,
      serializers: { ...given.serializers, ...LOG_SERIALIZERS },
      redact: withOurRedaction(given.redact),
    } as FastifyServerOptions['logger'],
  };
}

/** Builds the server, not yet listening (tests can `inject`). */
export async function buildServer(opts: ServerOptions): Promise<FastifyInstance> {
  const limits: PeerLimits = { ...PEER_LIMITS, ...opts.peerLimits };
  const timeouts = serverTimeouts(limits);
  const app = Fastify({
    ...safeLoggerOptions(opts.logger),
    logController: new RequestLogController(),
    // Shutting down must not wait on a client: they reconnect and resume.
    forceCloseConnections: true,
    bodyLimit: opts.bodyLimit ?? BODY_LIMIT_BYTES,
    // TypeBox's compiler validates and serializes; ajv is never loaded. Wrong types and unknown
    // fields are errors, not coerced or dropped (TypeBox's check neither coerces nor defaults).
    schemaController: { compilersFactory: typeboxCompilersFactory },
    // What no route sees (bytes that are not HTTP, a URL the router cannot read) is refused in the one error shape.
    clientErrorHandler: refuseUnreadable,
    frameworkErrors: refuseUnroutable,
    // Every stage a connection can stall in is bounded (transport/peer-limits.ts).
    keepAliveTimeout: timeouts.keepAliveTimeout,
    requestTimeout: timeouts.requestTimeout,
    ...(opts.tls
      ? {
          https: {
            key: opts.tls.key,
            cert: opts.tls.cert,
            sessionTimeout: TLS_SESSION_SECONDS,
            handshakeTimeout: limits.handshakeMs,
            ...timeouts,
            ...NODE_SERVER_OPTIONS,
          },
        }
      : { http: { ...timeouts, ...NODE_SERVER_OPTIONS } }),
  }).withTypeProvider<TypeBoxTypeProvider>();
  const peers = new PeerGuard(limits, app.log);
  peers.attach(app.server);
  // The route table as the server itself knows it, so a test can check every route (even one
  // added later) for authentication.
  const routes: ServedRoute[] = [];
  app.addHook('onRoute', (r) => {
    for (const method of [r.method].flat())
      routes.push({
        method,
        url: r.url,
        websocket: (r as { websocket?: boolean }).websocket === true,
        auth: r.config?.auth ?? 'token',
        schema: { params: r.schema?.params, querystring: r.schema?.querystring, body: r.schema?.body },
      });
  });
  app.decorate('tetherRoutes', routes);
  ignoreExpectations(app.server);
  // First: its hooks mark every answer given before its body was read, whoever gives it.
  await app.register(lingeringClosePlugin, { limits, authenticated: (socket) => peers.isAuthenticated(socket) });
  await app.register(errorsPlugin);
  // Clients send a JSON content type on bodiless requests (DELETE); an empty body is no body.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    if (body === '') {
      done(null, undefined);
      return;
    }
    void parseJson(req, typeof body === 'string' ? body : body.toString('utf8'), (err, value) => {
      // What tether stores or types must be what it answers: a lone surrogate has no UTF-8 form.
      const at = err ? null : illFormedAt(value);
      if (at !== null) done(new DomainError('invalid', illFormedMessage(`body${at === '/' ? '' : at}`)), undefined);
      else done(err, value);
    });
  });
  // Before auth: its onRequest hook marks upgrade requests, and its onResponse hook then closes
  // the socket of any upgrade answered over HTTP (a 401, a 404).
  await app.register(websocket, {
    options: {
      // Which messages are compressed is decided per message (transport/stream/deflate-policy.ts).
      perMessageDeflate: { zlibDeflateOptions: { level: WS_DEFLATE_LEVEL } },
      maxPayload: WS_MAX_PAYLOAD_BYTES,
    },
    // A client's protocol error is the client's fault: a debug line, and its close code kept.
    errorHandler: (error, socket, request) => {
      request.log.debug({ err: error }, 'websocket protocol error');
      endSocketAfterError(socket);
    },
  });
  app.websocketServer.on('wsClientError', refuseHandshake);
  // The 101 is being written: the upgrade completed within its bound.
  app.websocketServer.on('headers', (_headers, request) => peers.upgraded(request.socket));
  await app.register(upgradeGuard);
  await app.register(authPlugin, { tokens: opts.tokens, peers });
  // After auth: an authenticated request's body must keep coming; an unauthenticated one (only
  // `auth: 'none'` routes get here) is bounded by its connection's life.
  app.addHook('onRequest', (req, _reply, done) => {
    peers.requestStarted(req.raw);
    done();
  });
  // After auth too: a refused request is answered at once, even while the daemon is starting.
  const ready = opts.ready;
  if (ready) app.addHook('onRequest', async () => void (await ready));
  await app.register(healthRoutes, { health: opts.health });
  if (opts.sessions) await app.register(sessionsRoutes, opts.sessions);
  for (const plugin of opts.plugins ?? []) await plugin(app);
  return app;
}

/** The port is taken (`port-in-use`): the one line names it, and the key and file to change. */
const portInUse = (host: string, port: number, configFile: string): DomainError =>
  new DomainError('port-in-use', `port ${port} on ${host} is in use: set bindAddress in ${configFile} to a free port (or port 0 for any)`);

/** Listens on host:port; EADDRINUSE becomes `port-in-use`, naming `configFile`. */
export async function listen(
  app: FastifyInstance,
  at: { host: string; port: number },
  configFile: string,
): Promise<{ address: string; port: number }> {
  try {
    await app.listen({ host: at.host, port: at.port });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') throw portInUse(at.host, at.port, configFile);
    throw err;
  }
  // The address and port it holds (port 0 asks for a free one).
  const bound = app.server.address();
  return typeof bound === 'object' && bound !== null ? { address: bound.address, port: bound.port } : { address: at.host, port: at.port };
}
