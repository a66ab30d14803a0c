/**
 * What an agent's adapter tells the agent-neutral core about one hook report: the state events
 * it means (in the names the agent-state machine takes), and the facts it carries (the
 * conversation id a restore reopens, the directory the agent works in, a prompt for
 * auto-naming, the question it waits on). pi's extension speaks the core's protocol itself;
 * agents integrated by hook programs (Claude Code, Codex) are read by their adapter's
 * `read<Agent>Hook` (docs/agents.md "Adding an agent").
 */
import type { EventMessage } from './protocol.js';

/** What one hook report means. */
export interface HookOutcome {
  /** State events, in order (often one, none for an event that changes nothing). */
  readonly events: readonly EventMessage[];
  /** The agent ended (its session closed): no agent reports from the session any more. */
  readonly gone?: boolean;
  /** The agent's conversation id, reopened by a restore. */
  readonly conversation?: string;
  /** The directory the agent works in (where its project's commands are). */
  readonly cwd?: string;
  /** A prompt the user submitted (counts for auto-naming). */
  readonly userMessage?: string;
  /** What the agent asks the user while it waits (a permission), said in the push. */
  readonly asks?: string;
}

/** An outcome that changes nothing. */
export const NO_OUTCOME: HookOutcome = { events: [] };

/** A state event, as the protocol writes it. */
export function stateEvent(event: EventMessage['event'], extra: Omit<EventMessage, 'type' | 'event'> = {}): EventMessage {
  return { type: 'event', event, ...extra };
}
