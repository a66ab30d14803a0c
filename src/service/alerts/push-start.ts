/**
 * Push's rules, apart from its wiring (src/daemon/push.ts): push runs only when `[push]` is
 * configured (else only why it is off is said, and nothing of push is loaded: most daemons never
 * push, and the APNs client is memory an idle daemon would keep for nothing, docs/benchmarks.md
 * "Memory"); how a push names a session and its agent, asked of the sessions and the configured
 * agents directly; and whether the ask or the stop an alert is about still holds when it goes.
 */
import type { Logger } from '../../log.js';
import type { AgentHub } from '../../agent/hub/hub.js';
import type { SessionLabel } from '../../push/alert.js';
import type { PushSettings, PushStatus } from '../../push/settings.js';
import { DEFAULT_ADAPTER } from '../../agent/contract/adapters.js';
import { adapterOf } from '../../agent/contract/kinds.js';
import { DEFAULT_AGENT_NAME } from '../../config/schema.js';

/** What the daemon keeps of push: its status for health, and how to stop it. */
export interface DaemonPush {
  status(): PushStatus;
  stop(): void;
}

/** Push settings with push on. */
export type PushOn = Extract<PushSettings, { enabled: true }>;

/** Runs `start` when push is configured; otherwise logs why it is off once and answers a push that sends nothing. */
export async function pushWhenConfigured(
  settings: PushSettings,
  log: Logger,
  start: (settings: PushOn) => Promise<DaemonPush>,
): Promise<DaemonPush> {
  if (settings.enabled) return await start(settings);
  log.info(settings.reason);
  const off: PushStatus = { configured: false, reason: settings.reason, sent: 0, failed: 0, lastError: null };
  return { status: () => off, stop: () => undefined };
}

/**
 * How the push title names an agent: by its adapter's label where tether integrates with it, else
 * by its configured name; the default agent of another kind by the default adapter's (tether's own).
 */
export function agentLabel(kind: string | null, name: string): string {
  return adapterOf(kind)?.label ?? (name === DEFAULT_AGENT_NAME ? DEFAULT_ADAPTER.label : name);
}

/** What push reads of the sessions: a session's name, description and configured agent, or null when it is gone. */
export interface PushSessions {
  metaIfKnown(id: string): Promise<{ name: string; description?: string; agent: string } | null>;
}

/** What push reads of the configured agents: the kind of the one named `name`, or null. */
export interface PushAgentKinds {
  kind(name: string): string | null;
}

/**
 * What push reads to word an alert and to tell whether it still holds: the sessions, the
 * configured agents and the agents' states, each asked directly (no lambda of the root's between).
 */
export class PushFacts {
  constructor(
    private readonly sessions: PushSessions,
    private readonly kinds: PushAgentKinds,
    private readonly agents: Pick<AgentHub, 'asks' | 'openAsk' | 'stopOf'>,
  ) {}

  /** The session's name and its agent's label, for the Live Activity; null when it is gone. */
  async card(id: string): Promise<{ name: string; agentLabel: string } | null> {
    const meta = await this.sessions.metaIfKnown(id);
    return meta === null ? null : { name: meta.name, agentLabel: this.labelOf(meta.agent) };
  }

  /** The session's label for an alert: its name, description, agent's label and what the agent asks; null when it is gone. */
  async alert(id: string): Promise<SessionLabel | null> {
    const meta = await this.sessions.metaIfKnown(id);
    if (meta === null) return null;
    const asks = this.agents.asks(id);
    return {
      name: meta.name,
      ...(meta.description !== undefined ? { description: meta.description } : {}),
      agentLabel: this.labelOf(meta.agent),
      ...(asks !== null ? { asks } : {}),
    };
  }

  /** Whether the ask `askId` is still the one the session's agent waits on. */
  askOpen(id: string, askId: string): boolean {
    return this.agents.openAsk(id)?.open.ask.id === askId;
  }

  /** Whether the session's agent is still in the stop `stopId`. */
  stopHeld(id: string, stopId: string): boolean {
    return this.agents.stopOf(id)?.id === stopId;
  }

  /** The label of the configured agent `name`. */
  labelOf(name: string): string {
    return agentLabel(this.kinds.kind(name), name);
  }
}
