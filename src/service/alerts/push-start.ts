/**
 * Push as the daemon runs it: the APNs client, the push service and the trigger that feeds it,
 * and the Live Activity driver with the summary that feeds it, are loaded only when `[push]` is
 * configured (else only why it is off is said). Most daemons never push, and the client (HTTP/2, the trust store) is memory an
 * idle daemon kept for nothing (docs/benchmarks.md "Memory"). Alerts and Live Activities share
 * one connection per APNs endpoint and one provider token.
 */
import type { InspectionEvent } from 'xstate';
import type { PushTriggerDeps } from './push-trigger.js';
import type { PushDevices, PushServiceDeps } from '../../push/push.service.js';
import type { ActivityDelays, ActivityDevices } from '../../push/live-activity.service.js';
import type { PushSettings, PushStatus } from '../../push/settings.js';
import type { Logger } from '../../log.js';
import type { AgentHub } from '../../agent/hub/hub.js';
import { DEFAULT_ADAPTER } from '../../agent/contract/adapters.js';
import { adapterOf } from '../../agent/contract/kinds.js';
import { DEFAULT_AGENT_NAME } from '../../config/schema.js';

/** What the daemon keeps of push: its status for health, and how to stop it. */
export interface DaemonPush {
  status(): PushStatus;
  stop(): void;
}

export interface DaemonPushDeps extends Omit<PushTriggerDeps, 'send' | 'subscribeEvery' | 'sendUsage'> {
  readonly settings: PushSettings;
  readonly devices: PushDevices & ActivityDevices;
  /** The daemon's id and name: a Live Activity's attributes. */
  readonly daemon: { readonly id: string; readonly name: string };
  readonly inForeground: PushServiceDeps['inForeground'];
  /** The session's name, description and configured agent, or null when it is gone. */
  readonly describe: (id: string) => Promise<{ name: string; description?: string; agent: string } | null>;
  /** The agents: every state report, what a session's agent asks, which ask is open. */
  readonly agents: Pick<AgentHub, 'subscribeEvery' | 'asks' | 'openAsk' | 'stopOf'>;
  /** The kind of a configured agent (its adapter names it in titles). */
  readonly kindOf: (name: string) => string | null;
  readonly now: () => number;
  readonly log: Logger;
  /** The Live Activity's delays, shorter in tests (`tether serve` reads them: src/cli/test-seams.ts). */
  readonly activityDelays?: Partial<ActivityDelays>;
  /** XState inspection of a machine the push part runs (the /ops view), by its label. */
  readonly inspect?: (label: string) => ((ev: InspectionEvent) => void) | undefined;
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
  const delays = deps.activityDelays ?? {};
  const [{ PushService }, { startPushTrigger }, { ApnsClient }, { ProviderTokens }, { LiveActivityService }, { startActivitySummary }] =
    await Promise.all([
      import('../../push/push.service.js'),
      import('./push-trigger.js'),
      import('../../push/apns.js'),
      import('../../push/provider-token.js'),
      import('../../push/live-activity.service.js'),
      import('./activity-summary.js'),
    ]);
  const shared = {
    client: new ApnsClient(),
    tokens: new ProviderTokens({ key: settings.key, teamId: settings.teamId, keyId: settings.keyId, now: deps.now }),
  };
  const activities = new LiveActivityService({
    settings,
    ...shared,
    devices: deps.devices,
    attributes: () => ({ daemonId: deps.daemon.id, daemonName: deps.daemon.name }),
    delays,
    ...(deps.inspect ? { inspectDevice: (tokenId: string) => deps.inspect?.(`live-activity:${tokenId}`) } : {}),
    now: deps.now,
    log: deps.log,
  });
  const stopSummary = startActivitySummary({
    subscribeEvery: (listener) => deps.agents.subscribeEvery(listener),
    onSessionEnded: deps.onSessionEnded,
    describe: async (id) => {
      const meta = await deps.describe(id);
      return meta === null ? null : { name: meta.name, agentLabel: agentLabel(deps.kindOf(meta.agent), meta.agent) };
    },
    changed: (sessions) => activities.setSessions(sessions),
    now: deps.now,
  });
  const push = new PushService({
    shared,
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
    stopHeld: (id, stopId) => deps.agents.stopOf(id)?.id === stopId,
    now: deps.now,
    log: deps.log,
  });
  const unsubscribe = startPushTrigger({
    events: deps.events,
    subscribeEvery: (listener) => deps.agents.subscribeEvery(listener),
    onSessionEnded: deps.onSessionEnded,
    onAttention: deps.onAttention,
    ...(deps.onLimitReset ? { onLimitReset: deps.onLimitReset } : {}),
    ...(deps.onPromptFailed ? { onPromptFailed: deps.onPromptFailed } : {}),
    ...(deps.onUsageWarning ? { onUsageWarning: deps.onUsageWarning } : {}),
    sendUsage: (warning) => push.usageWarning(agentLabel(warning.agent, warning.agent), warning),
    send: (id, alert, label) => push.alert(id, alert, label),
  });
  return {
    status: () => push.status(),
    stop: () => {
      stopSummary();
      activities.stop();
      unsubscribe();
      push.stop();
    },
  };
}
