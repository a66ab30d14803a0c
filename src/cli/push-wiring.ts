/**
 * Push in the daemon: the APNs client, the push service and the trigger that feeds it are
 * loaded only when `[push]` is configured. Most daemons never push, and the client (HTTP/2,
 * the trust store) is memory an idle daemon kept for nothing (docs/benchmarks.md "Memory").
 */
import type { PushTriggerDeps } from '../service/push-trigger.js';
import type { PushDevices, PushServiceDeps } from '../push/push.service.js';
import type { PushSettings, PushStatus } from '../push/settings.js';
import type { Logger } from '../log.js';
import type { AgentHub } from '../agent/hub.js';
import { DEFAULT_ADAPTER } from '../agent/adapters.js';
import { adapterOf } from '../agent/kinds.js';
import { DEFAULT_AGENT_NAME } from '../config/schema.js';

/** What the daemon keeps of push: its status for health, and how to stop it. */
export interface DaemonPush {
  status(): PushStatus;
  stop(): void;
}

export interface DaemonPushDeps extends Omit<PushTriggerDeps, 'send' | 'subscribeEvery'> {
  readonly settings: PushSettings;
  readonly devices: PushDevices;
  readonly inForeground: PushServiceDeps['inForeground'];
  /** The session's name, description and configured agent, or null when it is gone. */
  readonly describe: (id: string) => Promise<{ name: string; description?: string; agent: string } | null>;
  /** The agents: every state report, what a session's agent asks, which ask is open. */
  readonly agents: Pick<AgentHub, 'subscribeEvery' | 'asks' | 'openAsk'>;
  /** The kind of a configured agent (its adapter names it in titles). */
  readonly kindOf: (name: string) => string | null;
  readonly now: () => number;
  readonly log: Logger;
}

/**
 * How the push title names an agent: by its adapter's label where tether integrates with it, else
 * by its configured name; the default agent of another kind by the default adapter's (tether's own).
 */
export function agentLabel(kind: string | null, name: string): string {
  return adapterOf(kind)?.label ?? (name === DEFAULT_AGENT_NAME ? DEFAULT_ADAPTER.label : name);
}

/** Starts push when it is configured; otherwise only says why it is off. */
export async function startPush(deps: DaemonPushDeps): Promise<DaemonPush> {
  const settings = deps.settings;
  if (!settings.enabled) {
    deps.log.info(settings.reason);
    const off: PushStatus = { configured: false, reason: settings.reason, sent: 0, failed: 0, lastError: null };
    return { status: () => off, stop: () => undefined };
  }
  const [{ PushService }, { startPushTrigger }] = await Promise.all([
    import('../push/push.service.js'),
    import('../service/push-trigger.js'),
  ]);
  const push = new PushService({
    settings,
    devices: deps.devices,
    inForeground: deps.inForeground,
    describe: async (id) => {
      const meta = await deps.describe(id);
      if (meta === null) return null;
      const asks = deps.agents.asks(id);
      return { ...meta, agentLabel: agentLabel(deps.kindOf(meta.agent), meta.agent), ...(asks !== null ? { asks } : {}) };
    },
    agentName: DEFAULT_ADAPTER.label,
    askOpen: (id, askId) => deps.agents.openAsk(id)?.open.ask.id === askId,
    now: deps.now,
    log: deps.log,
  });
  const unsubscribe = startPushTrigger({
    events: deps.events,
    subscribeEvery: (listener) => deps.agents.subscribeEvery(listener),
    onSessionEnded: deps.onSessionEnded,
    onAttention: deps.onAttention,
    send: (id, alert, label) => push.alert(id, alert, label),
  });
  return {
    status: () => push.status(),
    stop: () => {
      unsubscribe();
      push.stop();
    },
  };
}
