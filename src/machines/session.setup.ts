/**
 * The session machine's setup (src/machines/session.machine.ts holds its states): its context,
 * its events, and the slots src/actors fills in, with the input each gets.
 *
 * Invariant: every slot that touches tmux is a stub that throws, so a session machine run without
 * `provide()` fails loudly instead of doing nothing.
 */
import { fromCallback, fromPromise, setup, stateIn } from 'xstate';

/** How a session came to be created: the REST API or the `attach` CLI (two rows of the table). */
export type SessionOrigin = 'api' | 'cli';

/**
 * The git worktree a session was made in (docs/api.md "Worktrees and changes"): the repository,
 * the branch, the worktree's folder (where the agent starts) and the commit it started from;
 * `newBranch` when tether made the branch for it (removing the worktree removes that branch).
 */
export interface SessionWorktree {
  readonly repo: string;
  readonly branch: string;
  readonly path: string;
  readonly base: string;
  readonly newBranch: boolean;
}

export interface SessionInput {
  /** The tmux session name: the session's id, fixed at creation. */
  readonly id: string;
}

export interface SessionContext {
  readonly id: string;
  /** The pane tether mirrors (`%N`), known once created or linked. */
  paneId: string | null;
  /** Exit status of the pane's program once it died (remain-on-exit keeps the pane). */
  exitStatus: number | null;
  /** Consecutive failed link attempts; drives the reconnect back-off. */
  linkFailures: number;
  /** The last failure, for health and logs; cleared when the link is up again. */
  lastError: string | null;
  /** A DELETE that arrived while the session was being created: carried out once it exists. */
  deleteRequested: { keepBuffer: boolean } | null;
}

export type SessionEvent =
  | { type: 'session.create'; origin: SessionOrigin; project?: string; cwd?: string; agent?: string; worktree?: SessionWorktree }
  | { type: 'session.adopt' }
  | { type: 'session.restore' }
  | { type: 'session.delete'; keepBuffer: boolean }
  | { type: 'session.gone' }
  | { type: 'server.lost'; reason: string }
  | { type: 'link.up'; paneId: string }
  | { type: 'link.down'; reason: string }
  | { type: 'pane.exited'; status: number | null }
  | { type: 'pane.revived' }
  | { type: 'pane.respawn' };

export interface CreateSessionInput {
  readonly id: string;
  readonly origin: SessionOrigin;
  readonly project?: string;
  /** The directory the agent starts in (absolute, checked by the service); the configured default when absent. */
  readonly cwd?: string;
  /** The configured agent to run (`default`, or an `[agents.<name>]`); the default when absent. */
  readonly agent?: string;
  /** The worktree `cwd` is (made by the service before the session). */
  readonly worktree?: SessionWorktree;
}
export interface DeleteSessionInput {
  readonly id: string;
  readonly keepBuffer: boolean;
}
export interface LinkInput {
  readonly id: string;
}
export interface RestoreSessionInput {
  readonly id: string;
}
export interface RespawnPaneInput {
  readonly id: string;
  /** The agent pane, as the session knows it. */
  readonly paneId: string | null;
}

/** Reconnect back-off for the control link: 250 ms doubling to a 5 s ceiling. */
export function linkRetryDelayMs(failures: number): number {
  return Math.min(5000, 250 * 2 ** Math.max(0, failures - 1));
}

const notProvided = (what: string) => () => {
  throw new Error(`sessionMachine: ${what} was not provided`);
};

/** The setup the session machine is made from; its stubs are replaced by `provide()`. */
export const sessionSetup = setup({
  types: {
    context: {} as SessionContext,
    events: {} as SessionEvent,
    input: {} as SessionInput,
  },
  actors: {
    /** Creates the detached tmux session running the agent; resolves with its pane id. */
    createTmuxSession: fromPromise<{ paneId: string }, CreateSessionInput>(notProvided('createTmuxSession')),
    /** Kills the tmux session (and deletes its buffer unless asked to keep it). */
    deleteTmuxSession: fromPromise<void, DeleteSessionInput>(notProvided('deleteTmuxSession')),
    /**
     * Brings the session back from its record after its tmux server was lost: a tmux session of
     * the same name, in the same directory, the agent reopening its conversation. Resolves with
     * the new pane id; rejects (and the record says why) when it cannot be restored.
     */
    restoreTmuxSession: fromPromise<{ paneId: string }, RestoreSessionInput>(notProvided('restoreTmuxSession')),
    /** Starts the agent again in its dead pane (same command, environment and directory). */
    respawnAgentPane: fromPromise<void, RespawnPaneInput>(notProvided('respawnAgentPane')),
    /** The control-mode link: sends link.up / link.down / pane.exited / pane.revived / session.gone / server.lost. */
    tmuxLink: fromCallback<SessionEvent, LinkInput>(notProvided('tmuxLink')),
  },
  guards: {
    /** Pane reports count only while the link that makes them is live. */
    isLinkLive: stateIn('#session.running.link.attached.live'),
    /** A DELETE came in while the session was being created. */
    isDeleteRequested: ({ context }) => context.deleteRequested !== null,
    /** `[agent] restore`: sessions lost with their tmux server are brought back (provided by the actors layer). */
    isRestoreEnabled: notProvided('isRestoreEnabled'),
  },
  delays: {
    linkRetry: ({ context }) => linkRetryDelayMs(context.linkFailures),
  },
});
