/**
 * The actor system: `sidecarMachine.provide(...)` with the real I/O, and the narrow
 * operations the transport and the CLI use (create, delete, status). It is the only place
 * that knows both the machines and their implementations.
 *
 * Invariant: callers never reach into a machine's context; they get plain data back.
 */
import { createActor, waitFor, type Actor, type InspectionEvent } from 'xstate';
import { DomainError } from '../errors.js';
import type { Logger } from '../log.js';
import { sessionMachine, type SessionOrigin, type SessionWorktree } from '../machines/session.machine.js';
import { sidecarMachine, type SessionActorRef } from '../machines/sidecar.machine.js';
import type { TmuxCli } from '../tmux/exec.js';
import { readUserOption, sessionExists } from '../tmux/sessions.js';
import { optionStoreOf } from '../tmux/session-options.js';
import { isPaneStillRunning } from '../tmux/session-create.js';
import type { TmuxTarget } from '../tmux/target.js';
import { discoveryLogic } from './discovery.actor.js';
import { paneExited, SidecarNews, type SessionFinal } from './sidecar-news.js';
import { LivePanes, type CreatedPane, type LivePane, type StreamSource } from '../stream/live-pane.js';
import type { SessionHandle, SessionStatus, SidecarStatus } from './system-status.js';
export type { SessionStatus } from './system-status.js';
import { createSessionImplementations, type AgentLaunch } from './session.actor.js';
import type { SessionAttention } from './attention.js';
import { compareSessionNames } from '../protocol/session-name.js';

export interface SidecarSystemDeps {
  readonly cli: TmuxCli;
  readonly target: TmuxTarget;
  readonly ringBytes: number;
  /** Keep a capture of each quiet pane for snapshots (default true; tests of the cold path turn it off). */
  readonly warmSnapshots?: boolean;
  readonly agent: (id: string, agent?: string) => AgentLaunch;
  readonly now: () => number;
  readonly log: Logger;
  readonly deleteBuffer?: (id: string) => Promise<void>;
  /** Brings a session back after its tmux server was lost (`[agent] restore`); absent: lost sessions end. */
  readonly restore?: (id: string) => Promise<{ paneId: string }>;
  /** The OSC numbers whose notices each pane hands to its `onNotice` listeners (the agents' adapters read them). */
  readonly notices?: ReadonlySet<number>;
  /** Called for each session's live pane created (the disk buffer subscribes to its stream); returns the undo. */
  readonly paneCreated?: (pane: CreatedPane) => () => void;
  /** XState inspection of the root and its session actors (the /ops view). */
  readonly inspect?: (ev: InspectionEvent) => void;
}

/** How long a create may take before the caller is told it failed (tmux under heavy load). */
export const CREATE_TIMEOUT_MS = 30_000;

/** Creation failed for a reason other than the name being taken: tmux's side (`tmux-unavailable`). */
const notCreated = (id: string, why: string): DomainError =>
  new DomainError('tmux-unavailable', `session ${id} could not be created: ${why}`);

/**
 * How long a request names a session tmux holds that discovery has not adopted yet may wait for
 * its actor (one scan of tmux, slow on a loaded machine).
 */
export const ADOPT_WAIT_MS = 10_000;

/** How long a respawn may take: tmux starting the agent, and the link seeing it. */
export const RESPAWN_TIMEOUT_MS = 15_000;

/** A respawn asked of a session whose agent runs (or is being started). */
const notExited = (id: string): DomainError =>
  new DomainError('session-running', `the agent of session ${id} is running: only an exited agent is respawned`);

/** The agent could not be started again: tmux's side (`tmux-unavailable`). */
const notRespawned = (id: string, why: string): DomainError =>
  new DomainError('tmux-unavailable', `the agent of session ${id} could not be respawned: ${why}`);

export class SidecarSystem {
  private readonly panes: LivePanes;
  readonly actor: Actor<typeof sidecarMachine>;
  private readonly rescanListeners = new Set<() => void>();
  private readonly news: SidecarNews;
  private readonly deps: SidecarSystemDeps;
  /** When each session's actor was last removed (a serial), so a scan begun before it does not bring it back. */
  private readonly removals = new Map<string, number>();
  private removalSerial = 0;
  /** Stops telling clients of descriptions set by hand in tmux (found by discovery's reads). */
  private readonly stopDescriptions: () => void;

  constructor(deps: SidecarSystemDeps) {
    this.deps = deps;
    this.news = new SidecarNews(deps.log);
    this.stopDescriptions = optionStoreOf(deps.cli).onDescriptionRead((id) => this.metaChanged(id));
    this.panes = new LivePanes({
      ringBytes: deps.ringBytes,
      now: deps.now,
      ...(deps.warmSnapshots !== undefined ? { warmSnapshots: deps.warmSnapshots } : {}),
      ...(deps.notices ? { notices: deps.notices } : {}),
      ...(deps.paneCreated ? { created: deps.paneCreated } : {}),
    });
    const session = sessionMachine.provide(
      createSessionImplementations({
        cli: deps.cli,
        target: deps.target,
        panes: this.panes,
        agent: deps.agent,
        now: deps.now,
        log: deps.log,
        sessionsChanged: () => this.requestRescan(),
        deleteBuffer: deps.deleteBuffer ?? (() => Promise.resolve()),
        ...(deps.restore ? { restore: deps.restore } : {}),
        attention: (id, attention) => this.news.attention(id, attention),
      }),
    );
    const machine = sidecarMachine.provide({
      actors: {
        session,
        tmuxDiscovery: discoveryLogic({
          cli: deps.cli,
          linkedCount: () => [...this.panes.values()].filter((pane) => pane.link.linked).length,
          runningIds: () =>
            Object.entries(this.actor.getSnapshot().context.sessions)
              .filter(([, ref]) => ref.getSnapshot().matches('running'))
              .map(([id]) => id),
          serverPidOf: (id) => this.panes.get(id)?.link.serverPid ?? null,
          removalMark: () => this.removalSerial,
          removedSince: (mark) => new Set([...this.removals].filter(([, at]) => at > mark).map(([id]) => id)),
          onRescanRequest: (listener) => {
            this.rescanListeners.add(listener);
            return () => this.rescanListeners.delete(listener);
          },
        }),
      },
      actions: {
        releaseSession: (_, params) => {
          this.panes.release(params.id);
          this.removals.set(params.id, ++this.removalSerial);
          // Its link may have been the last one: tmux may have exited with it, and the next
          // periodic scan is up to RESCAN_LINKED_MS away. Look now, once this transition is done.
          queueMicrotask(() => this.requestRescan());
        },
      },
    });
    this.actor = createActor(machine, deps.inspect ? { inspect: deps.inspect } : {});
    this.news.watch(this.actor);
  }

  /** Calls `listener` when a session's actor is gone (`deleted`) or its agent exited (`exited`); see SidecarNews. */
  onSessionEnded(listener: (id: string, why: 'deleted' | 'exited') => void): () => void {
    return this.news.onSessionEnded(listener);
  }

  /** Calls `listener` with the final state a session actor ended in; see SidecarNews. */
  onSessionFinal(listener: (id: string, final: SessionFinal) => void): () => void {
    return this.news.onSessionFinal(listener);
  }

  /** Calls `listener` once per occurrence of something a session's human should hear about; see SidecarNews. */
  onAttention(listener: (id: string, attention: SessionAttention) => void): () => void {
    return this.news.onAttention(listener);
  }

  /** A session's metadata (description, agent exited or running) changed: its clients get a new session-meta. */
  metaChanged(id: string): void {
    this.news.metaChanged(id);
  }

  onMetaChanged(listener: (id: string) => void): () => void {
    return this.news.onMetaChanged(listener);
  }

  start(): void {
    this.actor.start();
  }

  /** Resolves once the first scan of tmux is done (every existing session has an actor). */
  async booted(timeoutMs = 10_000): Promise<void> {
    await waitFor(this.actor, (s) => s.context.booted, { timeout: timeoutMs });
  }

  /** Asks discovery to look at tmux again now. */
  requestRescan(): void {
    for (const l of this.rescanListeners) l();
  }

  /** Resolves once every known session's link is up (or the timeout passes). */
  async linked(timeoutMs = 10_000): Promise<void> {
    const refs = Object.values(this.actor.getSnapshot().context.sessions);
    await Promise.all(
      refs.map((ref) =>
        waitFor(ref, (s) => s.matches({ running: { link: { attached: 'live' } } }) || s.status === 'done', {
          timeout: timeoutMs,
        }).catch(() => undefined),
      ),
    );
  }

  sessionIds(): string[] {
    return Object.keys(this.actor.getSnapshot().context.sessions).sort();
  }

  /** Whether the sidecar has an actor for this session (cheaper than `sessionIds().includes`). */
  hasSession(id: string): boolean {
    return Object.hasOwn(this.actor.getSnapshot().context.sessions, id);
  }

  /**
   * Whether the session is known, as the session list sees it: it has an actor, or tmux holds a
   * tether session of that name that discovery has not adopted yet (made by `tether attach` a
   * moment ago, while no control client could tell the daemon), which is then adopted first.
   * The list reads tmux itself, so a session it shows is never "not found" to its routes and its
   * stream for the time of a scan. An unknown name costs one tmux command.
   */
  async knows(id: string): Promise<boolean> {
    if (this.hasSession(id)) return true;
    const tether = await readUserOption(this.deps.cli, id, '@created').then(
      (created) => created !== null,
      () => false,
    );
    if (!tether) return false;
    this.requestRescan();
    await waitFor(this.actor, (s) => Object.hasOwn(s.context.sessions, id) || s.status !== 'active', {
      timeout: ADOPT_WAIT_MS,
    }).catch(() => undefined);
    return this.hasSession(id);
  }

  private ref(id: string): SessionActorRef | undefined {
    return this.actor.getSnapshot().context.sessions[id];
  }

  /**
   * Creates a tmux session running the agent and waits until its actor runs it. A name tmux
   * holds already (a session tether has no actor for) is refused by tmux's own `new-session`
   * (`duplicate session`, which stops the rest of its command list): no look of its own first,
   * a tmux process less on every create.
   */
  async createSession(
    id: string,
    origin: SessionOrigin,
    options: { project?: string; cwd?: string; agent?: string; worktree?: SessionWorktree } = {},
  ): Promise<void> {
    if (this.ref(id)) throw sessionExists(id);
    this.actor.send({
      type: 'session.create',
      id,
      origin,
      ...(options.project !== undefined ? { project: options.project } : {}),
      ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
      ...(options.agent !== undefined ? { agent: options.agent } : {}),
      ...(options.worktree !== undefined ? { worktree: options.worktree } : {}),
    });
    const ref = this.ref(id);
    if (!ref) throw notCreated(id, 'the sidecar is not accepting sessions');
    // Created: running, or already being deleted because a DELETE came in meanwhile.
    const done = await waitFor(ref, (s) => s.matches('running') || s.matches('deleting') || s.status === 'done', {
      timeout: CREATE_TIMEOUT_MS,
    }).catch(() => {
      throw notCreated(id, `tmux did not finish creating it within ${CREATE_TIMEOUT_MS / 1000} s`);
    });
    if (done.status === 'done' && !(done.context.deleteRequested !== null && done.context.lastError === null)) {
      const why = done.context.lastError ?? 'unknown error';
      if (/duplicate session|already exists/i.test(why)) throw sessionExists(id);
      throw notCreated(id, why);
    }
  }

  /**
   * Brings back a session whose record outlived its tmux server (found at start-up); resolves
   * once it runs again, or rejects with why it could not be restored.
   */
  async restoreSession(id: string): Promise<void> {
    if (this.ref(id)) return;
    this.actor.send({ type: 'session.restore', id });
    const ref = this.ref(id);
    if (!ref) throw notCreated(id, 'the sidecar is not accepting sessions');
    const done = await waitFor(ref, (s) => s.matches('running') || s.status === 'done', { timeout: CREATE_TIMEOUT_MS }).catch(() => {
      throw notCreated(id, `tmux did not finish restoring it within ${CREATE_TIMEOUT_MS / 1000} s`);
    });
    if (done.status === 'done' && done.value === 'unrestorable') throw notCreated(id, done.context.lastError ?? 'unknown error');
  }

  /** Kills a session (its buffer too unless kept); resolves once its actor is gone. */
  async deleteSession(id: string, keepBuffer: boolean): Promise<boolean> {
    const ref = this.ref(id);
    if (!ref) return false;
    this.actor.send({ type: 'session.delete', id, keepBuffer });
    await waitFor(this.actor, (s) => !s.context.sessions[id], { timeout: 15_000 });
    return true;
  }

  /** A known session's live pane; a session being restored at start-up has none yet, and gets it. */
  private paneOf(id: string): LivePane | null {
    const ref = this.ref(id);
    if (!ref) return null;
    // A session being restored has no link yet: its clients wait on its pane.
    return this.panes.get(id) ?? (ref.getSnapshot().matches('restoring') ? this.panes.ensure(id) : null);
  }

  /**
   * A known session: whether its agent has exited (or is being respawned), its exit status when
   * known, and its input; null for an unknown one.
   */
  session(id: string): SessionHandle | null {
    const pane = this.paneOf(id);
    if (!pane) return null;
    const snap = this.ref(id)!.getSnapshot();
    const activity = () => ({ position: pane.stream.position, lastOutputAt: pane.stream.lastOutputAt });
    return { input: pane.input, exited: paneExited(snap), exitStatus: snap.context.exitStatus, activity };
  }

  /** A known session's stream and its snapshots (the stream hub's view); null for an unknown one. */
  streamOf(id: string): StreamSource | null {
    return this.paneOf(id);
  }

  /** A server-wide tmux command over one of the sessions' control clients (LivePanes.query). */
  queryTmux(command: readonly string[]): Promise<Buffer> {
    return this.panes.query(command);
  }

  /** The visible screen of a session's agent pane, read over its control client; null when not linked. */
  captureVisible(id: string): Promise<Buffer> | null {
    return this.panes.captureVisible(id);
  }

  /** A known session's reserved stream position (its record keeps it); null without a live pane. */
  reservedSeq(id: string): number | null {
    return this.panes.get(id)?.reservedSeq ?? null;
  }

  /**
   * Starts the exited agent of a session again, in the same pane; resolves once tmux started it
   * and the link saw the pane again (running, or dead already: the new agent exited at once).
   * A session whose agent runs is refused (`session-running`); a respawn already under way
   * is joined. Returns false for an unknown session.
   */
  async respawnSession(id: string): Promise<boolean> {
    const ref = this.ref(id);
    if (!ref) return false;
    const before = ref.getSnapshot();
    if (!paneExited(before)) throw notExited(id);
    const errorBefore = before.context.lastError;
    ref.send({ type: 'pane.respawn' });
    const respawning = (s: typeof before) => s.matches({ running: { pane: 'respawning' } });
    const after = await waitFor(ref, (s) => s.status === 'done' || !respawning(s), { timeout: RESPAWN_TIMEOUT_MS }).catch(() => {
      throw notRespawned(id, `tmux did not report the agent's pane within ${RESPAWN_TIMEOUT_MS / 1000} s`);
    });
    if (after.status === 'done' || !after.matches('running')) return false;
    const error = after.context.lastError;
    if (after.matches({ running: { pane: 'exited' } }) && error !== null && error !== errorBefore) {
      if (isPaneStillRunning(error)) throw notExited(id);
      throw notRespawned(id, error);
    }
    return true;
  }

  status(): SidecarStatus {
    const snap = this.actor.getSnapshot();
    const sessions = Object.entries(snap.context.sessions)
      .map(([id, ref]): SessionStatus => {
        const s = ref.getSnapshot();
        const pane = this.panes.get(id);
        return {
          id,
          state: paneExited(s) ? 'exited' : s.matches('running') ? 'running' : s.matches('restoring') ? 'restoring' : 'starting',
          linked: pane?.link.linked ?? false,
          paneId: s.context.paneId,
          exitStatus: s.context.exitStatus,
          lastError: s.context.lastError,
          lastOutputAt: pane?.stream.lastOutputAt ?? null,
          snapshots: { ...(pane?.snapshotCounts ?? { cold: 0, warmCaptures: 0, warmServed: 0 }) },
          warmBytes: pane?.warmBytes ?? 0,
        };
      })
      .sort((a, b) => compareSessionNames(a.id, b.id));
    return { booted: snap.context.booted, tmuxProblem: snap.context.tmuxProblem, sessions };
  }

  /** Stops every actor; tmux sessions keep running (control clients just detach). */
  async stop(): Promise<void> {
    this.stopDescriptions();
    if (this.actor.getSnapshot().status !== 'active') return;
    this.actor.send({ type: 'sidecar.stop' });
    this.actor.stop();
    // Give the control clients' stdin closes a moment to reach tmux.
    await new Promise((r) => setTimeout(r, 50));
  }
}
