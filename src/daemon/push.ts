/**
 * Push in the daemon: the APNs client, the push service and the trigger that feeds it, and the
 * Live Activity driver with the summary that feeds it, are loaded only when `[push]` is
 * configured. Most daemons never push, and the client (HTTP/2, the trust store) is memory an
 * idle daemon kept for nothing (docs/benchmarks.md "Memory"). Alerts and Live Activities share
 * one connection per APNs endpoint and one provider token.
 */
import type { PushTriggerDeps } from '../service/push-trigger.js';
import type { PushDevices, PushServiceDeps } from '../push/push.service.js';
import type { ActivityDevices } from '../push/live-activity.service.js';
import { pushWhenConfigured, type PushSettings, type RunningPush } from '../push/settings.js';
import { activityDelaysOf } from '../push/activity-delays.js';
import { pushSubjects, type SessionMeta } from '../service/push-subjects.js';
import type { Logger } from '../log.js';
import type { AgentHub } from '../agent/hub/hub.js';
import { DEFAULT_ADAPTER } from '../agent/contract/adapters.js';
import { agentLabel } from '../agent/contract/kinds.js';

/** What the daemon keeps of push: its status for health, and how to stop it. */
export type DaemonPush = RunningPush;

export interface DaemonPushDeps extends Omit<PushTriggerDeps, 'send' | 'subscribeEvery' | 'onLimitReset'> {
  readonly settings: PushSettings;
  readonly devices: PushDevices & ActivityDevices;
  /** The daemon's id and name: a Live Activity's attributes. */
  readonly daemon: { readonly id: string; readonly name: string };
  readonly inForeground: PushServiceDeps['inForeground'];
  /** The session's name, description and configured agent, or null when it is gone. */
  readonly describe: (id: string) => Promise<SessionMeta | null>;
  /** The agents: every state report, what a session's agent asks, which ask is open. */
  readonly agents: Pick<AgentHub, 'subscribeEvery' | 'asks' | 'openAsk' | 'stopOf'>;
  /** The kind of a configured agent (its adapter names it in titles). */
  readonly kindOf: (name: string) => string | null;
  /** Usage limits whose reset passed with nothing scheduled. */
  readonly onLimitReset: NonNullable<PushTriggerDeps['onLimitReset']>;
  readonly now: () => number;
  readonly log: Logger;
  /** The environment, for the tests' shorter Live Activity delays. */
  readonly env?: NodeJS.ProcessEnv;
}

/** Starts push when it is configured; otherwise only says why it is off. */
export function startPush(deps: DaemonPushDeps): Promise<DaemonPush> {
  return pushWhenConfigured(deps.settings, deps.log, (settings) => startConfigured(deps, settings));
}

async function startConfigured(deps: DaemonPushDeps, settings: Extract<PushSettings, { enabled: true }>): Promise<DaemonPush> {
  const delays = activityDelaysOf(deps.env ?? process.env);
  const [{ PushService }, { startPushTrigger }, { ApnsClient }, { ProviderTokens }, { LiveActivityService }, { startActivitySummary }] =
    await Promise.all([
      import('../push/push.service.js'),
      import('../service/push-trigger.js'),
      import('../push/apns.js'),
      import('../push/provider-token.js'),
      import('../push/live-activity.service.js'),
      import('../service/activity-summary.js'),
    ]);
  const shared = {
    client: new ApnsClient(),
    tokens: new ProviderTokens({ key: settings.key, teamId: settings.teamId, keyId: settings.keyId, now: deps.now }),
  };
  const subjects = pushSubjects({
    describe: deps.describe,
    label: (agent) => agentLabel(deps.kindOf(agent), agent),
    asks: (id) => deps.agents.asks(id),
  });
  const activities = new LiveActivityService({
    settings,
    ...shared,
    devices: deps.devices,
    attributes: () => ({ daemonId: deps.daemon.id, daemonName: deps.daemon.name }),
    delays,
    now: deps.now,
    log: deps.log,
  });
  const stopSummary = startActivitySummary({
    subscribeEvery: (listener) => deps.agents.subscribeEvery(listener),
    onSessionEnded: deps.onSessionEnded,
    describe: subjects.activity,
    changed: (sessions) => activities.setSessions(sessions),
    now: deps.now,
  });
  const push = new PushService({
    shared,
    settings,
    devices: deps.devices,
    inForeground: deps.inForeground,
    describe: subjects.alert,
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
    onLimitReset: deps.onLimitReset,
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
