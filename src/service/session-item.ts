/**
 * One session as `GET /sessions` lists it and `GET /sessions/:id` gives it (docs/api.md
 * "Sessions"): tmux's facts, the live ones of the actors, and the agent's state, ask and stop.
 */
import type { ChangesSummary } from '../git/changes.js';
import type { SessionWorktree } from '../machines/session.machine.js';
import type { AgentState, Ask, Stop } from '../protocol/frames.js';

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
  /** Why an unrestorable session could not be brought back. */
  reason?: string;
  /** The git worktree tether made it in, or null. */
  worktree: SessionWorktree | null;
  /** Files changed and lines added and removed in its tree, as last computed (null: not yet, or not in git). */
  changes: ChangesSummary | null;
}
