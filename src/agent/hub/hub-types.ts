/**
 * The types the agent hub and its parts share: where a pane lives, what the daemon gives the hub
 * (`AgentHubDeps`), and the two sides of one agent connection (the state a `state` frame
 * carries, `AgentStateFact`, lives beside the frame in src/protocol/frames.ts). Kept apart so
 * the hub's parts (src/agent/hub/session-agents.ts, extension-connection.ts, hook-intake.ts) and its
 * readers import no class.
 */
import type { InspectionEvent } from 'xstate';
import type { Logger } from '../../log.js';
import type { AgentRunner } from '../contract/adapter.js';
import type { AgentMessage, DaemonLine } from '../wire/extension-channel.js';
import type { PaneLocation } from '../../tmux/layout.js';

/** Where a pane lives: its session, or why it cannot be served (said to the person). */
export type { PaneLocation } from '../../tmux/layout.js';

export interface AgentHubDeps {
  readonly now: () => number;
  readonly log: Logger;
  /**
   * Finds the tether session of a pane on the daemon's tmux server (and marks it tether's); never
   * rejects: a failing tmux is a refusal. `serverPid`, when the agent named it, must be the server's.
   */
  readonly locate: (pane: string, tmuxSocket: string, serverPid?: number) => Promise<PaneLocation>;
  /** The URL a person opens (with the local token), told to the agent on welcome. */
  readonly url: () => string;
  /** The daemon's tether version, told to the agent on welcome (its extension may be newer). */
  readonly version?: string;
  /** A session got an agent: discovery should look at tmux now. */
  readonly registered?: (session: string) => void;
  /** The user messages of a session so far (the first few, and the count). */
  readonly userMessages?: (session: string, first: readonly string[], count: number) => void;
  /** One prompt the session's agent reported the user submitted, as it reported it (a queued prompt is confirmed by it). */
  readonly userMessage?: (session: string, text: string) => void;
  /** The session's agent gave its conversation a title (a report's `title`). */
  readonly titled?: (session: string, title: string) => void;
  /** XState inspection of a session's agent-state actor (the /ops view). */
  readonly inspect?: (session: string) => (ev: InspectionEvent) => void;
  /** The session's agent reported a new conversation file (the session record keeps it). */
  readonly sessionFile?: (session: string, path: string) => void;
  /** Each agent kind's reading of its hook reports (its adapter's runner), by kind; absent: hook reports are refused. */
  readonly readers?: ReadonlyMap<string, Pick<AgentRunner, 'readHook'>>;
  /** The kind of the agent that speaks the extension channel (pi's tether extension): what its reports are of. */
  readonly extensionKind?: string;
  /** The kind of the session's agent as the daemon knows it (a stop names it); absent or null: unknown. */
  readonly kindOf?: (session: string) => string | null;
  /** The session's agent reported its conversation id (the session record keeps it). */
  readonly conversation?: (session: string, id: string) => void;
}

/** One open agent connection, as the socket server hands it over. */
export interface AgentLink {
  send(message: DaemonLine): void;
  close(): void;
}

/** What the socket server calls for one connection. */
export interface AgentConnection {
  message(message: AgentMessage): void;
  closed(): void;
}
