/** `GET /health` (decisions.md "Health"). */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { HealthSource } from './handles.js';

export const HealthSchema = Type.Object({
  ok: Type.Boolean(),
  status: Type.Union([Type.Literal('ok'), Type.Literal('degraded')]),
  version: Type.String(),
  uptime: Type.Number(),
  sessions: Type.Integer(),
  sessionIds: Type.Array(Type.String()),
  clients: Type.Integer(),
  bufferMb: Type.Number(),
  diskFreeGb: Type.Number(),
  watchdog: Type.Object({ state: Type.String(), reason: Type.Union([Type.String(), Type.Null()]) }),
  warnings: Type.Array(Type.String()),
});

export const healthRoutes: FastifyPluginAsyncTypebox<{ health: HealthSource }> = (app, { health }) => {
  app.get('/health', { schema: { response: { 200: HealthSchema } } }, async () => health.health());
  return Promise.resolve();
};
