/**
 * When a stream client's send queue counts as behind: pure, the queue size and the clock are
 * passed in (docs/architecture.md "Clients").
 */

/**
 * When a client counts as behind (docs/architecture.md "Clients"). A client that cannot keep up
 * (a phone on a slow link) must be resynced with a snapshot rather than fed a backlog; a fast
 * reader that stalls for a moment (descheduled on a busy machine, a GC) must not be: a flood
 * at tmux's top rate fills megabytes in a fraction of a second, so a byte count alone judged
 * such readers behind and skipped their bytes. So a client is behind when its send buffer has
 * stayed over `low` for more than `maxLagMs` (it is not draining), or at once past `high` (the
 * memory bound, whatever the time).
 */
export interface Watermarks {
  /** Bytes queued from which the client is behind at once: the memory bound per client. */
  readonly high: number;
  /** Bytes queued at or below which the client has drained. */
  readonly low: number;
  /** How long the queue may stay over `low` before the client counts as behind. */
  readonly maxLagMs: number;
}

export const DEFAULT_WATERMARKS: Watermarks = { high: 16 * 1024 * 1024, low: 512 * 1024, maxLagMs: 2000 };

/** Tracks one client's send queue against its watermarks. Pure: the queue size and the clock are passed in. */
export class QueueLag {
  private overLowSince: number | null = null;

  constructor(private readonly marks: Watermarks) {}

  /** Whether a client with `queued` bytes waiting at `now` (ms) is behind. */
  behind(queued: number, now: number): boolean {
    if (queued > this.marks.high) return true;
    if (queued <= this.marks.low) {
      this.overLowSince = null;
      return false;
    }
    this.overLowSince ??= now;
    return now - this.overLowSince > this.marks.maxLagMs;
  }

  /** Forgets the past (the client starts over from a snapshot). */
  reset(): void {
    this.overLowSince = null;
  }
}
