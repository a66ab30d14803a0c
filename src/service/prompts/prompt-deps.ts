/**
 * What the prompt service (prompts.service.ts) and each session's queue (prompt-queue.ts) need
 * of the rest of the daemon, and the waits of a prompt's life (docs/api.md "Prompts").
 */
import type { InspectionEvent } from 'xstate';
import type { Logger } from '../../log.js';
import type { AgentStateFact } from '../../protocol/frames.js';
import type { PromptRecord } from '../../protocol/prompt.js';
import type { StoredPrompts } from '../../protocol/prompt.schemas.js';
import type { LinePane } from './typed-line.js';

/** How long each step of a prompt's life waits. */
export interface PromptWaits {
  /** After Enter, for the agent's report, before the input box is looked at (and Enter pressed once more). */
  readonly confirmMs: number;
  /** After that, for the report, before the prompt fails as not confirmed. */
  readonly submitMs: number;
  /** After a submitted prompt, for the turn it started to show, before the next is typed without it. */
  readonly turnStartMs: number;
  /** How often a queue looks again while the daemon does not know yet what the session runs. */
  readonly unknownPollMs: number;
}

export const PROMPT_WAITS: PromptWaits = { confirmMs: 3000, submitMs: 30_000, turnStartMs: 10_000, unknownPollMs: 1000 };

/** What the prompts read of the agents (the agent service). */
export interface PromptAgents {
  current(id: string): AgentStateFact | null;
  subscribeEvery(listener: (id: string, fact: AgentStateFact) => void): () => void;
  /** Calls `listener` with each prompt a session's agent reported the user submitted (its hook, file or event). */
  onUserMessage(listener: (id: string, text: string) => void): () => void;
  /** Whether the session's program reports the prompts it takes: an agent (true), another program (false); null while not known. */
  reportsPrompts(id: string): boolean | null;
}

/** The session's pane: typing into it, and what it shows. */
export interface PromptPanes extends LinePane {
  /** The visible screen of the session's pane (rows by LF), or null when it cannot be read now. */
  screen(id: string): Promise<string | null>;
  /** Whether the session's agent exited (its pane is dead). */
  exited(id: string): boolean;
}

/** Where a session's prompts are kept (its tmux option, and its record). */
export interface PromptStore {
  read(id: string): Promise<StoredPrompts | null>;
  write(id: string, stored: StoredPrompts): Promise<void>;
}

export interface PromptDeps {
  readonly agents: PromptAgents;
  readonly panes: PromptPanes;
  readonly store: PromptStore;
  readonly now: () => number;
  readonly log: Logger;
  readonly waits: PromptWaits;
  /** Calls `fn` in `ms`; returns the cancel. */
  readonly timer: (fn: () => void, ms: number) => () => void;
  /** XState inspection of a prompt's actor (the /ops view, the model test). */
  readonly inspect?: (session: string, prompt: string) => ((ev: InspectionEvent) => void) | undefined;
  /** A prompt changed (clients of its session are told). */
  readonly changed?: (session: string, record: PromptRecord) => void;
  /** A prompt failed (pushed once). */
  readonly failed?: (session: string, record: PromptRecord) => void;
}
