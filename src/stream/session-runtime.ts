/**
 * What a session actor keeps outside its machine: the output stream (positions, ring,
 * listeners) and the current control client, through which input and snapshots go.
 *
 * Invariant: commands for one session go out one at a time, in the order they were asked
 * for, over the control client that carries the stream, so input keeps its order ("paste,
 * then Enter") and a snapshot's reply marks an exact stream position.
 */
import { DomainError } from '../errors.js';
import type { ControlClient } from '../tmux/control-client.js';
import { takeSnapshot, type PaneSnapshot, type SnapshotMark } from '../tmux/snapshot.js';
import { TermStateTracker } from '../tmux/term-state.js';
import { PaneStream } from './pane-stream.js';

/**
 * How far ahead of the stream the position reservation in tmux (`@tether-seq`) runs. A
 * restarted daemon starts above the reservation, so no position is ever handed out twice,
 * whatever the output rate; it is renewed when half of it is used.
 */
export const SEQ_RESERVATION_BYTES = 64 * 1024 * 1024;
/** How long a snapshot waits for the control link (the daemon starting, tmux reconnecting). */
export const SNAPSHOT_LINK_WAIT_MS = 5000;

/**
 * Warm snapshots (docs/architecture.md "Warm snapshots"): most wake-ups find the agent waiting,
 * so the pane is captured once it has been quiet this long, and a client's snapshot is that
 * capture plus the ring's bytes after it, built without asking tmux.
 */
export const WARM_QUIET_MS = 500;
/** At most one warm capture per interval: a busy agent costs tmux one capture per 5 s at most. */
export const WARM_MIN_INTERVAL_MS = 5000;
/** A warm capture is used while at most this many bytes follow it; past that, tmux is asked. */
export const WARM_TAIL_MAX_BYTES = 1024 * 1024;

/** How the snapshots of a session were made, for the operator view and the benchmarks. */
/** What a runtime tells its watchers (the session records): its link came up, positions were reserved. */
export type RuntimeChange = 'linked' | 'reserved';

export interface SnapshotCounts {
  /** Captures tmux made for a client that asked (no usable warm capture). */
  cold: number;
  /** Captures made while the pane was quiet, ahead of any request. */
  warmCaptures: number;
  /** Snapshots served from a warm capture plus the ring, without asking tmux. */
  warmServed: number;
}

/** No control client is linked right now (tmux restarting, session being created): `tmux-unavailable`. */
const sessionUnlinked = (id: string): DomainError => new DomainError('tmux-unavailable', `session ${id} is not linked to tmux right now`);

export class SessionRuntime {
  readonly stream: PaneStream;
  /** Pen and bracketed paste, followed from the bytes (tmux 3.3a does not report them). */
  readonly tracker = new TermStateTracker();
  private client: ControlClient | null = null;
  /** Every control client of this session not yet closed, linked or still attaching. */
  private readonly controlClients = new Set<ControlClient>();
  /** Set while the pane is respawned with no control client: a new link waits for it. */
  private unlinked: Promise<void> | null = null;
  private links = 0;
  private queue: Promise<unknown> = Promise.resolve();
  /** The last input sent or queued; input is ordered among itself (see runWhenLinked). */
  private inputQueue: Promise<unknown> = Promise.resolve();
  /** Inputs queued and not yet written (waiting for the link, or behind a multi-line input). */
  private inputsWaiting = 0;
  private readonly linkWaiters = new Set<() => void>();
  /** The pane tether mirrors, once linked. */
  paneId: string | null = null;
  /**
   * The pid of the tmux server the last link reached. When tmux later cannot be reached, a dead
   * server means the session died with it; a live one means only its socket is out of reach.
   */
  serverPid: number | null = null;
  /** The position reserved in tmux: no position at or above it was handed out. */
  private reserved = 0;
  private reserving = false;
  /** Persists a reservation (`@tether-seq`); set by the link once tmux can be written. */
  reserve: ((position: number) => Promise<void>) | null = null;
  /** The latest capture and the position it covers; null when none can be trusted. */
  private warm: PaneSnapshot | null = null;
  private warmAt = -Infinity;
  private warmTimer: NodeJS.Timeout | null = null;
  private warming = false;
  private readonly now: () => number;
  private readonly warmEnabled: boolean;
  readonly snapshotCounts: SnapshotCounts = { cold: 0, warmCaptures: 0, warmServed: 0 };
  private readonly changeListeners = new Set<(what: RuntimeChange) => void>();

  constructor(
    readonly id: string,
    opts: { ringBytes: number; now: () => number; warmSnapshots?: boolean },
  ) {
    this.stream = new PaneStream({ ringBytes: opts.ringBytes, now: opts.now });
    this.now = opts.now;
    this.warmEnabled = opts.warmSnapshots ?? true;
  }

  /** The highest stream position reserved so far (0 before the first reservation). */
  get reservedSeq(): number {
    return this.reserved;
  }

  /** Calls `listener` when the link comes up and when more positions were reserved; returns the undo. */
  onChange(listener: (what: RuntimeChange) => void): () => void {
    this.changeListeners.add(listener);
    return () => this.changeListeners.delete(listener);
  }

  private changed(what: RuntimeChange): void {
    for (const l of [...this.changeListeners]) l(what);
  }

  /** Bytes the warm capture holds (its snapshot and its screen), 0 when there is none. */
  get warmBytes(): number {
    return this.warm ? this.warm.data.length + (this.warm.screen?.length ?? 0) : 0;
  }

  get linked(): boolean {
    return this.client !== null && !this.client.isClosed;
  }

  /** Pane output, in stream order: tracked, then appended to the stream. */
  output(data: Buffer): void {
    this.tracker.feed(data);
    this.stream.append(data);
    if (this.stream.position + SEQ_RESERVATION_BYTES / 2 > this.reserved) void this.renewReservation();
    this.scheduleWarm(WARM_QUIET_MS);
  }

  /** Something changed the screen without bytes in the stream (a resize): the capture is stale. */
  invalidateWarm(): void {
    this.warm = null;
    this.scheduleWarm(WARM_QUIET_MS);
  }

  /** One timer per session: armed by output, it fires once the pane was quiet long enough. */
  private scheduleWarm(delayMs: number): void {
    if (!this.warmEnabled || this.warmTimer) return;
    this.warmTimer = setTimeout(() => {
      this.warmTimer = null;
      this.warmIfQuiet();
    }, delayMs);
    this.warmTimer.unref();
  }

  private warmIfQuiet(): void {
    if (this.warming || !this.linked) return;
    const now = this.now();
    const quietFor = this.stream.lastOutputAt === null ? Infinity : now - this.stream.lastOutputAt;
    if (quietFor < WARM_QUIET_MS) return this.scheduleWarm(WARM_QUIET_MS - quietFor);
    if (this.warm?.position === this.stream.position) return; // nothing new since
    const wait = this.warmAt + WARM_MIN_INTERVAL_MS - now;
    if (wait > 0) return this.scheduleWarm(wait);
    this.warming = true;
    this.warmAt = now;
    this.capture()
      .then((snap) => {
        this.snapshotCounts.warmCaptures++;
        this.keepWarm(snap);
      })
      .catch(() => undefined) // the link went down: the next output tries again
      .finally(() => {
        this.warming = false;
      });
  }

  private keepWarm(snap: PaneSnapshot): void {
    if (this.warmEnabled && (this.warm === null || snap.position >= this.warm.position)) this.warm = snap;
  }

  /**
   * The warm capture plus every byte after it, when the ring still holds them all and they are
   * few enough: a snapshot at the current position, exact by construction (a client that applied
   * the capture and then those bytes holds the same). Null when tmux must be asked.
   */
  private fromWarm(): PaneSnapshot | null {
    const warm = this.warm;
    if (!warm || !this.linked) return null;
    this.stream.flush();
    const tail = this.stream.ring.since(warm.position);
    if (!tail) return null;
    let bytes = 0;
    for (const c of tail) bytes += c.data.length;
    if (bytes > WARM_TAIL_MAX_BYTES) return null;
    const after = tail.map((c) => c.data);
    const data = tail.length === 0 ? warm.data : Buffer.concat([warm.data, ...after], warm.data.length + bytes);
    const screen = tail.length === 0 ? warm.screen : Buffer.concat([warm.screen, ...after], warm.screen.length + bytes);
    return { data, screen, position: this.stream.position, state: warm.state };
  }

  /**
   * Starts the stream above what an earlier run reserved, then reserves ahead of it. Called
   * by the link once linked, before any output of this link is taken.
   */
  async resumeReservation(previous: number): Promise<void> {
    this.stream.startAbove(previous);
    await this.renewReservation();
  }

  private async renewReservation(): Promise<void> {
    if (this.reserving || !this.reserve) return;
    this.reserving = true;
    const next = this.stream.position + SEQ_RESERVATION_BYTES;
    try {
      await this.reserve(next);
      this.reserved = Math.max(this.reserved, next);
      this.changed('reserved');
    } catch {
      // tmux unreachable: the next output tries again; the link's own failure handling reports it.
    } finally {
      this.reserving = false;
    }
  }

  /** The stream position and tracked state right now (read when a reply is parsed). */
  mark(): SnapshotMark {
    return { position: this.stream.position, state: this.tracker.capture() };
  }

  /**
   * Resolves once the control link is up (at once if it is), or rejects after `timeoutMs`:
   * a client that connects while the daemon is still linking waits for the link, not a retry.
   */
  whenLinked(timeoutMs: number): Promise<void> {
    if (this.linked) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.linkWaiters.delete(done);
        reject(sessionUnlinked(this.id));
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        resolve();
      };
      this.linkWaiters.add(done);
    });
  }

  /**
   * A snapshot of the pane at an exact stream position: from the warm capture when it still
   * covers the gap, else a capture now (queued behind earlier commands), which is kept warm.
   */
  async snapshot(linkWaitMs = SNAPSHOT_LINK_WAIT_MS): Promise<PaneSnapshot> {
    const served = this.fromWarm();
    if (served) {
      this.snapshotCounts.warmServed++;
      return served;
    }
    await this.whenLinked(linkWaitMs);
    const snap = await this.capture();
    this.snapshotCounts.cold++;
    this.keepWarm(snap);
    return snap;
  }

  /** A capture over the control client, in order with every command asked for before. */
  private capture(): Promise<PaneSnapshot> {
    return this.commands((client) => {
      const pane = this.paneId;
      if (!pane) throw sessionUnlinked(this.id);
      return takeSnapshot(client, pane);
    });
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
    this.invalidateWarm();
  }

  /**
   * Runs `fn` with no control client attached to the session, and holds new links back until it
   * is done: tmux 3.3a crashes (the whole server) when a pane is respawned while a control client
   * follows its output (measured: within a few respawns). The link closes, and comes back after.
   */
  async withoutLink<T>(fn: () => Promise<T>): Promise<T> {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    this.unlinked = held;
    try {
      const clients = [...this.controlClients];
      for (const c of clients) c.close('the pane is being respawned');
      await Promise.all(clients.map((c) => c.gone));
      return await fn();
    } finally {
      if (this.unlinked === held) this.unlinked = null;
      release();
    }
  }

  /** What a new control client must wait for before it attaches (a respawn under way), if anything. */
  get linkHold(): Promise<void> | null {
    return this.unlinked;
  }

  /** A control client of this session was started (it counts until it closes). */
  linking(client: ControlClient): void {
    this.controlClients.add(client);
    void client.gone.then(() => this.controlClients.delete(client));
  }

  /** The link is up: output of `paneId` flows. A re-link after a loss is a gap in the stream. */
  attach(client: ControlClient, paneId: string): void {
    this.client = client;
    this.paneId = paneId;
    // A new link may see a pane changed while no one looked: nothing captured before is trusted.
    this.warm = null;
    this.scheduleWarm(0);
    if (this.links++ > 0) this.stream.gap();
    for (const done of [...this.linkWaiters]) done();
    this.linkWaiters.clear();
    this.changed('linked');
  }

  detach(client: ControlClient): void {
    if (this.client === client) {
      this.client = null;
      this.warm = null;
    }
  }

  /** Stops the warm-capture timer (the session ended). */
  dispose(): void {
    if (this.warmTimer) clearTimeout(this.warmTimer);
    this.warmTimer = null;
    this.warm = null;
  }

  /**
   * Runs control command lines in order, after everything asked for before; a failing line
   * stops the rest of its batch and rejects.
   */
  commands<T>(fn: (client: ControlClient) => Promise<T>): Promise<T> {
    const run = (): Promise<T> => {
      const client = this.client;
      if (!client || client.isClosed) return Promise.reject(sessionUnlinked(this.id));
      return fn(client);
    };
    const next = this.queue.then(run, run);
    this.queue = next.catch(() => undefined);
    return next;
  }

  /**
   * Runs the input lines `make(paneId)` builds, in order with all input sent before, once the
   * link is up: a caller that arrives while the link is down waits up to `linkWaitMs` (counted
   * from its call), then gets `tmux-unavailable`. Later input queues behind it, so order
   * is kept whatever the wait.
   *
   * Input keeps its own order, apart from other commands (a capture for a snapshot may take tmux
   * 100 ms; a keystroke need not wait for its reply, as tmux runs a client's commands in order
   * anyway). And a one-line input (a keystroke, a key) with nothing waiting ahead of it on a live
   * link is written at once, without a trip through the queue: it is the echo's path.
   */
  runWhenLinked(make: (paneId: string) => readonly string[], linkWaitMs: number): Promise<void> {
    const client = this.client;
    const pane = this.paneId;
    if (this.inputsWaiting === 0 && client && !client.isClosed && pane) {
      let lines: readonly string[];
      try {
        lines = make(pane);
      } catch (err) {
        return Promise.reject(err instanceof Error ? err : new Error(String(err)));
      }
      if (lines.length === 1) {
        const sent = client.run(lines[0]!).then(() => undefined);
        this.inputQueue = sent.catch(() => undefined);
        return sent;
      }
    }
    const deadline = Date.now() + linkWaitMs;
    const run = async (): Promise<void> => {
      await this.whenLinked(Math.max(0, deadline - Date.now()));
      const linkedClient = this.client;
      const linkedPane = this.paneId;
      if (!linkedClient || linkedClient.isClosed || !linkedPane) throw sessionUnlinked(this.id);
      for (const line of make(linkedPane)) await linkedClient.run(line);
    };
    this.inputsWaiting++;
    const next = this.inputQueue.then(run, run).finally(() => this.inputsWaiting--);
    this.inputQueue = next.catch(() => undefined);
    return next;
  }

  /** Runs each line in turn over the control client (`%error` rejects). */
  run(lines: readonly string[]): Promise<void> {
    return this.commands(async (client) => {
      for (const line of lines) await client.run(line);
    });
  }
}

/** The runtimes of all live session actors, by session id. */
export class SessionRuntimes {
  private readonly map = new Map<string, SessionRuntime>();
  private readonly detach = new Map<string, () => void>();
  constructor(
    private readonly opts: {
      ringBytes: number;
      now: () => number;
      warmSnapshots?: boolean;
      /** Called for each new runtime (the disk buffer listens to its stream); returns the undo. */
      created?: (rt: SessionRuntime) => () => void;
    },
  ) {}

  ensure(id: string): SessionRuntime {
    let rt = this.map.get(id);
    if (!rt) {
      rt = new SessionRuntime(id, this.opts);
      this.map.set(id, rt);
      if (this.opts.created) this.detach.set(id, this.opts.created(rt));
    }
    return rt;
  }

  get(id: string): SessionRuntime | undefined {
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

  values(): IterableIterator<SessionRuntime> {
    return this.map.values();
  }
}
