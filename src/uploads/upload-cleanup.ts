/**
 * Removing uploads (docs/api.md "Uploads"): those older than `[uploads] keep_days`, once when the
 * clean-up starts and every UPLOAD_CLEANUP_INTERVAL_MS after; and a deleted session's. A round
 * that fails is logged, and the next one tries again.
 *
 * Invariant: nothing is removed before `start` (the daemon calls it once it holds its port, so a
 * refused daemon removes nothing).
 */
import type { Logger } from '../log.js';
import type { UploadStore } from './upload-store.js';

/** How often uploads older than `[uploads] keep_days` are looked for (and once at `start`). */
export const UPLOAD_CLEANUP_INTERVAL_MS = 6 * 3600 * 1000;
const DAY_MS = 24 * 3600 * 1000;

export interface UploadCleanupDeps {
  readonly store: Pick<UploadStore, 'cleanup'>;
  /** `[uploads] keep_days`: uploads older than this many days are removed. */
  readonly keepDays: number;
  readonly now: () => number;
  readonly log: Logger;
}

export class UploadCleanup {
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly deps: UploadCleanupDeps) {}

  /** One round now; resolves with how many uploads it removed (0 when it failed, which is logged). */
  async run(): Promise<number> {
    const { store, keepDays, now, log } = this.deps;
    try {
      const removed = await store.cleanup(now() - keepDays * DAY_MS);
      if (removed.length > 0) log.info({ removed: removed.length }, 'uploads older than keep_days removed');
      return removed.length;
    } catch (err) {
      log.warn({ err: (err as Error).message }, 'the uploads clean-up failed');
      return 0;
    }
  }

  /** Runs a round now and every UPLOAD_CLEANUP_INTERVAL_MS; a second `start` changes nothing. */
  start(): void {
    if (this.timer) return;
    void this.run();
    this.timer = setInterval(() => void this.run(), UPLOAD_CLEANUP_INTERVAL_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}

/** Removes the uploads of deleted session `id` with `remove`, and logs what came of it. */
export function removeDeletedSessionUploads(remove: (id: string) => Promise<string[]>, id: string, log: Logger): void {
  void remove(id).then(
    (removed) => {
      if (removed.length > 0) log.info({ session: id, removed: removed.length }, "the deleted session's uploads were removed");
    },
    (err: Error) => log.warn({ session: id, err: err.message }, 'the uploads of a deleted session could not be removed'),
  );
}
