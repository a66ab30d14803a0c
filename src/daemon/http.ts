/**
 * What the daemon's HTTP server serves (docs/api.md): every service's routes, registered behind
 * the token check, and `GET /health`'s report over the daemon's parts. Wiring only: root.ts makes
 * the parts, this file says which route reaches which.
 */
import type { FastifyInstance } from 'fastify';
import type { SidecarSystem } from '../actors/system.js';
import type { DiskBuffers } from '../actors/disk-buffer.actor.js';
import type { PairingService } from '../auth/pairing.js';
import type { FoundCertificate } from '../auth/certificate.js';
import type { TetherConfig } from '../config/schema.js';
import type { OpsInspector } from '../ops/inspector.js';
import type { SessionRecords } from '../restore/records.js';
import { unrestorableSessions } from '../restore/at-start.js';
import type { DaemonPush } from '../service/alerts/push-start.js';
import { healthReport, type HealthReport } from '../service/health/health.js';
import type { HostPresence } from '../service/health/presence.js';
import type { SessionsService } from '../service/sessions/sessions.service.js';
import type { StreamHub } from '../stream/stream-hub.js';
import type { ConnectionRegistry } from '../transport/stream/connections.js';
import { opsRoutes } from '../transport/routes/ops.routes.js';
import { pairRoutes } from '../transport/routes/pair.routes.js';
import { streamRoutes } from '../transport/stream/stream.plugin.js';
import { packageVersion } from '../config/version.js';
import type { startAnswers } from './answers.js';
import type { startPrompts } from './prompts.js';
import type { startUsage } from './usage.js';
import type { Workbench } from './workbench.js';
import type { makeWorkspaces } from './workspaces.js';

type Plugin = (app: FastifyInstance) => Promise<void>;

export interface HttpWiring {
  readonly config: TetherConfig;
  readonly presence: HostPresence;
  readonly startedAt: number;
  readonly system: SidecarSystem;
  readonly buffers: DiskBuffers;
  readonly push: DaemonPush;
  readonly connections: ConnectionRegistry;
  /** Warnings fixed at start (configuration). */
  readonly warnings: readonly string[];
  readonly tls: FoundCertificate | null;
  readonly records: SessionRecords;
  readonly sessions: SessionsService;
  readonly hub: StreamHub;
  readonly pairing: PairingService;
  readonly ops: OpsInspector;
  readonly answers: ReturnType<typeof startAnswers>;
  readonly prompts: ReturnType<typeof startPrompts>;
  readonly usage: ReturnType<typeof startUsage>;
  readonly workbench: Workbench;
  readonly workspaces: ReturnType<typeof makeWorkspaces>;
}

/** `GET /health`'s report, and every route plugin, in the order they are registered. */
export function daemonHttp(w: HttpWiring): { health: () => HealthReport; plugins: readonly Plugin[] } {
  const health = (): HealthReport =>
    healthReport({
      version: packageVersion(),
      presence: w.presence.report,
      startedAt: w.startedAt,
      now: Date.now,
      system: w.system,
      buffers: w.buffers,
      push: w.push,
      connections: () => w.connections.clients(),
      startWarnings: w.warnings,
      tls: { enabled: w.tls !== null, fingerprint: w.tls?.fingerprint ?? null },
      restore: { enabled: w.config.agent.restore, unrestorable: () => unrestorableSessions(w.records) },
    });
  const plugins: Plugin[] = [
    async (app) =>
      void (await app.register(streamRoutes, {
        stream: w.hub,
        sessions: w.sessions,
        answers: w.answers.service,
        prompts: w.prompts.service,
        connections: w.connections,
        pingIntervalMs: w.config.stream.ping_interval_s * 1000,
      })),
    async (app) => void (await app.register(pairRoutes, { pairing: w.pairing, daemon: w.presence })),
    async (app) => void (await app.register(opsRoutes, { ops: w.ops, connections: w.connections })),
    w.answers.plugin,
    w.prompts.plugin,
    w.usage.plugin,
    ...w.workbench.plugins,
    w.workspaces.plugin,
  ];
  return { health, plugins };
}
