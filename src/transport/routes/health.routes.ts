/**
 * `GET /health` (docs/api.md "GET /health"): the daemon's state in one object, from a narrow
 * `HealthSource`. The schema (routes.schemas.ts) both documents the answer and serializes it, so a
 * field the source forgets is a 500 here rather than a silently different contract.
 */
import type { FastifyPluginCallbackTypebox } from '@fastify/type-provider-typebox';
import type { HealthSource } from '../handles.js';
import { RouteSchemas } from '../schemas/routes.checks.js';

export interface HealthRoutesOptions {
  readonly health: HealthSource;
}

/** Registers `GET /health`. */
export const healthRoutes: FastifyPluginCallbackTypebox<HealthRoutesOptions> = (app, { health }, done) => {
  app.get('/health', { schema: { response: { 200: RouteSchemas.Health } } }, async () => {
    const report = await health.health();
    // `ok` follows `status`, whatever the source says.
    return { ...report, ok: report.status === 'ok' };
  });
  done();
};
