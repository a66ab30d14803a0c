/**
 * The I/O behind the session machine's slots: creating and killing the tmux session, starting
 * its agent again in a dead pane, bringing it back after its server was lost, and its pane link
 * (src/tmux/pane/pane-connect.ts), which feeds the session's stream itself and tells this actor only
 * what changes its state.
 *
 * Invariant: nothing here throws into the machine; a slot's failure is its actor's error.
 */
import { fromCallback, fromPromise } from 'xstate';
import type {
  CreateSessionInput,
  DeleteSessionInput,
  LinkInput,
  RespawnPaneInput,
  RestoreSessionInput,
  SessionEvent,
} from '../machines/session.setup.js';
import type { Logger } from '../log.js';
import type { LivePanes } from '../stream/live-pane.js';
import { isNoSessionError, type TmuxCli } from '../tmux/exec.js';
import { connectPaneLink } from '../tmux/pane/pane-connect.js';
import { SESSION_OPTIONS } from '../tmux/layout.js';
import { killSession, readUserOption } from '../tmux/sessions/sessions.js';
import { createSession, respawnPane } from '../tmux/sessions/session-create.js';
import type { TmuxTarget } from '../tmux/target.js';
import { attentionOf, ExitWitness, type SessionAttention } from './attention.js';

/** What runs in a new session's pane. */
export interface AgentLaunch {
  /** The configured agent's name (`default` for `[agent]`), kept on the session as `@tether-agent`. */
  readonly agent?: string;
  readonly command: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly cwd?: string;
}

export interface SessionDeps {
  readonly cli: TmuxCli;
  readonly target: TmuxTarget;
  readonly panes: LivePanes;
  /** The launch of a session's agent; `agent` names the configured one (absent: the session's own, else the default). */
  readonly agent: (id: string, agent?: string) => AgentLaunch;
  readonly now: () => number;
  readonly log: Logger;
  /** A control client saw tmux's %sessions-changed: discovery should look again now. */
  readonly sessionsChanged: () => void;
  /** Deletes the session's disk buffer (DELETE without keepBuffer). */
  readonly deleteBuffer: (id: string) => Promise<void>;
  /**
   * Bringing sessions back after their tmux server was lost (`[agent] restore`); absent: a lost
   * server ends its sessions.
   */
  readonly restore?: (id: string) => Promise<{ paneId: string }>;
  /** Something the session's human should hear about: its agent exited, it could not be restored (once each). */
  readonly attention?: (id: string, attention: SessionAttention) => void;
}

function linkLogic(deps: SessionDeps, exits: ExitWitness) {
  return fromCallback<SessionEvent, LinkInput>(({ input, sendBack }) => {
    const pane = deps.panes.ensure(input.id);
    return connectPaneLink(
      {
        cli: deps.cli,
        target: deps.target,
        log: deps.log,
        sessionsChanged: deps.sessionsChanged,
        paneSeen: (state) => {
          const exit = exits.observe(pane, state);
          if (exit) deps.attention?.(input.id, exit);
        },
      },
      pane.link,
      pane,
      sendBack,
    );
  });
}

/** The session machine's actors, bound to real tmux. */
export function createSessionImplementations(deps: SessionDeps) {
  // Exits are told from now on: a pane found dead that died before this daemon started is not news.
  const exits = new ExitWitness(Math.floor(deps.now() / 1000));
  return {
    actors: {
      createTmuxSession: fromPromise<{ paneId: string }, CreateSessionInput>(async ({ input }) => {
        const launch = deps.agent(input.id, input.agent);
        const created = await createSession(deps.cli, {
          name: input.id,
          command: launch.command,
          ...(launch.agent !== undefined ? { agent: launch.agent } : {}),
          env: { ...launch.env },
          ...((input.cwd ?? launch.cwd) !== undefined ? { cwd: input.cwd ?? launch.cwd } : {}),
          ...(input.project !== undefined ? { project: input.project } : {}),
          ...(input.worktree !== undefined ? { worktree: input.worktree } : {}),
          createdAt: new Date(deps.now()).toISOString(),
        });
        deps.log.info({ session: input.id, origin: input.origin }, 'session created');
        return { paneId: created.paneId };
      }),
      deleteTmuxSession: fromPromise<void, DeleteSessionInput>(async ({ input }) => {
        try {
          await killSession(deps.cli, input.id);
        } catch (err) {
          if (!isNoSessionError(err)) throw err;
        }
        // The session is gone now; a buffer that cannot be removed must not bring it back.
        if (!input.keepBuffer) {
          await deps
            .deleteBuffer(input.id)
            .catch((err: Error) => deps.log.warn({ session: input.id, err: err.message }, 'the session buffer could not be deleted'));
        }
        deps.log.info({ session: input.id, keepBuffer: input.keepBuffer }, 'session deleted');
      }),
      restoreTmuxSession: fromPromise<{ paneId: string }, RestoreSessionInput>(({ input }) => {
        if (!deps.restore) return Promise.reject(new Error('restoring sessions is turned off'));
        return deps.restore(input.id).catch((err: unknown) => {
          // A failure whose reason was not told yet since the session last ran is told (once per reason).
          const attention = attentionOf(err);
          if (attention) deps.attention?.(input.id, attention);
          throw err;
        });
      }),
      respawnAgentPane: fromPromise<void, RespawnPaneInput>(async ({ input }) => {
        const pane = deps.panes.ensure(input.id);
        const paneId = input.paneId ?? pane.link.paneId;
        if (paneId === null) throw new Error(`session ${input.id} has no known agent pane`);
        // The agent as it was created: its command and environment, in the directory it started in
        // (recorded at creation; without the record tmux keeps the pane's own).
        const [cwd, agent] = await Promise.all([
          readUserOption(deps.cli, input.id, SESSION_OPTIONS.cwd),
          readUserOption(deps.cli, input.id, SESSION_OPTIONS.agent),
        ]);
        const launch = deps.agent(input.id, agent ?? undefined);
        await pane.restartPane(() =>
          pane.link.withoutLink(() =>
            respawnPane(deps.cli, { paneId, command: launch.command, env: { ...launch.env }, ...(cwd !== null ? { cwd } : {}) }),
          ),
        );
        deps.log.info({ session: input.id, paneId }, 'agent respawned');
      }),
      tmuxLink: linkLogic(deps, exits),
    },
    guards: {
      isRestoreEnabled: () => deps.restore !== undefined,
    },
  };
}
