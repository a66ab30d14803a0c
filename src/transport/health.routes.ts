/**
 * `GET /health` (docs/api.md "GET /health"): the daemon's state in one object, from a narrow
 * `HealthSource`. The typebox schema both documents the answer and serializes it, so a field
 * the source forgets is a 500 here rather than a silently different contract.
 */
import type { FastifyPluginCallbackTypebox } from '@fastify/type-provider-typebox';
import { Type, type Static } from 'typebox';
import type { HealthReport, HealthSource } from './handles.js';

export const HealthSchema = Type.Object({
  ok: Type.Boolean({ description: "true exactly when status is 'ok'" }),
  status: Type.Union([Type.Literal('ok'), Type.Literal('degraded')]),
  version: Type.String(),
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

// The schema and the handle's type are the same shape, checked both ways at compile time.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : never) : never;
const sameShape: Same<Static<typeof HealthSchema>, HealthReport> = true;
void sameShape;

export interface HealthRoutesOptions {
  readonly health: HealthSource;
}

/** Registers `GET /health`. */
export const healthRoutes: FastifyPluginCallbackTypebox<HealthRoutesOptions> = (app, { health }, done) => {
  app.get('/health', { schema: { response: { 200: HealthSchema } } }, async () => {
    const report = await health.health();
    // `ok` follows `status`, whatever the source says.
    return { ...report, ok: report.status === 'ok' };
  });
  done();
};
