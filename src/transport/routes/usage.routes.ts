/**
 * `GET /usage` (docs/api.md "Usage"): how much of each agent's limits is used, per account: one
 * entry per agent kind, the newest report from any of that agent's sessions. Behind the token,
 * like every route.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AgentUsage } from '../../protocol/usage.js';
import { RouteSchemas } from '../schemas/routes.checks.js';
import { UsageRouteSchemas } from '../schemas/usage-routes.checks.js';

/** What the usage route needs (the agents' usage book is one). */
export interface UsageHandle {
  account(): AgentUsage[];
}

export const usageRoutes: FastifyPluginAsyncTypebox<{ usage: UsageHandle }> = (app, { usage }) => {
  app.get('/usage', { schema: { response: { 200: UsageRouteSchemas.UsageList, 401: RouteSchemas.ErrorBody } } }, () => usage.account());
  return Promise.resolve();
};
