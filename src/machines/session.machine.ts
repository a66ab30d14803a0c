/**
 * Session lifecycle (docs/contract.md "Session lifecycle"): one actor per
 * tmux session. The table's rows are transitions whose `meta.row` names the row; everything
 * else is tether's own and says so (`meta.row: 'tether'`).
 *
 * Invariant: the machine never touches tmux itself. Creating, killing and the control link are
 * actors provided by `src/actors` (stubs here throw, so a missing `provide()` fails loudly);
 * failure comes back as an event and becomes a state.
 */
import { and, assign, fromCallback, fromPromise, not, setup, stateIn } from 'xstate';

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

/** A DELETE while the session is being made (created or restored): kept, and carried out once it exists. */
const keepDelete = (description: string) => ({
  actions: assign<SessionContext, { type: 'session.delete'; keepBuffer: boolean }, undefined, SessionEvent, never>({
    deleteRequested: ({ event }) => ({ keepBuffer: event.keepBuffer }),
  }),
  description,
  meta: { row: 'tether' },
});

export const sessionMachine = setup({
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
}).createMachine({
  id: 'session',
  description: 'docs/contract.md "Session lifecycle": absent -> running -> absent; reattach across sidecar restarts',
  context: ({ input }) => ({ id: input.id, paneId: null, exitStatus: null, linkFailures: 0, lastError: null, deleteRequested: null }),
  initial: 'absent',
  states: {
    absent: {
      description: 'No tmux session yet: waiting to create one or to adopt one that exists',
      on: {
        'session.create': {
          target: 'creating',
          description: 'POST /sessions (origin api) or attach CLI with the session missing (origin cli)',
          meta: { row: ['absent --POST /sessions--> running', 'absent --attach CLI--> running'] },
        },
        'session.adopt': {
          target: 'running',
          description: 'The session exists in tmux (sidecar restart, or created by the attach CLI): reattach',
          meta: { row: ['running --sidecar restart--> running'] },
        },
        'session.restore': {
          target: 'restoring',
          description: 'At start-up: the session has a record but its tmux server is gone (a reboot, a crash while tether was down)',
          meta: { row: 'tether' },
        },
      },
    },
    creating: {
      description: 'A detached tmux session running the agent is being created',
      on: {
        'session.delete': keepDelete('DELETE while the session is being created: kept, and carried out once it exists'),
      },
      invoke: {
        id: 'create',
        src: 'createTmuxSession',
        input: ({ context, event }) => ({
          id: context.id,
          origin: event.type === 'session.create' ? event.origin : 'api',
          ...(event.type === 'session.create' && event.project !== undefined ? { project: event.project } : {}),
          ...(event.type === 'session.create' && event.cwd !== undefined ? { cwd: event.cwd } : {}),
          ...(event.type === 'session.create' && event.agent !== undefined ? { agent: event.agent } : {}),
          ...(event.type === 'session.create' && event.worktree !== undefined ? { worktree: event.worktree } : {}),
        }),
        onDone: [
          {
            target: 'deleting',
            guard: 'isDeleteRequested',
            actions: assign({ paneId: ({ event }) => event.output.paneId }),
            description: 'Created, and a DELETE is waiting: delete it now',
            meta: { row: 'tether' },
          },
          {
            target: 'running',
            actions: assign({ paneId: ({ event }) => event.output.paneId }),
            meta: { row: ['absent --POST /sessions--> running', 'absent --attach CLI--> running'] },
          },
        ],
        onError: {
          target: 'failed',
          actions: assign({ lastError: ({ event }) => String(event.error) }),
          meta: { row: 'tether' },
        },
      },
    },
    failed: {
      type: 'final',
      description: 'Creation failed (name taken, tmux unavailable): the session stays absent',
    },
    running: {
      type: 'parallel',
      description: 'The tmux session exists; tether mirrors its agent pane',
      on: {
        'session.delete': {
          target: 'deleting',
          description: 'DELETE /sessions/:id',
          meta: { row: ['running --DELETE /sessions/:id--> absent'] },
        },
        'session.gone': {
          target: 'ended',
          description: 'tmux no longer has the session: killed on purpose (kill-session, kill-server)',
          meta: { row: 'tether' },
        },
        'server.lost': [
          {
            target: 'restoring',
            guard: and(['isRestoreEnabled', not(stateIn('#session.running.pane.exited'))]),
            actions: assign({ lastError: ({ event }) => event.reason }),
            description: 'The tmux server died (a crash, a SIGKILL): bring the session back',
            meta: { row: 'tether' },
          },
          {
            target: 'ended',
            description: 'The tmux server died, and restoring is turned off or the agent had exited: the session is gone',
            meta: { row: 'tether' },
          },
        ],
      },
      states: {
        link: {
          description: 'The control-mode client of this session',
          initial: 'attached',
          states: {
            attached: {
              invoke: { id: 'link', src: 'tmuxLink', input: ({ context }) => ({ id: context.id }) },
              initial: 'connecting',
              on: {
                'link.down': {
                  target: 'lost',
                  actions: assign({
                    linkFailures: ({ context }) => context.linkFailures + 1,
                    lastError: ({ event }) => event.reason,
                  }),
                  meta: { row: 'tether' },
                },
              },
              states: {
                connecting: {
                  on: {
                    'link.up': {
                      target: 'live',
                      actions: assign({ paneId: ({ event }) => event.paneId, linkFailures: 0, lastError: null }),
                      meta: { row: 'tether' },
                    },
                  },
                },
                live: {},
              },
            },
            lost: {
              description: 'The control client died; try again with back-off',
              after: { linkRetry: { target: 'attached', meta: { row: 'tether' } } },
            },
          },
        },
        pane: {
          description: 'The agent pane: alive, or exited (remain-on-exit keeps it), or respawning its agent',
          initial: 'alive',
          states: {
            alive: {
              on: {
                'pane.exited': {
                  target: 'exited',
                  // Only a live link reports the pane; a stale report after the link went is dropped.
                  guard: 'isLinkLive',
                  actions: assign({ exitStatus: ({ event }) => event.status }),
                  meta: { row: 'tether' },
                },
              },
            },
            exited: {
              on: {
                'pane.exited': {
                  description: 'The exit status became known after the death was reported',
                  guard: 'isLinkLive',
                  actions: assign({ exitStatus: ({ event }) => event.status }),
                  meta: { row: 'tether' },
                },
                'pane.revived': {
                  target: 'alive',
                  description: 'The pane runs again (respawned from a shell)',
                  guard: 'isLinkLive',
                  actions: assign({ exitStatus: null }),
                  meta: { row: 'tether' },
                },
                'pane.respawn': {
                  target: 'respawning',
                  description: 'POST /sessions/:id/respawn, or a respawn message on the stream',
                  meta: { row: ['running --POST /sessions/:id/respawn [the agent exited]--> running'] },
                },
              },
            },
            respawning: {
              description: 'The agent is being started again in its pane; the link reports how it went',
              invoke: {
                id: 'respawn',
                src: 'respawnAgentPane',
                input: ({ context }) => ({ id: context.id, paneId: context.paneId }),
                onError: {
                  target: 'exited',
                  actions: assign({ lastError: ({ event }) => String(event.error) }),
                  meta: { row: 'tether' },
                },
              },
              on: {
                'pane.revived': {
                  target: 'alive',
                  description: 'The new agent runs',
                  guard: 'isLinkLive',
                  actions: assign({ exitStatus: null }),
                  meta: { row: 'tether' },
                },
                'pane.exited': {
                  target: 'exited',
                  description: 'The pane is dead: the new agent exited at once, or tmux had not started it',
                  guard: 'isLinkLive',
                  actions: assign({ exitStatus: ({ event }) => event.status }),
                  meta: { row: 'tether' },
                },
              },
            },
          },
        },
      },
    },
    restoring: {
      description: 'Bringing the session back from its record: same name, directory and description, the agent reopening its conversation',
      on: {
        'session.delete': keepDelete('DELETE while the session is being restored: kept, and carried out once it exists'),
      },
      invoke: {
        id: 'restore',
        src: 'restoreTmuxSession',
        input: ({ context }) => ({ id: context.id }),
        onDone: [
          {
            target: 'deleting',
            guard: 'isDeleteRequested',
            actions: assign({ paneId: ({ event }) => event.output.paneId }),
            description: 'Restored, and a DELETE is waiting: delete it now',
            meta: { row: 'tether' },
          },
          {
            target: 'running',
            actions: assign({ paneId: ({ event }) => event.output.paneId, exitStatus: null, linkFailures: 0, lastError: null }),
            meta: { row: 'tether' },
          },
        ],
        onError: {
          target: 'unrestorable',
          actions: assign({ lastError: ({ event }) => String(event.error) }),
          meta: { row: 'tether' },
        },
      },
    },
    unrestorable: {
      type: 'final',
      description: 'It could not be brought back (its directory gone, its agent missing): its record says why, and it is not tried again',
    },
    ended: {
      type: 'final',
      description: 'absent again (the table\'s "absent" after running): the actor stops and is removed',
    },
    deleting: {
      description: 'Killing the tmux session and deleting its buffer',
      invoke: {
        id: 'delete',
        src: 'deleteTmuxSession',
        input: ({ context, event }) => ({
          id: context.id,
          keepBuffer: event.type === 'session.delete' ? event.keepBuffer : (context.deleteRequested?.keepBuffer ?? false),
        }),
        onDone: { target: 'ended', meta: { row: ['running --DELETE /sessions/:id--> absent'] } },
        onError: {
          target: 'running',
          actions: assign({ lastError: ({ event }) => String(event.error) }),
          meta: { row: 'tether' },
        },
      },
    },
  },
});
