/**
 * The schema of `GET /usage` (docs/api.md "Usage"): each agent kind's newest usage windows, as
 * TypeBox schemas: the source of the generated check (usage-routes.checks.ts, `npm run schemas`).
 */
import { Type } from 'typebox';
import { AgentUsage } from '../../protocol/usage.schemas.js';

export const UsageRouteSchemas = {
  /** One entry per agent kind that reported its windows, by kind. */
  UsageList: Type.Array(AgentUsage),
};
