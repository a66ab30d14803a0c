/**
 * Sessions that could not be restored are tried again once the reason is gone (docs/reliability.md
 * "Restoring sessions"): a directory on a disk that was not mounted yet at boot, an agent program
 * installed later, a name another tmux session held and gave up. Every RESTORE_RETRY_INTERVAL_MS
 * each unrestorable record is checked (a stat, an access, a has-session: no restore is attempted
 * while the reason stands); one whose obstacle is gone has its mark cleared and is restored.
 *
 * Invariant: no loop of failures. A record whose checks pass but whose restore fails anyway (tmux
 * could not create the session) is tried again after a delay that doubles each time, up to
 * RESTORE_RETRY_MAX_DELAY_MS; a record with a standing obstacle is never tried, only checked.
 */
import type { Logger } from '../log.js';
import type { SessionRecord, SessionRecords } from './records.js';

/** How often unrestorable records are checked again. */
export const RESTORE_RETRY_INTERVAL_MS = 5_000;
/** The longest wait between two attempts at a record whose restore fails with its checks passing. */
export const RESTORE_RETRY_MAX_DELAY_MS = 10 * 60_000;

export interface RestoreRetryDeps {
  readonly records: SessionRecords;
  readonly system: { hasSession(id: string): boolean; restoreSession(id: string): Promise<void> };
  /** Why the record cannot be restored now, or null when nothing stands in the way. */
  readonly obstacle: (record: SessionRecord) => Promise<string | null>;
  readonly now: () => number;
  readonly log: Logger;
  readonly intervalMs?: number;
}

export class RestoreRetry {
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private running: Promise<void> | null = null;
  /** Records whose restore failed with nothing in the way: when each may be tried again, and the delay after that. */
  private readonly backoff = new Map<string, { at: number; delayMs: number }>();

  constructor(private readonly deps: RestoreRetryDeps) {}

  /** A retry that has started checking. */
  static started(deps: RestoreRetryDeps): RestoreRetry {
    const retry = new RestoreRetry(deps);
    retry.start();
    return retry;
  }

  /** Checks now, then every interval. */
  start(): void {
    if (this.timer) return;
    void this.check();
    this.timer = setInterval(() => void this.check(), this.deps.intervalMs ?? RESTORE_RETRY_INTERVAL_MS);
    this.timer.unref();
  }

  /** Stops checking; resolves once a check under way is done. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }

  /** One round over the unrestorable records (a round still under way is joined, not doubled). */
  check(): Promise<void> {
    this.running ??= this.round().finally(() => (this.running = null));
    return this.running;
  }

  private async round(): Promise<void> {
    const unrestorable = this.deps.records.list().records.filter((r) => r.ended?.reason === 'unrestorable');
    const ids = new Set(unrestorable.map((r) => r.name));
    for (const id of [...this.backoff.keys()]) if (!ids.has(id)) this.backoff.delete(id);
    for (const record of unrestorable) {
      if (this.stopped) return;
      if (this.deps.system.hasSession(record.name)) continue;
      const wait = this.backoff.get(record.name);
      if (wait && this.deps.now() < wait.at) continue;
      const obstacle = await this.deps.obstacle(record);
      if (obstacle !== null) {
        this.deps.log.debug({ session: record.name, obstacle }, 'a session still cannot be restored: checked, not tried');
        continue;
      }
      await this.retry(record, wait?.delayMs ?? null);
    }
  }

  private async retry(record: SessionRecord, lastDelayMs: number | null): Promise<void> {
    const id = record.name;
    this.deps.log.info({ session: id, was: record.ended?.detail }, 'what kept a session from being restored is gone: restoring it');
    try {
      this.deps.records.update(id, { ended: null });
      await this.deps.system.restoreSession(id);
      this.backoff.delete(id);
    } catch {
      // Marked unrestorable again, with the reason, by the restore itself.
      const base = this.deps.intervalMs ?? RESTORE_RETRY_INTERVAL_MS;
      const delayMs = Math.min(RESTORE_RETRY_MAX_DELAY_MS, lastDelayMs === null ? base : lastDelayMs * 2);
      this.backoff.set(id, { at: this.deps.now() + delayMs, delayMs });
    }
  }
}
