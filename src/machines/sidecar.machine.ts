/**
 * The root of the actor system: the sidecar. It owns one session actor per tether session and
 * the discovery of sessions in tmux (at boot, on tmux's own session-change notices, and by a
 * slow rescan). It holds no session state of its own (docs/contract.md "tmux is the store"); this machine
 * only mirrors which sessions exist into child actors.
 *
 * Invariant: at most one session actor per session name; an actor that reached its final
 * state is removed (the name can then be created again).
 */
import { assign, enqueueActions, fromCallback, sendTo, setup, type ActorRefFrom } from 'xstate';
import { sessionMachine, type SessionOrigin, type SessionWorktree } from './session.machine.js';

/** What discovery saw in tmux: the server's reachability and the tether sessions in it. */
export interface TmuxScan {
  readonly serverRunning: boolean;
  readonly sessionIds: readonly string[];
  /**
   * The sessions whose tmux session existed (their actor was running) when the scan began. Only
   * these can be judged gone by it: a session created while the scan ran is missing from its
   * answer without being gone. Absent: every known session counts.
   */
  readonly runningAtStart?: readonly string[];
  /** The pid of the server that answered (null when none did). */
  readonly serverPid?: number | null;
}

export type SidecarEvent =
  | { type: 'tmux.scanned'; scan: TmuxScan }
  | { type: 'tmux.unreachable'; reason: string }
  | {
      type: 'session.create';
      id: string;
      origin: SessionOrigin;
      project?: string;
      cwd?: string;
      agent?: string;
      worktree?: SessionWorktree;
    }
  | { type: 'session.restore'; id: string }
  | { type: 'session.delete'; id: string; keepBuffer: boolean }
  | { type: 'sidecar.stop' };

export type SessionActorRef = ActorRefFrom<typeof sessionMachine>;

export interface SidecarContext {
  sessions: Record<string, SessionActorRef>;
  /** Set once the first scan finished: the boot reattach is done. */
  booted: boolean;
  /** Why tmux cannot be reached, while it cannot. */
  tmuxProblem: string | null;
}

const notProvided = (what: string) => () => {
  throw new Error(`sidecarMachine: ${what} was not provided`);
};

/** The child actor id of a session's actor. */
export const sessionActorId = (id: string): string => `session:${id}`;

export const sidecarMachine = setup({
  types: {
    context: {} as SidecarContext,
    events: {} as SidecarEvent,
  },
  actors: {
    session: sessionMachine,
    /** Scans tmux at start, on tmux's notices and periodically; sends tmux.scanned / tmux.unreachable. */
    tmuxDiscovery: fromCallback<SidecarEvent>(notProvided('tmuxDiscovery')),
  },
  actions: {
    /** Spawns an actor for each newly listed session (adopt) and ends those tmux lost. */
    adoptScanned: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'tmux.scanned') return;
      const listed = new Set(event.scan.sessionIds);
      const fresh = event.scan.sessionIds.filter((id) => !context.sessions[id]);
      // Known sessions that a running server no longer lists are gone (killed while we watched).
      // Only sessions that already existed when the scan began: one created meanwhile is not in its answer.
      const judged = event.scan.runningAtStart ? new Set(event.scan.runningAtStart) : null;
      const gone = event.scan.serverRunning
        ? Object.keys(context.sessions).filter((id) => !listed.has(id) && (judged?.has(id) ?? true))
        : [];
      if (fresh.length > 0) {
        enqueue.assign({
          sessions: ({ context: c, spawn }) => {
            const next = { ...c.sessions };
            for (const id of fresh) next[id] = spawn('session', { id: sessionActorId(id), input: { id } });
            return next;
          },
        });
      }
      for (const id of fresh) enqueue.sendTo(({ context: c }) => c.sessions[id]!, { type: 'session.adopt' });
      for (const id of gone) enqueue.sendTo(({ context: c }) => c.sessions[id]!, { type: 'session.gone' });
    }),
    /** A new session actor for the event's session (one being created or restored). */
    spawnSession: assign({
      sessions: ({ context, event, spawn }) =>
        event.type === 'session.create' || event.type === 'session.restore'
          ? { ...context.sessions, [event.id]: spawn('session', { id: sessionActorId(event.id), input: { id: event.id } }) }
          : context.sessions,
    }),
    /** I/O hook: a session actor ended; release what the actors layer keeps for it. */
    releaseSession: (_: unknown, _params: { id: string }): void => notProvided('releaseSession')(),
  },
}).createMachine({
  id: 'sidecar',
  description: 'The sidecar: discovers tether sessions and runs one session actor for each',
  context: { sessions: {}, booted: false, tmuxProblem: null },
  initial: 'serving',
  states: {
    serving: {
      invoke: { id: 'discovery', src: 'tmuxDiscovery' },
      type: 'parallel',
      states: {
        tmux: {
          description: 'Whether the tmux server answers',
          initial: 'unknown',
          states: {
            unknown: {},
            up: {},
            down: {},
          },
          on: {
            'tmux.scanned': [
              {
                guard: ({ event }) => event.scan.serverRunning,
                target: '.up',
                description: 'Adopt every tether session tmux holds that has no actor yet (reattach at boot)',
                meta: { row: ['running --sidecar restart--> running'] },
                actions: ['adoptScanned', assign({ booted: true, tmuxProblem: null })],
              },
              {
                target: '.down',
                description: 'No tmux server: sessions keep their actors, which retry their links',
                meta: { row: 'tether' },
                actions: ['adoptScanned', assign({ booted: true, tmuxProblem: 'the tmux server is not running' })],
              },
            ],
            'tmux.unreachable': {
              target: '.down',
              actions: assign({ tmuxProblem: ({ event }) => event.reason }),
              meta: { row: 'tether' },
            },
          },
        },
      },
      on: {
        'session.create': {
          description: 'POST /sessions: a new session actor creates the tmux session',
          meta: { row: ['absent --POST /sessions--> running'] },
          guard: ({ context, event }) => !context.sessions[event.id],
          actions: [
            'spawnSession',
            sendTo(
              ({ context, event }) => context.sessions[event.id]!,
              ({ event }) => ({
                type: 'session.create' as const,
                origin: event.origin,
                ...(event.project !== undefined ? { project: event.project } : {}),
                ...(event.cwd !== undefined ? { cwd: event.cwd } : {}),
                ...(event.agent !== undefined ? { agent: event.agent } : {}),
                ...(event.worktree !== undefined ? { worktree: event.worktree } : {}),
              }),
            ),
          ],
        },
        'session.restore': {
          description: 'At start-up: a session whose record outlived its tmux server gets an actor that brings it back',
          meta: { row: 'tether' },
          guard: ({ context, event }) => !context.sessions[event.id],
          actions: ['spawnSession', sendTo(({ context, event }) => context.sessions[event.id]!, { type: 'session.restore' as const })],
        },
        'session.delete': {
          description: 'DELETE /sessions/:id: forwarded to that session actor',
          meta: { row: ['running --DELETE /sessions/:id--> absent'] },
          guard: ({ context, event }) => Boolean(context.sessions[event.id]),
          actions: sendTo(
            ({ context, event }) => context.sessions[event.id]!,
            ({ event }) => ({ type: 'session.delete' as const, keepBuffer: event.keepBuffer }),
          ),
        },
        'xstate.done.actor.*': {
          description: 'A session actor ended (deleted, gone, or its creation failed): forget it',
          meta: { row: 'tether' },
          actions: enqueueActions(({ context, event, enqueue }) => {
            const done = event as { type: string; actorId?: string };
            const actorId = done.actorId ?? done.type.slice('xstate.done.actor.'.length);
            const id = actorId.startsWith('session:') ? actorId.slice('session:'.length) : actorId;
            const sessions = (context as SidecarContext).sessions;
            if (!sessions[id]) return;
            const { [id]: _ended, ...rest } = sessions;
            enqueue.assign({ sessions: rest });
            enqueue.stopChild(actorId);
            enqueue({ type: 'releaseSession', params: { id } });
          }),
        },
        'sidecar.stop': { target: 'stopped', meta: { row: 'tether' } },
      },
    },
    stopped: {
      type: 'final',
      description: 'Shut down: every child actor is stopped; tmux sessions keep running',
    },
  },
});
