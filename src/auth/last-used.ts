/**
 * The last-used time of each token, noted on every request and written to the token file in one
 * batch within TOUCH_FLUSH_MS: a request never waits on a write, and a busy phone costs one write
 * a minute, not one per request.
 *
 * Invariant: a time noted is written by the next flush unless its token was forgotten (revoked)
 * meanwhile; a failed timed write keeps the batch for the next one.
 */

/** How long `note` batches last-used times before writing them. */
export const TOUCH_FLUSH_MS = 60_000;

export class LastUsedBatch {
  /** Token id to the ISO time it was last used, not written yet. */
  private readonly touched = new Map<string, string>();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly now: () => number,
    /** Writes the batch to the token file (under its lock); tokens no longer there are skipped. */
    private readonly write: (batch: ReadonlyMap<string, string>) => void,
  ) {}

  /** Notes that a token was used now; written within TOUCH_FLUSH_MS. */
  note(id: string): void {
    this.touched.set(id, new Date(this.now()).toISOString());
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      try {
        this.flush();
      } catch {
        // Last-used times are a convenience: a failed write is retried with the next batch.
      }
    }, TOUCH_FLUSH_MS);
    this.timer.unref();
  }

  /** A revoked token's time is not written. */
  forget(id: string): void {
    this.touched.delete(id);
  }

  /** Writes the batch now; a time noted again meanwhile stays for the next one. */
  flush(): void {
    if (this.touched.size === 0) return;
    const batch = new Map(this.touched);
    this.write(batch);
    for (const [id, at] of batch) if (this.touched.get(id) === at) this.touched.delete(id);
  }

  /** Writes the batch and stops the timer. */
  close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.flush();
  }
}
