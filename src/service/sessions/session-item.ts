/**
 * One session as `GET /sessions` lists it and `GET /sessions/:id` gives it (docs/api.md
 * "Sessions"): tmux's facts, the live ones of the actors, and the agent's state, ask and stop;
 * and how an item is made of them (sessions.service.ts gathers the facts).
 *
 * Invariant: an item is plain data made of the facts given, read nowhere else.
 */
import type { SessionStatus } from '../../actors/system.js';
import type { ChangesSummary } from '../../git/changes.js';
import type { SessionWorktree } from '../../machines/session.machine.js';
import type { AgentState, Ask, Stop } from '../../protocol/frames.js';
import type { TmuxSessionInfo } from '../../tmux/sessions/session-list.js';
import type { AgentUsage } from '../../protocol/usage.js';
import { DEFAULT_AGENT_NAME } from '../../config/schema.js';

export interface SessionItem {
  id: string;
  name: string;
  description: string;
  /** `restoring` while it is brought back after its tmux server was lost; `unrestorable` when it could not be. */
  state: 'running' | 'exited' | 'restoring' | 'unrestorable';
  /** The exited agent's exit status, when tmux knows it; null while it runs. */
  exitStatus: number | null;
  agentState: AgentState | null;
  lastOutputAt: string | null;
  createdAt: string | null;
  clients: number;
  project: string | null;
  /** The directory the agent started in, when tether recorded it. */
  cwd: string | null;
  /** The configured agent the session runs: `default` for `[agent]`, else its `[agents.<name>]`. */
  agent: string;
  /** What the agent asks while it waits (docs/api.md "Asks"), or null. */
  ask: Ask | null;
  /** Why the agent stopped, while it is stopped (docs/api.md "Stops"), or null. */
  stop: Stop | null;
  /** The agent's account usage windows as it last reported them (docs/api.md "Usage"), or null. */
  usage: AgentUsage | null;
  /** Why an unrestorable session could not be brought back. */
  reason?: string;
  /** The git worktree tether made it in, or null. */
  worktree: SessionWorktree | null;
  /** Files changed and lines added and removed in its tree, as last computed (null: not yet, or not in git). */
  changes: ChangesSummary | null;
}

/** The facts beside tmux's of a session tmux holds: the actor's status, the agent's, its clients and changes. */
export interface LiveFacts {
  /** The actor's status; undefined when discovery has not adopted the session yet. */
  readonly live: SessionStatus | undefined;
  /** The agent's state and its ask, read together. */
  readonly agent: { readonly value: AgentState; readonly ask?: Ask } | null;
  readonly stop: Stop | null;
  readonly usage: AgentUsage | null;
  readonly clients: number;
  readonly changes: ChangesSummary | null;
}

/** What a session's record says of it, for one tmux does not hold (being restored, or unrestorable). */
export interface RecordedFacts {
  readonly description: string;
  readonly createdAt: string;
  readonly cwd: string | null;
  readonly agent?: string;
  readonly worktree?: SessionWorktree | null;
}

/** A session tmux holds: tmux's facts, the live ones where an actor has them. */
export function sessionItemOf(info: TmuxSessionInfo, facts: LiveFacts): SessionItem {
  const { live, agent } = facts;
  return {
    id: info.name,
    name: info.name,
    description: info.description ?? '',
    state: live ? (live.state === 'exited' ? 'exited' : 'running') : info.paneDead ? 'exited' : 'running',
    exitStatus: live ? (live.state === 'exited' ? live.exitStatus : null) : info.paneDead ? info.paneDeadStatus : null,
    agentState: agent?.value ?? null,
    lastOutputAt: live?.lastOutputAt ? new Date(live.lastOutputAt).toISOString() : null,
    createdAt: info.createdAt,
    clients: facts.clients,
    project: info.project,
    cwd: info.cwd,
    agent: info.agent ?? DEFAULT_AGENT_NAME,
    ask: agent?.ask ?? null,
    stop: facts.stop,
    usage: facts.usage,
    worktree: info.worktree,
    changes: facts.changes,
  };
}

/** A session tmux does not hold, from its record: being restored, or unrestorable. */
export function absentSessionItem(id: string, state: 'restoring' | 'unrestorable', record: RecordedFacts | null): SessionItem {
  return {
    id,
    name: id,
    description: record?.description ?? '',
    state,
    exitStatus: null,
    agentState: null,
    lastOutputAt: null,
    createdAt: record?.createdAt ?? null,
    clients: 0,
    project: null,
    cwd: record?.cwd ?? null,
    agent: record?.agent ?? DEFAULT_AGENT_NAME,
    ask: null,
    stop: null,
    usage: null,
    worktree: record?.worktree ?? null,
    changes: null,
  };
}
