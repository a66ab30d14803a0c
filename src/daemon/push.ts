/**
 * Push in the daemon (docs/push.md): when `[push]` is configured (service/alerts/push-start.ts
 * says when), the APNs client, the alerts' service and the trigger that feeds it, and the Live
 * Activity driver with the summary that feeds it, loaded then and not before; alerts and Live
 * Activities share one connection per APNs endpoint and one provider token. Wiring only.
 */
import type { InspectionEvent } from 'xstate';
import type { Logger } from '../log.js';
import type { AgentHub } from '../agent/hub/hub.js';
import type { PushDevices, PushServiceDeps } from '../push/push.service.js';
import type { ActivityDelays, ActivityDevices } from '../push/live-activity.service.js';
import type { PushSettings } from '../push/settings.js';
import type { PushTriggerDeps } from '../service/alerts/push-trigger.js';
import { DEFAULT_ADAPTER } from '../agent/contract/adapters.js';
import {
  agentLabel,
  PushFacts,
  pushWhenConfigured,
  type DaemonPush,
  type PushAgentKinds,
  type PushOn,
  type PushSessions,
} from '../service/alerts/push-start.js';

export interface PushWiring extends Required<
  Pick<PushTriggerDeps, 'events' | 'onSessionEnded' | 'onAttention' | 'onLimitReset' | 'onPromptFailed' | 'onUsageWarning'>
> {
  readonly settings: PushSettings;
  readonly devices: PushDevices & ActivityDevices;
  /** The daemon's id and name: a Live Activity's attributes. */
  readonly daemon: { readonly id: string; readonly name: string };
  readonly inForeground: PushServiceDeps['inForeground'];
  readonly sessions: PushSessions;
  /** The configured agents (an alert names an agent by its kind's label). */
  readonly agentKinds: PushAgentKinds;
  /** The agents: every state report, what a session's agent asks, which ask is open, which stop it is in. */
  readonly agents: Pick<AgentHub, 'subscribeEvery' | 'asks' | 'openAsk' | 'stopOf'>;
  /** The Live Activity's delays, shorter in tests (`tether serve` reads them: src/cli/test-seams.ts). */
  readonly activityDelays: Partial<ActivityDelays> | undefined;
  /** XState inspection of a machine the push part runs (the /ops view), by its label. */
  readonly inspect: (label: string) => ((ev: InspectionEvent) => void) | undefined;
  readonly now: () => number;
  readonly log: Logger;
}

/** Starts push when it is configured; otherwise only says why it is off. */
export async function startPush(w: PushWiring): Promise<DaemonPush> {
  return await pushWhenConfigured(w.settings, w.log, (settings) => startConfiguredPush(w, settings));
}

async function startConfiguredPush(w: PushWiring, settings: PushOn): Promise<DaemonPush> {
  const [{ PushService }, { startPushTrigger }, { ApnsClient }, { ProviderTokens }, { LiveActivityService }, { startActivitySummary }] =
    await Promise.all([
      import('../push/push.service.js'),
      import('../service/alerts/push-trigger.js'),
      import('../push/apns.js'),
      import('../push/provider-token.js'),
      import('../push/live-activity.service.js'),
      import('../service/alerts/activity-summary.js'),
    ]);
  const facts = new PushFacts(w.sessions, w.agentKinds, w.agents);
  const shared = {
    client: new ApnsClient(),
    tokens: new ProviderTokens({ key: settings.key, teamId: settings.teamId, keyId: settings.keyId, now: w.now }),
  };
  const activities = new LiveActivityService({
    settings,
    ...shared,
    devices: w.devices,
    attributes: () => ({ daemonId: w.daemon.id, daemonName: w.daemon.name }),
    delays: w.activityDelays,
    inspectDevice: (tokenId) => w.inspect(`live-activity:${tokenId}`),
    now: w.now,
    log: w.log,
  });
  const stopSummary = startActivitySummary({
    subscribeEvery: (listener) => w.agents.subscribeEvery(listener),
    onSessionEnded: w.onSessionEnded,
    describe: (id) => facts.card(id),
    changed: (sessions) => activities.setSessions(sessions),
    now: w.now,
  });
  const push = new PushService({
    shared,
    settings,
    devices: w.devices,
    inForeground: w.inForeground,
    describe: (id) => facts.alert(id),
    agentName: DEFAULT_ADAPTER.label,
    askOpen: (id, askId) => facts.askOpen(id, askId),
    stopHeld: (id, stopId) => facts.stopHeld(id, stopId),
    now: w.now,
    log: w.log,
  });
  const unsubscribe = startPushTrigger({
    events: w.events,
    subscribeEvery: (listener) => w.agents.subscribeEvery(listener),
    onSessionEnded: w.onSessionEnded,
    onAttention: w.onAttention,
    onLimitReset: w.onLimitReset,
    onPromptFailed: w.onPromptFailed,
    onUsageWarning: w.onUsageWarning,
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
