/**
 * The clients of every session's stream and side channel: it opens a client on a session,
 * sends what a new client gets first (`session-meta`, then the current `state`), fans agent
 * state and metadata changes out, and ends every client of a session that is deleted.
 *
 * Invariants: a client exists only for a session the actor system knows; when the session is
 * deleted (or killed from a shell), each of its clients gets `error session-ended` and close
 * 4404, exactly once. A session whose agent exited keeps its clients and takes new ones: its
 * dead pane streams like any other (a snapshot of its last screen), `session-meta` says it
 * exited, and a respawned agent's output follows. /side clients never get binary frames.
 */
import { CLOSE_CODES, DomainError } from '../errors.js';
import type { Logger } from '../log.js';
import { sessionActorId } from '../machines/sidecar.machine.js';
import type { AgentStateFact, ServerFrame } from '../protocol/frames.js';
import { ChunkFrames } from './chunk-frames.js';
import type { Watermarks } from './queue-lag.js';
import { StreamClient, type ClientLink } from './stream-client.actor.js';
import type { OpsInspector } from '../ops/inspector.js';
import type { StreamSource } from './live-pane.js';

/** Where agent states come from (the agent hub); optional until an agent reports. */
export interface AgentStateSource {
  current(sessionId: string): AgentStateFact | null;
  subscribe(sessionId: string, listener: (state: AgentStateFact) => void): () => void;
}

export interface SessionMeta {
  readonly name: string;
  readonly description?: string;
  readonly createdAt: string;
  /** `running`, or `exited` once the agent exited (until it is respawned). */
  readonly state: 'running' | 'exited';
  /** The exited agent's exit status, once tmux knows it. */
  readonly exitStatus?: number;
}

export type ClientKind = 'stream' | 'side';

/**
 * How long after a client connects its session's metadata is read from tmux again, to catch a
 * change made behind tether's back (a description set from a shell). The read costs two tmux
 * processes, and spawning them from the daemon stalls it for milliseconds on a small machine
 * (measured: the first frame of a reconnect 7.4 ms later at the median, the 10000-line snapshot
 * 7 ms later), so it waits until the wake-up's frames are out, and the clients that connect
 * meanwhile share one read.
 */
export const META_REFRESH_DELAY_MS = 1000;
/** At most one such read per session in this long, however often clients connect. */
export const META_REFRESH_MIN_INTERVAL_MS = 10_000;

/** What the transport holds for one open socket. */
export interface OpenClient {
  readonly kind: ClientKind;
  /** Its stream client's id in the /ops actor tree (`session:pi-main/client#3`); null for a side channel or without /ops. */
  readonly actor: string | null;
  /** Its stream client's state (`live`, `behind`, ...); null for a side channel. */
  state(): string | null;
  /** `resume` (stream only). */
  resume(lastSeq: number | null): void;
  /** `snapshot-request` (stream only). */
  requestSnapshot(): void;
  /** The socket closed, from either side. */
  closed(): void;
}

/** What the hub needs of the sessions (the actor system provides it). */
export interface HubSessions {
  /** A known session's stream and its snapshots; null for an unknown one, or one without a stream yet (being created). */
  streamOf(id: string): StreamSource | null;
  /** Whether the session is known at all (it may have no stream yet). */
  hasSession(id: string): boolean;
  /** The same, and a tether session tmux holds but discovery has not adopted yet is adopted first. */
  knows(id: string): Promise<boolean>;
  /** Calls `listener` when a session is gone (`deleted`) or its agent exited (`exited`: it stays, clients keep it). */
  onSessionEnded(listener: (id: string, why: 'deleted' | 'exited') => void): () => void;
  /** Calls `listener` when a session's metadata changed (description, agent exited or running). */
  onMetaChanged(listener: (id: string) => void): () => void;
}

export interface StreamHubDeps {
  readonly sessions: HubSessions;
  readonly meta: (sessionId: string) => Promise<SessionMeta>;
  readonly agentStates?: AgentStateSource;
  readonly watermarks?: Watermarks;
  readonly log: Logger;
  /** The /ops view: each stream client's machine is inspected, under its session's actor. */
  readonly ops?: OpsInspector;
}

interface Member {
  readonly kind: ClientKind;
  send(frame: ServerFrame): void;
  end(): void;
}

export class StreamHub {
  private readonly members = new Map<string, Set<Member>>();
  private readonly frames = new Map<string, ChunkFrames>();
  /**
   * Each session's last metadata: a reconnecting client gets it at once (reading it from tmux
   * costs two tmux processes, 5-20 ms, on the path of every wake), and it is read again behind
   * the client's back; a difference goes out as a new `session-meta`.
   */
  private readonly metas = new Map<string, SessionMeta>();
  private readonly stopEnded: () => void;
  /** Numbers the stream clients for the /ops view. */
  private clientSerial = 0;
  /** The metadata reads scheduled after a connect, by session. */
  private readonly refreshes = new Map<string, NodeJS.Timeout>();
  /** When each session's metadata was last read again after a connect (performance.now()). */
  private readonly refreshedAt = new Map<string, number>();

  constructor(private readonly deps: StreamHubDeps) {
    const stopEnded = deps.sessions.onSessionEnded((id, why) => {
      if (why === 'deleted') this.sessionEnded(id);
    });
    const stopMeta = deps.sessions.onMetaChanged((id) => void this.metaChanged(id));
    this.stopEnded = () => {
      stopEnded();
      stopMeta();
    };
  }

  /** Live clients of one session, or of all. */
  count(sessionId?: string): number {
    if (sessionId !== undefined) return this.members.get(sessionId)?.size ?? 0;
    let n = 0;
    for (const set of this.members.values()) n += set.size;
    return n;
  }

  /**
   * Opens a client on a session: `session-not-found` for an unknown one, `stream-unavailable` for
   * one not ready for clients yet (being created); one deleted while its meta was read gets the
   * meta, then `session-ended` and close 4404.
   */
  /** Whether a session of that id exists (a stream to it opens now or in a moment). */
  has(sessionId: string): Promise<boolean> {
    return this.deps.sessions.knows(sessionId);
  }

  async open(sessionId: string, kind: ClientKind, link: ClientLink): Promise<OpenClient> {
    const source = this.deps.sessions.streamOf(sessionId);
    if (!source) {
      // Known but with no stream yet (tmux is still creating it): there in a moment, not gone.
      if (this.deps.sessions.hasSession(sessionId))
        throw new DomainError('stream-unavailable', `session ${sessionId} is not ready for clients yet; try again`);
      throw new DomainError('session-not-found', `no session named "${sessionId}"`);
    }
    const cached = this.metas.get(sessionId);
    const meta = cached ?? (await this.readMeta(sessionId)) ?? { name: sessionId, createdAt: '', state: 'running' };
    if (cached) this.refreshMetaSoon(sessionId); // read again; clients hear of a change
    const sendText = (frame: ServerFrame) => link.sendText(JSON.stringify(frame));
    sendText({ type: 'session-meta', ...meta });
    if (!this.deps.sessions.streamOf(sessionId)) {
      sendText({ type: 'error', code: 'session-ended', message: `session ${sessionId} has ended` });
      link.close(CLOSE_CODES.sessionEnded, 'session ended');
      return { kind, actor: null, state: () => null, resume: () => undefined, requestSnapshot: () => undefined, closed: () => undefined };
    }
    const state = this.deps.agentStates?.current(sessionId);
    if (state) sendText({ type: 'state', ...state });

    let set = this.members.get(sessionId);
    if (!set) this.members.set(sessionId, (set = new Set()));
    const members = set;
    let stopState: () => void = () => undefined;
    let member: Member;
    const leave = () => {
      stopState();
      members.delete(member);
      if (members.size === 0 && this.members.get(sessionId) === members) this.members.delete(sessionId);
    };

    if (kind === 'side') {
      let open = true;
      member = {
        kind,
        send: (frame) => open && sendText(frame),
        end: () => {
          if (!open) return;
          sendText({ type: 'error', code: 'session-ended', message: `session ${sessionId} has ended` });
          open = false;
          link.close(CLOSE_CODES.sessionEnded, 'session ended');
          leave();
        },
      };
      members.add(member);
      stopState = this.deps.agentStates?.subscribe(sessionId, (s) => member.send({ type: 'state', ...s })) ?? stopState;
      return {
        kind,
        actor: null,
        state: () => null,
        resume: () => undefined,
        requestSnapshot: () => undefined,
        closed: () => {
          open = false;
          leave();
        },
      };
    }

    let frames = this.frames.get(sessionId);
    if (!frames) this.frames.set(sessionId, (frames = new ChunkFrames()));
    const inspect = this.deps.ops ? this.inspectClient(this.deps.ops, sessionId) : null;
    const client = new StreamClient({
      sessionId,
      stream: source.stream,
      frames,
      link,
      snapshot: () => source.snapshot(),
      ...(this.deps.watermarks ? { watermarks: this.deps.watermarks } : {}),
      onReleased: leave,
      onSnapshotFailed: (err) => this.deps.log.warn({ session: sessionId, err: String(err) }, 'a snapshot for a client failed'),
      onState: (state) => this.deps.log.debug({ session: sessionId, state }, 'stream client'),
      ...(inspect ? { inspect } : {}),
    });
    member = { kind, send: (frame) => client.sendFrame(frame), end: () => client.sessionEnded() };
    members.add(member);
    stopState = this.deps.agentStates?.subscribe(sessionId, (s) => member.send({ type: 'state', ...s })) ?? stopState;
    return {
      kind,
      actor: inspect ? `${sessionActorId(sessionId)}/${inspect.id}` : null,
      state: () => client.stateName,
      resume: (lastSeq) => client.resume(lastSeq),
      requestSnapshot: () => client.requestSnapshot(),
      closed: () => client.closed(),
    };
  }

  private inspectClient(ops: OpsInspector, sessionId: string): { id: string; inspect: ReturnType<OpsInspector['observer']> } {
    const id = `client#${++this.clientSerial}`;
    return { id, inspect: ops.observer({ label: id, parent: sessionActorId(sessionId) }) };
  }

  /**
   * Reads the session's metadata again once the connect is done: one read for the connects of a
   * moment, and at most one per session per META_REFRESH_MIN_INTERVAL_MS.
   */
  private refreshMetaSoon(sessionId: string): void {
    if (this.refreshes.has(sessionId)) return;
    const now = performance.now();
    const last = this.refreshedAt.get(sessionId);
    const delay = Math.max(META_REFRESH_DELAY_MS, last === undefined ? 0 : last + META_REFRESH_MIN_INTERVAL_MS - now);
    const timer = setTimeout(() => {
      this.refreshes.delete(sessionId);
      this.refreshedAt.set(sessionId, performance.now());
      void this.metaChanged(sessionId);
    }, delay);
    timer.unref();
    this.refreshes.set(sessionId, timer);
  }

  private cancelRefresh(sessionId: string): void {
    const timer = this.refreshes.get(sessionId);
    if (timer) clearTimeout(timer);
    this.refreshes.delete(sessionId);
    this.refreshedAt.delete(sessionId);
  }

  /** Reads a session's metadata from tmux and keeps it; null when tmux could not say. */
  private async readMeta(sessionId: string): Promise<SessionMeta | null> {
    const meta = await this.deps.meta(sessionId).catch(() => null);
    if (meta && this.deps.sessions.streamOf(sessionId)) this.metas.set(sessionId, meta);
    return meta;
  }

  /** The session's metadata may have changed: read it; its clients get a new `session-meta` when it did. */
  async metaChanged(sessionId: string): Promise<void> {
    const before = this.metas.get(sessionId);
    const meta = await this.readMeta(sessionId);
    if (!meta || (before && JSON.stringify(before) === JSON.stringify(meta))) return;
    const set = this.members.get(sessionId);
    if (!set || set.size === 0) return;
    for (const m of [...set]) m.send({ type: 'session-meta', ...meta });
  }

  /** Sends `frame` to every client of a session, stream and side channel alike (a prompt that changed). */
  tell(sessionId: string, frame: ServerFrame): void {
    const set = this.members.get(sessionId);
    if (!set) return;
    for (const m of [...set]) m.send(frame);
  }

  /** Ends every client of a session (deleted). */
  sessionEnded(sessionId: string): void {
    const set = this.members.get(sessionId);
    this.frames.delete(sessionId);
    this.metas.delete(sessionId);
    this.cancelRefresh(sessionId);
    if (!set) return;
    for (const m of [...set]) m.end();
  }

  stop(): void {
    this.stopEnded();
    for (const id of [...this.refreshes.keys()]) this.cancelRefresh(id);
  }
}
