/**
 * The uploads' clean-up (src/uploads/upload-cleanup.ts): which uploads a round asks the store to
 * remove, what it logs, and that its timer runs from `start` to `stop` only. The store is a
 * recording stand-in; the timer is the fake clock's.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Logger } from '../../src/log.js';
import { UPLOAD_CLEANUP_INTERVAL_MS, UploadCleanup, removeDeletedSessionUploads } from '../../src/uploads/upload-cleanup.js';

interface Line {
  level: string;
  obj: Record<string, unknown>;
  msg: string;
}

function capturingLog(): { log: Logger; lines: Line[] } {
  const lines: Line[] = [];
  const at =
    (level: string) =>
    (obj: object | string, msg?: string): void =>
      void lines.push(
        typeof obj === 'string' ? { level, obj: {}, msg: obj } : { level, obj: obj as Record<string, unknown>, msg: msg ?? '' },
      );
  const log: Logger = { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error'), child: () => log };
  return { log, lines };
}

const DAY = 24 * 3600 * 1000;

afterEach(() => vi.useRealTimers());

describe('UploadCleanup', () => {
  it('asks the store for the uploads older than keep_days and logs how many went', async () => {
    const asked: number[] = [];
    const { log, lines } = capturingLog();
    const cleanup = new UploadCleanup({
      store: { cleanup: (olderThan) => (asked.push(olderThan), Promise.resolve(['a', 'b'])) },
      keepDays: 3,
      now: () => 10 * DAY,
      log,
    });
    expect(await cleanup.run()).toBe(2);
    expect(asked).toEqual([7 * DAY]);
    expect(lines).toEqual([{ level: 'info', obj: { removed: 2 }, msg: 'uploads older than keep_days removed' }]);
  });

  it('logs nothing when nothing was old enough, and a warning when the store failed', async () => {
    const { log, lines } = capturingLog();
    let fail = false;
    const cleanup = new UploadCleanup({
      store: { cleanup: () => (fail ? Promise.reject(new Error('EACCES: the uploads dir')) : Promise.resolve([])) },
      keepDays: 1,
      now: () => DAY,
      log,
    });
    expect(await cleanup.run()).toBe(0);
    expect(lines).toEqual([]);
    fail = true;
    expect(await cleanup.run()).toBe(0);
    expect(lines).toEqual([{ level: 'warn', obj: { err: 'EACCES: the uploads dir' }, msg: 'the uploads clean-up failed' }]);
  });

  it('runs nothing before start, once at start, then every interval until stop; a second start changes nothing', async () => {
    vi.useFakeTimers();
    let rounds = 0;
    const { log } = capturingLog();
    const cleanup = new UploadCleanup({ store: { cleanup: () => (rounds++, Promise.resolve([])) }, keepDays: 1, now: () => DAY, log });
    await vi.advanceTimersByTimeAsync(UPLOAD_CLEANUP_INTERVAL_MS * 2);
    expect(rounds).toBe(0);
    cleanup.start();
    cleanup.start();
    expect(rounds).toBe(1);
    await vi.advanceTimersByTimeAsync(UPLOAD_CLEANUP_INTERVAL_MS);
    expect(rounds).toBe(2);
    cleanup.stop();
    await vi.advanceTimersByTimeAsync(UPLOAD_CLEANUP_INTERVAL_MS * 3);
    expect(rounds).toBe(2);
  });
});

describe('removeDeletedSessionUploads', () => {
  it("logs how many of the deleted session's uploads went, nothing when none, and a warning when removing failed", async () => {
    const { log, lines } = capturingLog();
    const settled = () => new Promise((resolve) => setImmediate(resolve));
    removeDeletedSessionUploads(() => Promise.resolve(['x']), 'w1', log);
    removeDeletedSessionUploads(() => Promise.resolve([]), 'w2', log);
    removeDeletedSessionUploads(() => Promise.reject(new Error('EBUSY')), 'w3', log);
    await settled();
    expect(lines).toEqual([
      { level: 'info', obj: { session: 'w1', removed: 1 }, msg: "the deleted session's uploads were removed" },
      { level: 'warn', obj: { session: 'w3', err: 'EBUSY' }, msg: 'the uploads of a deleted session could not be removed' },
    ]);
  });
});
