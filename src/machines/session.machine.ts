/**
 * Session lifecycle (docs/contract.md "Session lifecycle"): one actor per
 * tmux session. The table's rows are transitions whose `meta.row` names the row; everything
 * else is tether's own and says so (`meta.row: 'tether'`).
 *
 * Invariant: the machine never touches tmux itself. Creating, killing and the control link are
 * actors provided by `src/actors` (their stubs, in session.setup.ts, throw, so a missing
 * `provide()` fails loudly); failure comes back as an event and becomes a state.
 */
import { and, assign, not, stateIn } from 'xstate';
import { sessionSetup, type SessionContext, type SessionEvent } from './session.setup.js';

/** The session's own types, where the rest of tether finds them; the slots' inputs are in session.setup.ts. */
export type { SessionContext, SessionEvent, SessionOrigin, SessionWorktree } from './session.setup.js';

/** A DELETE while the session is being made (created or restored): kept, and carried out once it exists. */
const keepDelete = (description: string) => ({
  actions: assign<SessionContext, { type: 'session.delete'; keepBuffer: boolean }, undefined, SessionEvent, never>({
    deleteRequested: ({ event }) => ({ keepBuffer: event.keepBuffer }),
  }),
  description,
  meta: { row: 'tether' },
});

/** One tmux session, from its creation or adoption to its end, row by row of the table. */
export const sessionMachine = sessionSetup.createMachine({
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
