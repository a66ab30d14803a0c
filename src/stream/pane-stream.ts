/**
 * A session's output stream: the pane's bytes as chunks with sequence numbers, the ring that
 * replays them, and the listeners (client actors, disk buffer) that receive them.
 *
 * Sequence numbers are stream positions: a chunk's seq is the position just after its last
 * byte, so "everything after lastSeq" is exact at any byte. Positions never repeat for a
 * session, not even across daemon restarts or control-link gaps: every new epoch (a fresh
 * link, a gap) starts at `epochBase`, above every position handed out before: above the
 * previous epoch in this process, and above the reservation kept in tmux (`@tether-seq`,
 * see src/stream/stream-reservation.ts) across restarts. A new session starts from the wall clock. They stay
 * below 2^53.
 *
 * Output that arrives in one event-loop turn is coalesced into one chunk, but for the first
 * output after input to the pane (its echo, most often), which goes out as it is read.
 */
import { ChunkRing, type RingChunk } from './ring.js';

/** 2025-01-01T00:00:00Z: positions count from here, so they stay below 2^53 until 2059. */
export const SEQ_EPOCH_MS = Date.UTC(2025, 0, 1);
/**
 * Bytes of position budget per millisecond of wall time for a new session's first epoch
 * (8 MB/s keeps positions below 2^53 until 2059). Restarts do not rely on it: they start
 * above the reservation kept in tmux.
 */
export const SEQ_BYTES_PER_MS = 8192;

/** The first position of a new epoch: clock-derived, and strictly above `after`. */
export function epochBase(nowMs: number, after: number): number {
  const fromClock = Math.max(0, Math.floor(nowMs - SEQ_EPOCH_MS)) * SEQ_BYTES_PER_MS;
  return Math.max(fromClock, after + 1);
}

/**
 * The streams with output waiting for the end of this turn, flushed by one immediate for all of
 * them: an immediate and a closure per busy stream per turn were, at a hundred busy sessions, a
 * steady share of what the daemon allocated.
 */
const waiting: PaneStream[] = [];
let flushAllScheduled = false;

function flushWaiting(): void {
  flushAllScheduled = false;
  // A stream flushed here may be queued again (by output its listeners cause): it runs in this
  // loop too. A stream flushed twice has nothing the second time.
  for (let i = 0; i < waiting.length; i++) waiting[i]!.flush();
  waiting.length = 0;
}

export interface StreamListener {
  /** A new chunk, in order. */
  chunk(chunk: RingChunk): void;
  /** The stream jumped (a gap): bytes between the old and new position are lost. */
  gap(position: number): void;
}

export interface PaneStreamOptions {
  readonly ringBytes: number;
  readonly now: () => number;
  /** The highest position handed out before (e.g. by an earlier daemon run), if known. */
  readonly after?: number;
}

export class PaneStream {
  readonly ring: ChunkRing;
  private readonly listeners = new Set<StreamListener>();
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private flushScheduled = false;
  /** Input was written to the pane and no output has come since: the next output is sent at once. */
  private echoDue = false;
  private readonly now: () => number;
  /** Wall-clock ms of the latest output (tmux's record of it until this stream sees some), or null when none is known. */
  lastOutputAt: number | null = null;

  constructor(opts: PaneStreamOptions) {
    this.now = opts.now;
    this.ring = new ChunkRing(opts.ringBytes, epochBase(opts.now(), opts.after ?? 0));
  }

  /** The position after every byte received, including bytes not yet flushed as a chunk. */
  get position(): number {
    return this.ring.end + this.pendingBytes;
  }

  get listenerCount(): number {
    return this.listeners.size;
  }

  /**
   * Output before this stream existed (tmux's record of the pane's last activity, at adoption):
   * kept as `lastOutputAt` only while this stream has seen none of its own.
   */
  noteEarlierOutput(atMs: number): void {
    if (this.lastOutputAt === null) this.lastOutputAt = atMs;
  }

  /**
   * Input was written to the pane: the output that answers it is sent as it is read, not at the
   * end of the turn, when every busy stream's output of the turn goes out before it. Once per
   * input, so a stream of output never comes in more chunks than its input makes; one that no
   * input touches is coalesced (docs/benchmarks.md, "The single session's path, shortened").
   */
  expectEcho(): void {
    this.echoDue = true;
  }

  /** Takes pane bytes; they go out as one chunk at the end of this event-loop turn (at once for an echo, see expectEcho). */
  append(data: Buffer): void {
    if (data.length === 0) return;
    this.pending.push(data);
    this.pendingBytes += data.length;
    this.lastOutputAt = this.now();
    if (this.echoDue) {
      this.echoDue = false;
      this.flush();
      return;
    }
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      waiting.push(this);
      if (!flushAllScheduled) {
        flushAllScheduled = true;
        setImmediate(flushWaiting);
      }
    }
  }

  /** Emits the coalesced pending bytes as one chunk now. */
  flush(): void {
    this.flushScheduled = false;
    if (this.pendingBytes === 0) return;
    // The ring copies a small chunk's parts into its block: no joined copy of its own.
    const chunk = this.ring.pushParts(this.pending, this.pendingBytes);
    this.pending.length = 0;
    this.pendingBytes = 0;
    for (const l of this.listeners) l.chunk(chunk);
  }

  /** Moves the stream to a new epoch above `position` if it is not already past it. */
  startAbove(position: number): void {
    if (this.position > position) return;
    this.flush();
    const next = epochBase(this.now(), position);
    this.ring.reset(next);
    for (const l of this.listeners) l.gap(next);
  }

  /**
   * Starts a new epoch after bytes were lost (link re-established, output paused): the
   * position jumps, so any client behind it gets a snapshot instead of wrong bytes.
   */
  gap(): number {
    this.flush();
    const next = epochBase(this.now(), this.ring.end);
    this.ring.reset(next);
    for (const l of this.listeners) l.gap(next);
    return next;
  }

  subscribe(listener: StreamListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
