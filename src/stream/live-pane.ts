/**
 * One session's live pane: its pane link (src/tmux/pane/pane-link.ts), the stream the link feeds
 * (positions, ring, the pen and bracketed paste followed from the bytes), the stream's
 * reservation in tmux and its warm snapshots, wired together; and the live panes of all sessions.
 *
 * Invariant: the link feeds this object directly (it is the link's `PaneSink`): a byte goes from
 * the control client to the stream without passing through any actor.
 */
import { DomainError } from '../errors.js';
import { PaneLink } from '../tmux/pane/pane-link.js';
import { buildControlCommand } from '../tmux/quote.js';
import type { PaneSink } from '../tmux/pane/pane-connect.js';
import type { PaneSnapshot, SnapshotMark } from '../tmux/screen/snapshot.js';
import { TermStateTracker } from '../tmux/screen/term-state.js';

/** A notice the pane's program wrote to its terminal (an OSC string of a number listened for). */
export interface PaneNotice {
  readonly code: number;
  readonly text: string;
}
import { PaneStream } from './pane-stream.js';
import { StreamReservation } from './stream-reservation.js';
import { WarmSnapshots, type SnapshotCounts } from './warm-snapshots.js';

/** What a live pane tells its watchers (the session records): its link came up, positions were reserved. */
export type PaneChange = 'linked' | 'reserved';

export interface LivePaneOptions {
  readonly ringBytes: number;
  readonly now: () => number;
  /** Keep a capture of the quiet pane for snapshots (default true). */
  readonly warmSnapshots?: boolean;
  /** The OSC numbers whose strings the pane's `onNotice` listeners hear (the agents' notices); none by default. */
  readonly notices?: ReadonlySet<number>;
}

/** What the daemon wires to each new session's stream: the disk buffer, the session record. */
export type CreatedPane = Pick<LivePane, 'id' | 'stream' | 'reservedSeq' | 'onChange' | 'onNotice'>;

/** Input to a session's agent pane, in order with all input before (`PaneLink.runWhenLinked`). */
export type PaneInput = Readonly<Pick<PaneLink, 'paneId' | 'runWhenLinked'>>;

/** What a client of a session's stream uses: the stream and exact snapshots of it. */
export type StreamSource = Pick<LivePane, 'stream' | 'snapshot'>;

export class LivePane implements PaneSink {
  readonly link: PaneLink;
  readonly stream: PaneStream;
  /** Input to the agent pane: the link's, and the stream then sends the pane's next output at once (its echo). */
  readonly input: PaneInput;
  /** Pen and bracketed paste, followed from the bytes (tmux 3.3a does not report them), and the program's notices. */
  readonly tracker: TermStateTracker;
  private readonly noticeListeners = new Set<(notice: PaneNotice) => void>();
  private readonly reservation: StreamReservation;
  private readonly warm: WarmSnapshots;
  private links = 0;
  private readonly changeListeners = new Set<(what: PaneChange) => void>();

  constructor(
    readonly id: string,
    opts: LivePaneOptions,
  ) {
    this.tracker = new TermStateTracker(opts.notices, (code, text) => {
      for (const l of [...this.noticeListeners]) l({ code, text });
    });
    this.link = new PaneLink(id);
    this.stream = new PaneStream({ ringBytes: opts.ringBytes, now: opts.now });
    const { link, stream } = this;
    this.input = {
      get paneId() {
        return link.paneId;
      },
      runWhenLinked: (make, linkWaitMs) => {
        const written = link.runWhenLinked(make, linkWaitMs);
        stream.expectEcho();
        return written;
      },
    };
    this.reservation = new StreamReservation(this.stream, () => this.changed('reserved'));
    this.warm = new WarmSnapshots(this.stream, this.link, opts.now, opts.warmSnapshots ?? true);
  }

  /** The highest stream position reserved so far (0 before the first reservation). */
  get reservedSeq(): number {
    return this.reservation.reservedSeq;
  }

  /** How this session's snapshots were made. */
  get snapshotCounts(): SnapshotCounts {
    return this.warm.counts;
  }

  /** The stream position the warm capture covers, null when there is none. */
  get warmPosition(): number | null {
    return this.warm.position;
  }

  /** Bytes the warm capture holds. */
  get warmBytes(): number {
    return this.warm.bytes;
  }

  /** Calls `listener` when the link comes up and when more positions were reserved; returns the undo. */
  onChange(listener: (what: PaneChange) => void): () => void {
    this.changeListeners.add(listener);
    return () => this.changeListeners.delete(listener);
  }

  /** Calls `listener` with each notice the pane's program writes to its terminal, in stream order; returns the undo. */
  onNotice(listener: (notice: PaneNotice) => void): () => void {
    this.noticeListeners.add(listener);
    return () => this.noticeListeners.delete(listener);
  }

  private changed(what: PaneChange): void {
    for (const l of [...this.changeListeners]) l(what);
  }

  /** Pane output, in stream order: tracked, then appended to the stream. */
  output(data: Buffer): void {
    this.tracker.feed(data);
    this.stream.append(data);
    this.reservation.follow();
    this.warm.touched();
  }

  gap(): void {
    this.stream.gap();
  }

  stale(): void {
    this.warm.stale();
  }

  /** The stream position and tracked state right now (read when a reply is parsed). */
  mark(): SnapshotMark {
    return { position: this.stream.position, state: this.tracker.capture() };
  }

  resume(previous: number, reserve: (position: number) => Promise<void>): Promise<void> {
    return this.reservation.resume(previous, reserve);
  }

  noteEarlierOutput(ms: number): void {
    this.stream.noteEarlierOutput(ms);
  }

  /** The link is up. A re-link after a loss is a gap in the stream. */
  linked(): void {
    this.warm.linked();
    if (this.links++ > 0) this.stream.gap();
    this.changed('linked');
  }

  unlinked(): void {
    this.warm.unlinked();
  }

  /** A snapshot at an exact stream position (warm when it can be; see WarmSnapshots). */
  snapshot(linkWaitMs?: number): Promise<PaneSnapshot> {
    return this.warm.snapshot(linkWaitMs);
  }

  /**
   * Starts the pane's program again in place (`run` does it in tmux). tmux clears the screen and
   * resets the pane's modes without a byte in the stream, so once it did: the tracked pen and
   * bracketed paste start afresh from the bytes that followed (a dead pane sends none before), the
   * stream takes a gap (clients resync from a snapshot of the new screen; positions keep growing)
   * and no earlier capture is trusted. A failed `run` changes nothing.
   */
  async restartPane(run: () => Promise<void>): Promise<void> {
    this.stream.flush();
    const from = this.stream.position;
    await run();
    this.stream.flush();
    this.tracker.reset();
    for (const chunk of this.stream.ring.since(from) ?? []) this.tracker.feed(chunk.data);
    this.stream.gap();
    this.warm.stale();
  }

  /** Stops the warm-capture timer (the session ended). */
  dispose(): void {
    this.warm.dispose();
  }
}

/** The live panes of all session actors, by session id. */
export class LivePanes {
  private readonly map = new Map<string, LivePane>();
  private readonly detach = new Map<string, () => void>();
  /** Which linked pane's control client runs the next server-wide query. */
  private queryTurn = 0;
  constructor(
    private readonly opts: LivePaneOptions & {
      /** Called for each new live pane (the disk buffer listens to its stream); returns the undo. */
      created?: (pane: LivePane) => () => void;
    },
  ) {}

  ensure(id: string): LivePane {
    let pane = this.map.get(id);
    if (!pane) {
      pane = new LivePane(id, this.opts);
      this.map.set(id, pane);
      if (this.opts.created) this.detach.set(id, this.opts.created(pane));
    }
    return pane;
  }

  get(id: string): LivePane | undefined {
    return this.map.get(id);
  }

  release(id: string): void {
    this.map.get(id)?.dispose();
    this.map.delete(id);
    this.detach.get(id)?.();
    this.detach.delete(id);
  }

  get size(): number {
    return this.map.size;
  }

  values(): IterableIterator<LivePane> {
    return this.map.values();
  }

  /**
   * Runs a server-wide tmux command over one of the panes' control clients, so that it starts
   * no process (each process started pauses the event loop while it forks); rejects when none is
   * linked, and the caller runs it as a process. The clients take turns.
   */
  query(command: readonly string[]): Promise<Buffer> {
    const linked = [...this.map.values()].filter((p) => p.link.linked);
    if (linked.length === 0) return Promise.reject(new DomainError('tmux-unavailable', 'no session is linked to tmux'));
    return linked[this.queryTurn++ % linked.length]!.link.query(buildControlCommand(command));
  }

  /** The session whose linked control client mirrors tmux pane `paneId`, and the pid of the server it reached; null when none does. */
  sessionOfPane(paneId: string): { readonly session: string; readonly serverPid: number | null } | null {
    for (const pane of this.map.values()) {
      if (pane.link.linked && pane.link.paneId === paneId) return { session: pane.id, serverPid: pane.link.serverPid };
    }
    return null;
  }

  /**
   * The visible screen of a session's agent pane as `capture-pane -p` prints it, read over its
   * control client (no process); null when the session is unknown or not linked.
   */
  captureVisible(id: string): Promise<Buffer> | null {
    const link = this.map.get(id)?.link;
    if (!link?.linked || link.paneId === null) return null;
    return link.query({ capture: ['-t', link.paneId] });
  }
}
