/**
 * Restoring as the daemon runs it (`[agent] restore`, docs/reliability.md "Restoring sessions"):
 * with it on, a session lost with its tmux server is made again from its record (the sidecar
 * system's `restore`), the sessions lost while tether was not running come back at start-up, and
 * those that could not be are tried again once what kept them from it is gone. With it off, none
 * of this runs: a lost session ends.
 */
import type { Logger } from '../log.js';
import { restoreAtStart, type RestoreAtStartDeps } from './at-start.js';
import { recreateSession, restoreObstacle, type RestoreDeps } from './recreate.js';
import { RestoreRetry, type RestoreRetryDeps } from './retry.js';

export interface RestoringDeps extends RestoreDeps {
  /** `[agent] restore`. */
  readonly enabled: boolean;
}

/** What the sidecar system calls to bring a lost session back; undefined when restoring is off. */
export function restorerOf(deps: RestoringDeps): ((id: string) => Promise<{ paneId: string }>) | undefined {
  if (!deps.enabled) return undefined;
  return (id) => recreateSession(deps, id);
}

/**
 * At start-up, once the sessions tmux holds were adopted: the sessions lost with their server come
 * back, and the retry of those that could not starts. Resolves with the retry to stop at shutdown
 * (nothing to stop when restoring is off).
 */
export async function restoreAtStartAndRetry(
  deps: RestoringDeps & {
    readonly system: RestoreAtStartDeps['system'] & RestoreRetryDeps['system'];
    readonly retryIntervalMs?: number;
    readonly log: Logger;
  },
): Promise<{ stop(): Promise<void> }> {
  if (!deps.enabled) return { stop: () => Promise.resolve() };
  const done = await restoreAtStart(deps);
  if (done.restored.length + done.failed.length > 0) deps.log.info(done, 'sessions lost with their tmux server were restored');
  return RestoreRetry.started({
    records: deps.records,
    system: deps.system,
    obstacle: (record) => restoreObstacle(deps, record),
    now: deps.now,
    log: deps.log,
    intervalMs: deps.retryIntervalMs,
  });
}
