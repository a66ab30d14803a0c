/**
 * The agents' usage windows in the daemon (docs/api.md "Usage", docs/push.md "Usage"): `GET /usage`
 * over the agents' usage book, and the warnings at `[push] usage_thresholds`, each machine on
 * /ops. Wiring only.
 */
import type { FastifyInstance } from 'fastify';
import type { AgentService } from '../agent/hub/agent-service.js';
import type { OpsInspector } from '../ops/inspector.js';
import { UsageWarnings } from '../service/alerts/usage-warnings.js';
import { usageRoutes } from '../transport/routes/usage.routes.js';

export interface UsageWiring {
  readonly agents: AgentService;
  /** `[push] usage_thresholds`. */
  readonly thresholds: readonly number[];
  readonly ops: OpsInspector;
  readonly now: () => number;
}

/** The usage route's plugin and the warnings of one daemon run. */
export function startUsage(w: UsageWiring): {
  plugin: (app: FastifyInstance) => Promise<void>;
  warnings: UsageWarnings;
  stop: () => void;
} {
  const warnings = new UsageWarnings({
    thresholds: w.thresholds,
    onUsage: (listener) => w.agents.usage.onChange(listener),
    now: w.now,
    inspect: (agent, window) => w.ops.observer({ label: `usage:${agent}:${window}` }),
  });
  return {
    plugin: async (app) => void (await app.register(usageRoutes, { usage: w.agents.usage })),
    warnings,
    stop: () => warnings.stop(),
  };
}
