/**
 * The actor system: `sidecarMachine.provide(...)` with the real I/O, and the narrow
 * operations the transport and the CLI use (create, delete, status). It is the only place
 * that knows both the machines and their implementations; the requests about one session and
 * their waits are in session-requests.ts.
 *
 * Invariant: callers never reach into a machine's context; they get plain data back.
 */
import { createActor, waitFor, type Actor, type InspectionEvent } from 'xstate';
import type { Logger } from '../log.js';
import { sessionMachine, type SessionOrigin } from '../machines/session.machine.js';
import { sidecarMachine, type SessionActorRef } from '../machines/sidecar.machine.js';
import type { TmuxCli } from '../tmux/exec.js';
import { SESSION_OPTIONS } from '../tmux/layout.js';
import { readUserOption } from '../tmux/sessions/sessions.js';
import { optionStoreOf } from '../tmux/sessions/session-options.js';
import type { TmuxTarget } from '../tmux/target.js';
import { discoveryLogic } from './discovery.actor.js';
import { paneExited, SidecarNews, type SessionFinal } from './sidecar-news.js';
import { LivePanes, type CreatedPane, type LivePane, type StreamSource } from '../stream/live-pane.js';
import type { SessionHandle, SessionStatus, SidecarStatus } from './system-status.js';
export type { SessionStatus } from './system-status.js';
import { createSessionImplementations, type AgentLaunch } from './session.actor.js';
import type { SessionAttention } from './attention.js';
import { compareSessionNames } from '../protocol/session-name.js';
import { requestCreate, requestDelete, requestRespawn, requestRestore, type CreateOptions } from './session-requests.js';

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
  /** XState inspection of the root and its session actors (the /ops view). */
  readonly inspect?: (ev: InspectionEvent) => void;
}

/**
 * How long a request names a session tmux holds that discovery has not adopted yet may wait for
 * its actor (one scan of tmux, slow on a loaded machine).
 */
export const ADOPT_WAIT_MS = 10_000;

export class SidecarSystem {
  private readonly panes: LivePanes;
  readonly actor: Actor<typeof sidecarMachine>;
  private readonly rescanListeners = new Set<() => void>();
  private readonly paneListeners = new Set<(pane: CreatedPane) => () => void>();
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
      created: (pane) => {
        const undos = [...this.paneListeners].map((listener) => listener(pane));
        return () => undos.forEach((undo) => undo());
      },
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
          query: (command) => this.panes.query(command),
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

  /**
   * Calls `listener` for each session's live pane created (its disk buffer subscribes to its
   * stream, its record and agent follow its link); the function it returns is called when the pane
   * goes. Listen before `start()`: a pane made earlier is not told again.
   */
  onPaneCreated(listener: (pane: CreatedPane) => () => void): () => void {
    this.paneListeners.add(listener);
    return () => this.paneListeners.delete(listener);
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
    const tether = await readUserOption(this.deps.cli, id, SESSION_OPTIONS.created).then(
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

  /** Creates a tmux session running the agent and waits until its actor runs it (see requestCreate). */
  createSession(id: string, origin: SessionOrigin, options: CreateOptions = {}): Promise<void> {
    return requestCreate(this.actor, id, origin, options);
  }

  /** Brings back a session whose record outlived its tmux server (see requestRestore). */
  restoreSession(id: string): Promise<void> {
    return requestRestore(this.actor, id);
  }

  /** Kills a session (its buffer too unless kept); resolves once its actor is gone. */
  deleteSession(id: string, keepBuffer: boolean): Promise<boolean> {
    return requestDelete(this.actor, id, keepBuffer);
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
    return {
      input: pane.input,
      exited: paneExited(snap),
      exitStatus: snap.context.exitStatus,
      activity,
      bracketedPaste: () => pane.tracker.bracketedPaste,
      setOption: (option, value, linkWaitMs) => pane.link.setOption(option, value, linkWaitMs),
    };
  }

  /** A known session's stream and its snapshots (the stream hub's view); null for an unknown one. */
  streamOf(id: string): StreamSource | null {
    return this.paneOf(id);
  }

  /** A server-wide tmux command over one of the sessions' control clients (LivePanes.query). */
  queryTmux(command: readonly string[]): Promise<Buffer> {
    return this.panes.query(command);
  }

  /** The session whose linked control client mirrors tmux pane `paneId`, and its server's pid (LivePanes.sessionOfPane); null when none does. */
  sessionOfPane(paneId: string): { readonly session: string; readonly serverPid: number | null } | null {
    return this.panes.sessionOfPane(paneId);
  }

  /** The visible screen of a session's agent pane, read over its control client; null when not linked. */
  captureVisible(id: string): Promise<Buffer> | null {
    return this.panes.captureVisible(id);
  }

  /** A known session's reserved stream position (its record keeps it); null without a live pane. */
  reservedSeq(id: string): number | null {
    return this.panes.get(id)?.reservedSeq ?? null;
  }

  /** Starts the exited agent of a session again, in the same pane (see requestRespawn); false for an unknown session. */
  respawnSession(id: string): Promise<boolean> {
    return requestRespawn(this.actor, id);
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
          warmPosition: pane?.warmPosition ?? null,
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
