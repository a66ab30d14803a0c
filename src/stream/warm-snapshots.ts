/**
 * Warm snapshots (docs/architecture.md "Warm snapshots"): most wake-ups find the agent waiting,
 * so the pane is captured once it has been quiet WARM_QUIET_MS, and a client's snapshot is that
 * capture plus the ring's bytes after it, built without asking tmux.
 *
 * Invariant: a snapshot is exact at its position whichever way it was made: a client that applied
 * the capture and then the bytes after it holds what a client that never left holds. Anything
 * that changes the screen without a byte in the stream drops the capture.
 */
import type { PaneSnapshot } from '../tmux/screen/snapshot.js';
import type { PaneStream } from './pane-stream.js';

/** How long a snapshot waits for the control link (the daemon starting, tmux reconnecting). */
export const SNAPSHOT_LINK_WAIT_MS = 5000;
/** The pane is captured once it has been quiet this long. */
export const WARM_QUIET_MS = 500;
/** At most one warm capture per interval: a busy agent costs tmux one capture per 5 s at most. */
export const WARM_MIN_INTERVAL_MS = 5000;
/** A warm capture is used while at most this many bytes follow it; past that, tmux is asked. */
export const WARM_TAIL_MAX_BYTES = 1024 * 1024;
/**
 * A capture timer that fires this much later than it was due found an event loop that was held
 * up: output may be waiting unread, so the pane only looks quiet. It looks again later.
 */
export const WARM_LATE_MS = 100;
/** Warm captures in flight at once, all sessions together; the others wait their turn. */
export const WARM_MAX_IN_FLIGHT = 2;
/**
 * Bytes of warm captures a second, all sessions together. A capture is a pane's whole history
 * (about 1 MB for 10,000 full lines), and each is built into a snapshot: a hundred panes that go
 * quiet in turn each asked for one, back to back, two at a time. Paced, what the captures cost
 * the daemon is bounded whatever the panes do (docs/benchmarks.md "The warm-up's load": it did not
 * set the event loop's tail there). A pane waiting its turn is captured later; a phone that asks
 * meanwhile gets a capture from tmux at once, as without a warm one.
 */
export const WARM_BYTES_PER_SECOND = 4 * 1024 * 1024;

/**
 * The warm captures of one process, all sessions together: at most `maxInFlight` at once, and
 * their bytes at most `bytesPerSecond` (a capture's size is known only once made: its start
 * reserves what the pane's last capture took, and its end settles the difference).
 */
export class WarmCapturePace {
  private inFlight = 0;
  /** When the next capture may start (the callers' `now` clock). */
  private nextAt = -Infinity;

  constructor(
    private readonly maxInFlight = WARM_MAX_IN_FLIGHT,
    private readonly bytesPerSecond = WARM_BYTES_PER_SECOND,
  ) {}

  /** How long a capture must wait before it may start; 0 when it may start now. */
  waitMs(now: number): number {
    if (this.inFlight >= this.maxInFlight) return WARM_QUIET_MS;
    return Math.max(0, this.nextAt - now);
  }

  /** A capture starts, expected to take `estimate` bytes. */
  started(now: number, estimate: number): void {
    this.inFlight++;
    this.nextAt = Math.max(this.nextAt, now) + (estimate * 1000) / this.bytesPerSecond;
  }

  /** The capture started with `estimate` ended, having taken `bytes` (0 when it failed). */
  ended(estimate: number, bytes: number): void {
    this.inFlight--;
    this.nextAt += ((bytes - estimate) * 1000) / this.bytesPerSecond;
  }
}

/**
 * The pace of this process's warm captures. A hundred sessions that all looked quiet at once (the
 * event loop or tmux held up for half a second) each asked tmux for its whole history at the same
 * moment: seconds of work that held everything up again (docs/benchmarks.md "Scale").
 */
const processPace = new WarmCapturePace();

/** How the snapshots of a session were made, for the operator view and the benchmarks. */
export interface SnapshotCounts {
  /** Captures tmux made for a client that asked (no usable warm capture). */
  cold: number;
  /** Captures made while the pane was quiet, ahead of any request. */
  warmCaptures: number;
  /** Snapshots served from a warm capture plus the ring, without asking tmux. */
  warmServed: number;
}

/** What the warm snapshots need of the pane link. */
export interface CaptureSource {
  readonly linked: boolean;
  whenLinked(timeoutMs: number): Promise<void>;
  /** A capture over the link, in order with every command asked for before. */
  capture(): Promise<PaneSnapshot>;
}

export class WarmSnapshots {
  /** The latest capture and the position it covers; null when none can be trusted. */
  private warm: PaneSnapshot | null = null;
  private warmAt = -Infinity;
  private timer: NodeJS.Timeout | null = null;
  /** When the armed timer is due (the `now` clock). */
  private dueAt = 0;
  private warming = false;
  /** The size of this pane's last capture: what its next warm capture reserves of the pace. */
  private lastBytes = 0;
  readonly counts: SnapshotCounts = { cold: 0, warmCaptures: 0, warmServed: 0 };

  constructor(
    private readonly stream: PaneStream,
    private readonly link: CaptureSource,
    private readonly now: () => number,
    private readonly enabled: boolean,
    private readonly pace: WarmCapturePace = processPace,
  ) {}

  /** The stream position the warm capture covers, null when there is none. */
  get position(): number | null {
    return this.warm?.position ?? null;
  }

  /** Bytes the warm capture holds (its snapshot and its screen), 0 when there is none. */
  get bytes(): number {
    return this.warm ? this.warm.data.length + (this.warm.screen?.length ?? 0) : 0;
  }

  /** The pane wrote: capture once it is quiet. */
  touched(): void {
    // A capture the ring has moved past can serve no snapshot again (positions only grow): it goes
    // now, not at the next capture. A busy pane's last capture (a whole history, up to a few MB)
    // was otherwise held for as long as the pane kept printing (#47).
    if (this.warm !== null && this.warm.position < this.stream.ring.start) this.warm = null;
    this.schedule(WARM_QUIET_MS);
  }

  /** Something changed the screen without bytes in the stream (a resize): the capture is stale. */
  stale(): void {
    this.warm = null;
    this.schedule(WARM_QUIET_MS);
  }

  /** A new link may see a pane changed while no one looked: nothing captured before is trusted. */
  linked(): void {
    this.warm = null;
    this.schedule(0);
  }

  /** The link went down: a capture may not outlive what it could see. */
  unlinked(): void {
    this.warm = null;
  }

  /** Stops the capture timer (the session ended). */
  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.warm = null;
  }

  /**
   * A snapshot of the pane at an exact stream position: from the warm capture when it still
   * covers the gap, else a capture now (queued behind earlier commands), which is kept warm.
   */
  async snapshot(linkWaitMs = SNAPSHOT_LINK_WAIT_MS): Promise<PaneSnapshot> {
    const served = this.fromWarm();
    if (served) {
      this.counts.warmServed++;
      return served;
    }
    await this.link.whenLinked(linkWaitMs);
    const snap = await this.link.capture();
    this.counts.cold++;
    this.keep(snap);
    return snap;
  }

  /** One timer per session: armed by output, it fires once the pane was quiet long enough. */
  private schedule(delayMs: number): void {
    if (!this.enabled || this.timer) return;
    this.dueAt = this.now() + delayMs;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.captureIfQuiet();
    }, delayMs);
    this.timer.unref();
  }

  private captureIfQuiet(): void {
    if (this.warming || !this.link.linked) return;
    const now = this.now();
    // Late: look again once the quiet could be real.
    if (now - this.dueAt > WARM_LATE_MS) return this.schedule(WARM_QUIET_MS);
    const quietFor = this.stream.lastOutputAt === null ? Infinity : now - this.stream.lastOutputAt;
    if (quietFor < WARM_QUIET_MS) return this.schedule(WARM_QUIET_MS - quietFor);
    if (this.warm?.position === this.stream.position) return; // nothing new since
    const wait = Math.max(this.warmAt + WARM_MIN_INTERVAL_MS - now, this.pace.waitMs(now));
    if (wait > 0) return this.schedule(wait);
    this.warming = true;
    this.warmAt = now;
    const estimate = this.lastBytes;
    let bytes = 0;
    this.pace.started(now, estimate);
    this.link
      .capture()
      .then((snap) => {
        this.counts.warmCaptures++;
        bytes = snap.data.length;
        this.keep(snap);
      })
      .catch(() => undefined) // the link went down: the next output tries again
      .finally(() => {
        this.warming = false;
        this.pace.ended(estimate, bytes);
      });
  }

  private keep(snap: PaneSnapshot): void {
    this.lastBytes = snap.data.length;
    if (this.enabled && (this.warm === null || snap.position >= this.warm.position)) this.warm = snap;
  }

  /**
   * The warm capture plus every byte after it, when the ring still holds them all and they are
   * few enough: a snapshot at the current position, exact by construction (a client that applied
   * the capture and then those bytes holds the same). Null when tmux must be asked.
   */
  private fromWarm(): PaneSnapshot | null {
    const warm = this.warm;
    if (!warm || !this.link.linked) return null;
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
}
