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
import { sessionMachine, type SessionOrigin } from '../machines/session.machine.js';
import { sidecarMachine, type SessionActorRef } from '../machines/sidecar.machine.js';
import type { TmuxCli } from '../tmux/exec.js';
import { hasSession, isPaneStillRunning, sessionExists } from '../tmux/sessions.js';
import type { TmuxTarget } from '../tmux/target.js';
import { discoveryLogic } from './discovery.actor.js';
import { SessionRuntimes, type SessionRuntime, type SnapshotCounts } from '../stream/session-runtime.js';
import { createSessionImplementations, type AgentLaunch } from './session.actor.js';
import type { SessionAttention } from './attention.js';

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
  /** Called for each session runtime created (the disk buffer subscribes to its stream); returns the undo. */
  readonly runtimeCreated?: (rt: SessionRuntime) => () => void;
  /** XState inspection of the root and its session actors (the /ops view). */
  readonly inspect?: (ev: InspectionEvent) => void;
}

/** One session as the outside world sees it. */
export interface SessionStatus {
  readonly id: string;
  /** `running`, `exited` once the agent pane died (until its agent runs again), `restoring` while it is brought back after its tmux server was lost. */
  readonly state: 'running' | 'exited' | 'starting' | 'restoring';
  readonly linked: boolean;
  readonly paneId: string | null;
  readonly exitStatus: number | null;
  readonly lastError: string | null;
  readonly lastOutputAt: number | null;
  /** How this session's snapshots were made since its actor started. */
  readonly snapshots: SnapshotCounts;
  /** Bytes its warm capture holds. */
  readonly warmBytes: number;
}

export interface SidecarStatus {
  readonly booted: boolean;
  readonly tmuxProblem: string | null;
  readonly sessions: readonly SessionStatus[];
}

/** The final states of a session actor. */
export type SessionFinal = 'ended' | 'unrestorable' | 'failed';

/** How long a create may take before the caller is told it failed (tmux under heavy load). */
export const CREATE_TIMEOUT_MS = 30_000;

/** Creation failed for a reason other than the name being taken: tmux's side (`tmux-unavailable`). */
const notCreated = (id: string, why: string): DomainError =>
  new DomainError('tmux-unavailable', `session ${id} could not be created: ${why}`);

/** How long a respawn may take: tmux starting the agent, and the link seeing it. */
export const RESPAWN_TIMEOUT_MS = 15_000;

/** A respawn asked of a session whose agent runs (or is being started). */
const notExited = (id: string): DomainError =>
  new DomainError('session-running', `the agent of session ${id} is running: only an exited agent is respawned`);

/** The agent could not be started again: tmux's side (`tmux-unavailable`). */
const notRespawned = (id: string, why: string): DomainError =>
  new DomainError('tmux-unavailable', `the agent of session ${id} could not be respawned: ${why}`);

/** Whether a session snapshot's agent pane is not running an agent: exited, or being respawned. */
function paneExited(s: { matches(value: unknown): boolean }): boolean {
  return s.matches({ running: { pane: 'exited' } }) || s.matches({ running: { pane: 'respawning' } });
}

export class SidecarSystem {
  private readonly runtimes: SessionRuntimes;
  readonly actor: Actor<typeof sidecarMachine>;
  private readonly rescanListeners = new Set<() => void>();
  private readonly metaListeners = new Set<(id: string) => void>();
  private readonly endedListeners = new Set<(id: string, why: 'deleted' | 'exited') => void>();
  private readonly finalListeners = new Set<(id: string, final: SessionFinal) => void>();
  private readonly attentionListeners = new Set<(id: string, attention: SessionAttention) => void>();
  private readonly deps: SidecarSystemDeps;
  /** When each session's actor was last removed (a serial), so a scan begun before it does not bring it back. */
  private readonly removals = new Map<string, number>();
  private removalSerial = 0;

  constructor(deps: SidecarSystemDeps) {
    this.deps = deps;
    this.runtimes = new SessionRuntimes({
      ringBytes: deps.ringBytes,
      now: deps.now,
      ...(deps.warmSnapshots !== undefined ? { warmSnapshots: deps.warmSnapshots } : {}),
      ...(deps.runtimeCreated ? { created: deps.runtimeCreated } : {}),
    });
    const session = sessionMachine.provide(
      createSessionImplementations({
        cli: deps.cli,
        target: deps.target,
        runtimes: this.runtimes,
        agent: deps.agent,
        now: deps.now,
        log: deps.log,
        sessionsChanged: () => this.requestRescan(),
        deleteBuffer: deps.deleteBuffer ?? (() => Promise.resolve()),
        ...(deps.restore ? { restore: deps.restore } : {}),
        attention: (id, attention) => {
          for (const l of [...this.attentionListeners]) l(id, attention);
        },
      }),
    );
    const machine = sidecarMachine.provide({
      actors: {
        session,
        tmuxDiscovery: discoveryLogic({
          cli: deps.cli,
          linkedCount: () => [...this.runtimes.values()].filter((rt) => rt.linked).length,
          runningIds: () =>
            Object.entries(this.actor.getSnapshot().context.sessions)
              .filter(([, ref]) => ref.getSnapshot().matches('running'))
              .map(([id]) => id),
          serverPidOf: (id) => this.runtimes.get(id)?.serverPid ?? null,
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
          this.runtimes.release(params.id);
          this.removals.set(params.id, ++this.removalSerial);
        },
      },
    });
    this.actor = createActor(machine, deps.inspect ? { inspect: deps.inspect } : {});
    this.watchSessionEnds();
  }

  /**
   * Calls `listener` when a session's actor is gone (deleted, killed from a shell: `deleted`) or
   * its agent exited (`exited`; the session stays, and its agent may be respawned). Returns the
   * unsubscribe.
   */
  onSessionEnded(listener: (id: string, why: 'deleted' | 'exited') => void): () => void {
    this.endedListeners.add(listener);
    return () => this.endedListeners.delete(listener);
  }

  /**
   * Calls `listener` with the final state a session actor ended in: `ended` (deleted, killed on
   * purpose, or lost with restoring off), `unrestorable`, or `failed` (its creation failed).
   */
  onSessionFinal(listener: (id: string, final: SessionFinal) => void): () => void {
    this.finalListeners.add(listener);
    return () => this.finalListeners.delete(listener);
  }

  /**
   * Calls `listener` once per occurrence of something a session's human should hear about: its
   * agent exited (with the status or signal), or it could not be restored (with the reason).
   */
  onAttention(listener: (id: string, attention: SessionAttention) => void): () => void {
    this.attentionListeners.add(listener);
    return () => this.attentionListeners.delete(listener);
  }

  /** A session's metadata (description, agent exited or running) changed: its clients get a new session-meta. */
  metaChanged(id: string): void {
    for (const l of [...this.metaListeners]) l(id);
  }

  onMetaChanged(listener: (id: string) => void): () => void {
    this.metaListeners.add(listener);
    return () => this.metaListeners.delete(listener);
  }

  private watchSessionEnds(): void {
    const watched = new Map<string, { unsubscribe(): void }>();
    const finals = new Map<string, SessionFinal>();
    const emit = (id: string, why: 'deleted' | 'exited') => {
      for (const l of [...this.endedListeners]) l(id, why);
    };
    this.actor.subscribe({
      next: (snap) => {
        const refs = snap.context.sessions;
        for (const [id, sub] of watched) {
          if (refs[id]) continue;
          sub.unsubscribe();
          watched.delete(id);
          const final = finals.get(id);
          finals.delete(id);
          this.deps.log.debug({ session: id, final: final ?? 'stopped by the sidecar' }, 'session actor ended');
          emit(id, 'deleted');
          if (final) for (const l of [...this.finalListeners]) l(id, final);
        }
        for (const [id, ref] of Object.entries(refs)) {
          if (watched.has(id)) continue;
          const paneOf = (s: ReturnType<typeof ref.getSnapshot>) =>
            paneExited(s) ? `exited:${String(s.context.exitStatus)}` : s.matches('running') ? 'running' : '';
          let exited = ref.getSnapshot().matches({ running: { pane: 'exited' } });
          let pane = paneOf(ref.getSnapshot());
          watched.set(
            id,
            ref.subscribe((s) => {
              if (s.status === 'done') finals.set(id, s.value as SessionFinal);
              const now = s.matches({ running: { pane: 'exited' } });
              if (now && !exited) emit(id, 'exited');
              exited = now;
              // The agent exited, its status became known, or it runs again: session-meta says so.
              const paneNow = paneOf(s);
              if (paneNow !== pane && paneNow !== '' && pane !== '') this.metaChanged(id);
              pane = paneNow;
            }),
          );
        }
      },
      error: () => undefined,
    });
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

  private ref(id: string): SessionActorRef | undefined {
    return this.actor.getSnapshot().context.sessions[id];
  }

  /** Creates a tmux session running the agent and waits until its actor runs it. */
  async createSession(id: string, origin: SessionOrigin, options: { project?: string; cwd?: string; agent?: string } = {}): Promise<void> {
    if (this.ref(id) || (await this.tmuxHasSession(id))) throw sessionExists(id);
    this.actor.send({
      type: 'session.create',
      id,
      origin,
      ...(options.project !== undefined ? { project: options.project } : {}),
      ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
      ...(options.agent !== undefined ? { agent: options.agent } : {}),
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

  /**
   * A known session's stream runtime, whether its agent has exited (or is being respawned) and
   * its exit status when known; null for an unknown one.
   */
  session(id: string): { readonly runtime: SessionRuntime; readonly exited: boolean; readonly exitStatus: number | null } | null {
    const ref = this.ref(id);
    if (!ref) return null;
    const snap = ref.getSnapshot();
    // A session being restored at start-up has no link yet: its clients wait on its runtime.
    const runtime = this.runtimes.get(id) ?? (snap.matches('restoring') ? this.runtimes.ensure(id) : undefined);
    if (!runtime) return null;
    return { runtime, exited: paneExited(snap), exitStatus: snap.context.exitStatus };
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
        const rt = this.runtimes.get(id);
        return {
          id,
          state: paneExited(s) ? 'exited' : s.matches('running') ? 'running' : s.matches('restoring') ? 'restoring' : 'starting',
          linked: rt?.linked ?? false,
          paneId: s.context.paneId,
          exitStatus: s.context.exitStatus,
          lastError: s.context.lastError,
          lastOutputAt: rt?.stream.lastOutputAt ?? null,
          snapshots: { ...(rt?.snapshotCounts ?? { cold: 0, warmCaptures: 0, warmServed: 0 }) },
          warmBytes: rt?.warmBytes ?? 0,
        };
      })
      .sort((a, b) => a.id.localeCompare(b.id));
    return { booted: snap.context.booted, tmuxProblem: snap.context.tmuxProblem, sessions };
  }

  /** Stops every actor; tmux sessions keep running (control clients just detach). */
  async stop(): Promise<void> {
    if (this.actor.getSnapshot().status !== 'active') return;
    this.actor.send({ type: 'sidecar.stop' });
    this.actor.stop();
    // Give the control clients' stdin closes a moment to reach tmux.
    await new Promise((r) => setTimeout(r, 50));
  }

  /** Whether tmux has a session of that name (no server running means no). */
  private tmuxHasSession(id: string): Promise<boolean> {
    return hasSession(this.deps.cli, id);
  }
}
