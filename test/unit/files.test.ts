/**
 * The lock files of the data dir (src/files.ts `withLock`) against a real directory, with the wall
 * clock stepped in the middle of a wait, as a VM's clock is when it is set right: a live lock is
 * neither taken for one left by a crash nor waited on for longer than the wait.
 */
import { existsSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { withLock, type FileFailure } from '../../src/files.js';

const fail: FileFailure = (code, message) => Object.assign(new Error(message), { code });

/** Runs `fn`, answers the code of what it threw. */
function codeOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    return String((err as { code?: unknown }).code);
  }
  throw new Error('expected a throw');
}

/** From `afterMs` on (monotonic), `Date.now()` answers the real time plus `stepMs`. */
function stepWallClock(stepMs: number, afterMs: number): void {
  const real = Date.now.bind(Date);
  const from = performance.now() + afterMs;
  vi.spyOn(Date, 'now').mockImplementation(() => real() + (performance.now() >= from ? stepMs : 0));
}

describe('withLock', () => {
  let dir: string;
  let lock: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tether-files-'));
    lock = join(dir, 'store.lock');
  });
  afterEach(() => {
    vi.restoreAllMocks();
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps another writer’s lock when the wall clock steps a minute ahead mid-wait', () => {
    writeFileSync(lock, '');
    stepWallClock(60_000, 300);
    const started = performance.now();
    let ran = false;
    expect(codeOf(() => withLock(lock, () => (ran = true), fail))).toBe('locked');
    expect(performance.now() - started).toBeGreaterThanOrEqual(1900);
    expect(ran).toBe(false);
    // The holder's lock is still there: it was not taken for a crash's and then given up on.
    expect(existsSync(lock)).toBe(true);
  });

  it('gives up after its wait when the wall clock steps a minute back mid-wait', () => {
    writeFileSync(lock, '');
    stepWallClock(-60_000, 300);
    const started = performance.now();
    expect(codeOf(() => withLock(lock, () => 'ran', fail))).toBe('locked');
    // The wait is two seconds; a wait read off the wall clock would last a minute more.
    expect(performance.now() - started).toBeLessThan(20_000);
    expect(existsSync(lock)).toBe(true);
  });

  it('takes over a lock left by a crash at once, and releases it after', () => {
    writeFileSync(lock, '');
    const old = new Date(Date.now() - 60_000);
    utimesSync(lock, old, old);
    expect(withLock(lock, () => existsSync(lock), fail)).toBe(true);
    expect(existsSync(lock)).toBe(false);
  });
});
