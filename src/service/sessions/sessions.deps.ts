/**
 * What the sessions service is built from (src/service/sessions/sessions.service.ts): the views it takes
 * of the records, the agents and the configured agents, each with its "none" default.
 */
import type { SlashCommand } from '../../agent/contract/commands.js';
import type { Ask, Stop } from '../../protocol/frames.js';
import type { AgentUsage } from '../../protocol/usage.js';
import type { SessionItem } from './session-item.js';
import type { TmuxCli } from '../../tmux/exec.js';
import type { UnrestorableSession } from '../../restore/at-start.js';
import type { SessionWorktree } from '../../machines/session.machine.js';
import type { Workspaces } from '../workspaces/workspaces.service.js';
import type { SidecarSystem } from '../../actors/system.js';
import { DEFAULT_AGENT_NAME } from '../../config/schema.js';

/** What the sessions need of the records: the sessions that could not be restored, and their facts. */
export interface SessionRecordsView {
  unrestorable(): readonly UnrestorableSession[];
  /** The recorded facts of a session (for one being restored, which tmux does not hold yet). */
  record(
    id: string,
  ): { description: string; createdAt: string; cwd: string | null; agent?: string; worktree?: SessionWorktree | null } | null;
}
export const NO_RECORDS: SessionRecordsView = { unrestorable: () => [], record: () => null };

/** What the sessions need of the agents (the agent hub): their state. */
export interface SessionAgents {
  current(id: string): { value: NonNullable<SessionItem['agentState']>; ask?: Ask } | null;
  /** Why the session's agent stopped, while it is stopped (an exited agent's too: it has no state). */
  stopOf(id: string): Stop | null;
  /** The usage windows the session's agent reported, or null. */
  usageOf(id: string): AgentUsage | null;
}
export const NO_AGENTS: SessionAgents = { current: () => null, stopOf: () => null, usageOf: () => null };

/** The configured agents: their names, and each session's slash commands (its agent's adapter lists them). */
export interface AgentCatalog {
  /** Every configured agent's name, `default` first. */
  names(): readonly string[];
  /** Why agent `agent` cannot be started (its program is missing), or null. */
  problem(agent: string): string | null;
  /** The slash commands of session `id` running agent `agent`. */
  commands(id: string, agent: string): Promise<readonly SlashCommand[]>;
}
export const DEFAULT_ONLY: AgentCatalog = { names: () => [DEFAULT_AGENT_NAME], problem: () => null, commands: () => Promise.resolve([]) };
/** What the sessions service is built from; the optional parts default to none. */
export interface SessionsDeps {
  system: SidecarSystem;
  cli: TmuxCli;
  /** Names of sessions created without one: `<namePrefix>-<n>`. */
  namePrefix: string;
  agents?: SessionAgents;
  /** Live stream and side clients of a session (the stream hub counts them). */
  clients?: (id: string) => number;
  records?: SessionRecordsView;
  catalog?: AgentCatalog;
  /** Worktrees and changes (docs/api.md "Worktrees and changes"); absent: none. */
  workspaces?: Workspaces | null;
}
