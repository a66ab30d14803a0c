/**
 * The REST routes' schemas (docs/api.md), as TypeBox schemas, but for a session's own routes
 * (session-routes.schemas.ts): the source of the routes' types
 * and of the generated checks (routes.checks.ts, `npm run schemas`), which are what fastify is
 * given (schema-compilers.ts). The route files import only types from here, so TypeBox is not
 * loaded with them (docs/architecture.md "Schemas and their checks").
 */
import { Type, type Static } from 'typebox';
import type { Holds, Same } from '../../protocol/same-type.js';
import { SESSION_NAME_PATTERN } from '../../protocol/session-name.js';
import { CONTROL_CHAR_RANGES } from '../../protocol/text.js';
import { MAX_QUERY_CHARS } from '../../service/workbench/history.service.js';
import type { HealthReport } from '../handles.js';

/** Longest upload `name` a client may send, in characters (the stored one is shorter still). */
const MAX_UPLOAD_NAME_CHARS = 1024;

// ---- pair.routes.ts

/**
 * A device name: printable, 1 to 64 characters (it names the token), not all blank. The one
 * character that is not blank is printable too (the fuzzer found `\S` letting a DEL through,
 * which the token store then refused with a 500).
 */
const DEVICE_NAME = Type.String({
  minLength: 1,
  maxLength: 64,
  pattern: `^[^${CONTROL_CHAR_RANGES}]*[^\\s${CONTROL_CHAR_RANGES}][^${CONTROL_CHAR_RANGES}]*$`,
});
/** An APNs device token: hex. */
const DEVICE_TOKEN = Type.String({ pattern: '^[0-9A-Fa-f]{8,200}$' });
/** A Live Activity token (push-to-start or update): hex, as ActivityKit gives it (80 bytes today). */
const LIVE_ACTIVITY_TOKEN = Type.String({ pattern: '^[0-9A-Fa-f]{8,512}$' });
const ENVIRONMENT = Type.Union([Type.Literal('sandbox'), Type.Literal('production')]);

// ---- history.routes.ts

const Position = Type.String({ pattern: '^[0-9]{1,16}$', description: 'a stream position' });

// ---- health.routes.ts

const Health = Type.Object({
  ok: Type.Boolean({ description: "true exactly when status is 'ok'" }),
  status: Type.Union([Type.Literal('ok'), Type.Literal('degraded')]),
  version: Type.String(),
  id: Type.String({ description: "the daemon's id: made once, kept in the data dir (docs/pairing.md)" }),
  name: Type.String({ description: "the daemon's name: config name, else the host name" }),
  mdns: Type.Object(
    {
      state: Type.Union([Type.Literal('off'), Type.Literal('starting'), Type.Literal('advertising'), Type.Literal('retrying')]),
      reason: Type.Union([Type.String(), Type.Null()]),
      instance: Type.Union([Type.String(), Type.Null()]),
    },
    { description: 'the advertisement on the local network (docs/pairing.md, Finding the daemon again)' },
  ),
  uptime: Type.Number({ minimum: 0, description: 'seconds since the daemon started' }),
  sessions: Type.Integer({ minimum: 0 }),
  sessionIds: Type.Array(Type.String()),
  clients: Type.Integer({
    minimum: 0,
    description: 'live stream and side-channel clients (a socket whose pong is overdue is closed, not counted)',
  }),
  connections: Type.Array(
    Type.Object({
      session: Type.String(),
      kind: Type.Union([Type.Literal('stream'), Type.Literal('side')]),
      actor: Type.Union([Type.String(), Type.Null()]),
      device: Type.String({ description: 'the name of the token it opened with' }),
      tokenId: Type.String(),
      connectedAt: Type.String(),
      connectedS: Type.Number({ minimum: 0 }),
      rttMs: Type.Union([Type.Number({ minimum: 0 }), Type.Null()]),
      srttMs: Type.Union([Type.Number({ minimum: 0 }), Type.Null()]),
      bytesSent: Type.Integer({ minimum: 0 }),
      state: Type.Union([Type.String(), Type.Null()]),
      behind: Type.Boolean(),
      reconnects: Type.Integer({ minimum: 0 }),
      awayMs: Type.Integer({ minimum: 0 }),
      lastAwayMs: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]),
    }),
    { description: "each live client with its link's figures (docs/api.md, GET /health)" },
  ),
  bufferMb: Type.Number({ minimum: 0 }),
  diskFreeGb: Type.Number({ minimum: 0 }),
  watchdog: Type.Object({ state: Type.String(), reason: Type.Union([Type.String(), Type.Null()]) }),
  warnings: Type.Array(Type.String()),
  tls: Type.Object({
    enabled: Type.Boolean(),
    fingerprint: Type.Union([Type.String({ description: 'SHA-256 of the certificate DER, lowercase hex' }), Type.Null()]),
  }),
  push: Type.Object({
    configured: Type.Boolean(),
    reason: Type.Union([Type.String(), Type.Null()]),
    sent: Type.Integer({ minimum: 0 }),
    failed: Type.Integer({ minimum: 0 }),
    lastError: Type.Union([
      Type.Object({ at: Type.String(), status: Type.Integer(), reason: Type.String(), device: Type.String() }),
      Type.Null(),
    ]),
  }),
  snapshots: Type.Object(
    {
      cold: Type.Integer({ minimum: 0 }),
      warmCaptures: Type.Integer({ minimum: 0 }),
      warmServed: Type.Integer({ minimum: 0 }),
      warmBytes: Type.Integer({ minimum: 0, description: 'bytes the warm captures hold now' }),
    },
    { description: "how the running sessions' snapshots were made (docs/architecture.md, Warm snapshots)" },
  ),
  restore: Type.Object(
    {
      enabled: Type.Boolean(),
      restoring: Type.Array(Type.String()),
      unrestorable: Type.Array(Type.Object({ id: Type.String(), reason: Type.String(), at: Type.String() })),
    },
    { description: 'sessions lost with their tmux server (docs/reliability.md, Restoring sessions)' },
  ),
});

/**
 * The health answer's schema is the handle's type, field for field: this fails to compile otherwise.
 * @typecheck (nothing imports it: knip.jsonc)
 */
export type HealthIsTheHandlesType = Holds<Same<Static<typeof Health>, HealthReport>>;

/** Every route schema, by name: each is given to fastify as the generated JSON schema of the same name. */
export const RouteSchemas = {
  /** `:id` of every session route. */
  IdParams: Type.Object({ id: Type.String({ pattern: SESSION_NAME_PATTERN }) }),
  ErrorBody: Type.Object({ error: Type.String(), message: Type.String() }),
  NoContent: Type.Null(),

  HistoryQuery: Type.Object(
    { from: Position, to: Type.Optional(Position), token: Type.Optional(Type.String()) },
    { additionalProperties: false },
  ),
  SearchQuery: Type.Object(
    {
      q: Type.String({ maxLength: MAX_QUERY_CHARS }),
      limit: Type.Optional(Type.String({ pattern: '^[0-9]{1,4}$' })),
      token: Type.Optional(Type.String()),
    },
    { additionalProperties: false },
  ),

  UploadQuery: Type.Object(
    {
      name: Type.String({ minLength: 1, maxLength: MAX_UPLOAD_NAME_CHARS }),
      insert: Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false')])),
      token: Type.Optional(Type.String()),
    },
    { additionalProperties: false },
  ),

  PairBody: Type.Object(
    {
      pairingToken: Type.String({ minLength: 1, maxLength: 256 }),
      deviceName: DEVICE_NAME,
      deviceToken: Type.Optional(DEVICE_TOKEN),
      environment: Type.Optional(ENVIRONMENT),
    },
    { additionalProperties: false },
  ),
  PairAnswer: Type.Object({
    token: Type.String(),
    tokenId: Type.String(),
    name: Type.String(),
    daemon: Type.Object(
      { id: Type.String(), name: Type.String() },
      { description: 'the daemon paired with: its id and name, as in GET /health (docs/pairing.md)' },
    ),
  }),
  DeviceBody: Type.Object(
    { deviceToken: DEVICE_TOKEN, environment: ENVIRONMENT, deviceName: DEVICE_NAME },
    { additionalProperties: false },
  ),
  DeviceAnswer: Type.Object({
    tokenId: Type.String(),
    deviceName: Type.String(),
    environment: ENVIRONMENT,
    state: Type.Literal('registered'),
  }),
  /** `PUT /device/live-activity`: either token or both (docs/push.md "Live Activity"). */
  LiveActivityBody: Type.Object(
    { pushToStartToken: Type.Optional(LIVE_ACTIVITY_TOKEN), updateToken: Type.Optional(LIVE_ACTIVITY_TOKEN) },
    { additionalProperties: false, minProperties: 1 },
  ),
  /** Which tokens the daemon holds now. */
  LiveActivityAnswer: Type.Object({ tokenId: Type.String(), pushToStartToken: Type.Boolean(), updateToken: Type.Boolean() }),

  /** A chart's file name: a name by the session-name rule, then `.svg` (no path can hide in it). */
  ChartParams: Type.Object({ name: Type.String({ pattern: `${SESSION_NAME_PATTERN.slice(0, -1)}\\.svg$` }) }),

  /**
   * `?lastSeq=<n|null>` on the stream's upgrade: a `resume` taken at open, so the delta or the
   * snapshot leaves with the first frames instead of a round trip later (docs/api.md "WebSocket").
   */
  StreamQuery: Type.Object(
    { lastSeq: Type.Optional(Type.String({ pattern: '^(null|0|[1-9][0-9]{0,15})$' })), token: Type.Optional(Type.String()) },
    { additionalProperties: false },
  ),

  Health,
};
