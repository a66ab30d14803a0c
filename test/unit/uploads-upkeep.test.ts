/**
 * The uploads' upkeep (src/service/workbench/workbench-upkeep.ts `UploadsUpkeep`): which uploads a round
 * asks the store to remove, what it logs, that its timer runs from `start` to `stop` only, and a
 * deleted session's uploads. The store is a recording stand-in; the timer is the fake clock's.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { UPLOAD_CLEANUP_INTERVAL_MS, UploadsUpkeep } from '../../src/service/workbench/workbench-upkeep.js';
import { capturingLog } from '../helpers/capturing-log.js';

const DAY = 24 * 3600 * 1000;
const never = { removeSession: () => Promise.reject(new Error('no session is deleted here')) };
const noCleanup = { cleanup: () => Promise.reject(new Error('no clean-up runs here')) };
/** Lets the promises the upkeep started settle (the fake clock's microtasks). */
const settle = () => vi.advanceTimersByTimeAsync(0);

beforeEach(() => void vi.useFakeTimers());
afterEach(() => void vi.useRealTimers());

describe('UploadsUpkeep clean-up', () => {
  it('at start asks the store for the uploads older than keep_days and logs how many went', async () => {
    const asked: number[] = [];
    const { log, lines } = capturingLog();
    const upkeep = new UploadsUpkeep({
      store: { cleanup: (olderThan) => (asked.push(olderThan), Promise.resolve(['a', 'b'])) },
      uploads: never,
      keepDays: 3,
      now: () => 10 * DAY,
      log,
    });
    upkeep.start();
    await settle();
    upkeep.stop();
    expect(asked).toEqual([7 * DAY]);
    expect(lines).toEqual([{ level: 'info', obj: { removed: 2 }, msg: 'uploads older than keep_days removed' }]);
  });

  it('logs nothing when nothing was old enough, and a warning when the store failed', async () => {
    const { log, lines } = capturingLog();
    let fail = false;
    const upkeep = new UploadsUpkeep({
      store: { cleanup: () => (fail ? Promise.reject(new Error('EACCES: the uploads dir')) : Promise.resolve([])) },
      uploads: never,
      keepDays: 1,
      now: () => DAY,
      log,
    });
    upkeep.start();
    await settle();
    expect(lines).toEqual([]);
    fail = true;
    await vi.advanceTimersByTimeAsync(UPLOAD_CLEANUP_INTERVAL_MS);
    upkeep.stop();
    expect(lines).toEqual([{ level: 'warn', obj: { err: 'EACCES: the uploads dir' }, msg: 'the uploads clean-up failed' }]);
  });

  it('runs nothing before start, once at start, then every interval until stop; a second start changes nothing', async () => {
    let rounds = 0;
    const { log } = capturingLog();
    const upkeep = new UploadsUpkeep({
      store: { cleanup: () => (rounds++, Promise.resolve([])) },
      uploads: never,
      keepDays: 1,
      now: () => DAY,
      log,
    });
    await vi.advanceTimersByTimeAsync(UPLOAD_CLEANUP_INTERVAL_MS * 2);
    expect(rounds).toBe(0);
    upkeep.start();
    upkeep.start();
    expect(rounds).toBe(1);
    await vi.advanceTimersByTimeAsync(UPLOAD_CLEANUP_INTERVAL_MS);
    expect(rounds).toBe(2);
    upkeep.stop();
    await vi.advanceTimersByTimeAsync(UPLOAD_CLEANUP_INTERVAL_MS * 3);
    expect(rounds).toBe(2);
  });
});

describe('UploadsUpkeep when a session is deleted', () => {
  it("logs how many of the deleted session's uploads went, nothing when none, and a warning when removing failed", async () => {
    const { log, lines } = capturingLog();
    const removed: Record<string, Promise<string[]>> = {
      w1: Promise.resolve(['x']),
      w2: Promise.resolve([]),
      w3: Promise.reject(new Error('EBUSY')),
    };
    const asked: string[] = [];
    const upkeep = new UploadsUpkeep({
      store: noCleanup,
      uploads: { removeSession: (id) => (asked.push(id), removed[id] ?? Promise.resolve([])) },
      keepDays: 1,
      now: () => DAY,
      log,
    });
    for (const id of ['w1', 'w2', 'w3']) upkeep.sessionDeleted(id);
    await settle();
    expect(asked).toEqual(['w1', 'w2', 'w3']);
    expect(lines).toEqual([
      { level: 'info', obj: { session: 'w1', removed: 1 }, msg: "the deleted session's uploads were removed" },
      { level: 'warn', obj: { session: 'w3', err: 'EBUSY' }, msg: 'the uploads of a deleted session could not be removed' },
    ]);
  });
});
