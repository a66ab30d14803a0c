/**
 * The file habits of what tether keeps in its data dir (tokens, session records,
 * pairing tokens, the TLS key): written atomically (a reader sees the old or the new content,
 * never a part; a crash mid-write loses nothing), mode 0600, and changed by one process at a
 * time under a lock file (the daemon and the CLI both write them).
 */
import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, openSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { dirname, isAbsolute, relative, sep } from 'node:path';

/** How a failure is reported: src/errors.ts `storeFailure` (`store-io`, `store-locked`) for tether's stores. */
export type FileFailure = (code: 'io' | 'locked', message: string) => Error;

/** How long a writer waits for another one's lock, and when a lock is left over from a crash. */
const LOCK_WAIT_MS = 2000;
const LOCK_STALE_MS = 10_000;
const LOCK_POLL_MS = 10;

/** Whether `path` is `dir` or lies under it, by their text (a symlink on the way is not followed). */
export function isInside(path: string, dir: string): boolean {
  const rel = relative(dir, path);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

export const errnoOf = (err: unknown): string | undefined => (err as NodeJS.ErrnoException).code;

/** Blocks the thread briefly: the stores are synchronous and a lock is held for milliseconds. */
function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** Writes `path` (0600) so that a reader sees the old or the new content, never a part. */
export function writeAtomic(path: string, content: string | Buffer, fail: FileFailure): void {
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    const fd = openSync(tmp, 'wx', 0o600);
    try {
      writeSync(fd, typeof content === 'string' ? Buffer.from(content, 'utf8') : content);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw fail('io', `${path} cannot be written: ${(err as Error).message}`);
  }
  try {
    // The rename itself survives a power loss only once the directory is synced.
    const dirFd = openSync(dirname(path), 'r');
    try {
      fsyncSync(dirFd);
    } finally {
      closeSync(dirFd);
    }
  } catch {
    // Not every file system lets a directory be synced; the rename is still atomic.
  }
}

/**
 * How old the lock file at `path` is, in ms, or null when there is none. Its age by the wall clock
 * is read once, when this wait first sees it; from then on it ages on the monotonic clock, so a
 * step of the wall clock in the middle of a wait (a VM's clock set right) neither takes a live
 * lock for one left by a crash nor makes a fresh one look young. A lock replaced meanwhile (another
 * inode or mtime) is read afresh.
 */
type LockSight = { key: string; wallAge: number; seenAt: number };
function lockAge(path: string, sight: { last?: LockSight }): number | null {
  let stat;
  try {
    stat = statSync(path);
  } catch {
    return null;
  }
  const key = `${stat.ino}:${stat.mtimeMs}`;
  if (sight.last?.key !== key) sight.last = { key, wallAge: Date.now() - stat.mtimeMs, seenAt: performance.now() };
  return sight.last.wallAge + (performance.now() - sight.last.seenAt);
}

/**
 * Runs `fn` holding the lock file `lockPath`, so that two processes never interleave writes. The
 * wait is measured on the monotonic clock; a lock older than LOCK_STALE_MS (left by a crash) is
 * removed and taken at once, never removed and then given up on.
 */
export function withLock<T>(lockPath: string, fn: () => T, fail: FileFailure): T {
  const deadline = performance.now() + LOCK_WAIT_MS;
  const sight: { last?: LockSight } = {};
  for (;;) {
    try {
      closeSync(openSync(lockPath, 'wx', 0o600));
      break;
    } catch (err) {
      if (errnoOf(err) !== 'EEXIST') throw fail('io', `${lockPath} cannot be created: ${(err as Error).message}`);
    }
    const age = lockAge(lockPath, sight);
    if (age === null) continue; // Released since: try again at once.
    // A lock older than any write could take is left over from a crash: taken over at once.
    if (age > LOCK_STALE_MS) {
      try {
        rmSync(lockPath, { force: true });
      } catch (err) {
        throw fail('io', `${lockPath} is left over from a crash and cannot be removed: ${(err as Error).message}`);
      }
      continue;
    }
    if (performance.now() > deadline) throw fail('locked', `${lockPath} is held by another tether process; remove it if none is running`);
    sleepSync(LOCK_POLL_MS);
  }
  try {
    return fn();
  } finally {
    rmSync(lockPath, { force: true });
  }
}
