/**
 * The retry of unrestorable sessions (src/restore/retry.ts) with real record files and a
 * stand-in for the actor system: a standing reason is only checked, a reason gone clears the mark
 * and restores, and a restore that fails with its checks passing backs off instead of looping.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SessionRecords, type SessionRecord } from '../../src/restore/records.js';
import { RESTORE_RETRY_INTERVAL_MS, RestoreRetry } from '../../src/restore/retry.js';
import type { Logger } from '../../src/log.js';

const quiet = { info: () => undefined, warn: () => undefined, debug: () => undefined, error: () => undefined } as unknown as Logger;

function unrestorable(name: string, detail: string): SessionRecord {
  return {
    v: 1,
    name,
    description: '',
    cwd: '/somewhere',
    command: ['/bin/sh'],
    sessionFile: null,
    createdAt: '2026-01-01T00:00:00.000Z',
    reservedSeq: 42,
    server: null,
    ended: { reason: 'unrestorable', detail, at: '2026-01-01T00:00:01.000Z' },
  };
}

describe('RestoreRetry', () => {
  let dir: string;
  let records: SessionRecords;
  let now: number;
  let obstacle: string | null;
  let restores: string[];
  let restoreFails: boolean;
  let retry: RestoreRetry;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tether-retry-'));
    records = new SessionRecords(dir);
    now = 1_000_000;
    obstacle = 'its directory /somewhere is gone';
    restores = [];
    restoreFails = false;
    const system = {
      hasSession: () => false,
      restoreSession: (id: string) => {
        restores.push(id);
        if (!restoreFails) return Promise.resolve();
        // What the real restore does when it fails: the record is marked again, with the reason.
        records.update(id, { ended: { reason: 'unrestorable', detail: 'tmux could not create it: boom', at: 'x' } });
        return Promise.reject(new Error('boom'));
      },
    };
    retry = new RestoreRetry({ records, system, obstacle: () => Promise.resolve(obstacle), now: () => now, log: quiet });
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('only checks a record whose reason stands; restores it once the reason is gone', async () => {
    records.write(unrestorable('mnt', 'its directory /somewhere is gone'));
    for (let i = 0; i < 3; i++) await retry.check();
    expect(restores).toEqual([]);
    expect(records.read('mnt')?.ended?.reason).toBe('unrestorable');
    obstacle = null;
    await retry.check();
    expect(restores).toEqual(['mnt']);
    expect(records.read('mnt')?.ended).toBeNull();
    expect(records.read('mnt')?.reservedSeq).toBe(42);
  });

  it('backs off, doubling, when the restore fails with nothing in the way', async () => {
    records.write(unrestorable('busy', 'tmux could not create it: boom'));
    obstacle = null;
    restoreFails = true;
    const attemptsAt: number[] = [];
    for (let t = 0; t <= 60; t++) {
      now = 1_000_000 + t * RESTORE_RETRY_INTERVAL_MS;
      const before = restores.length;
      await retry.check();
      if (restores.length > before) attemptsAt.push(t);
    }
    // Intervals of 1, 2, 4, 8, 16 rounds after the first attempt: no loop of failures.
    expect(attemptsAt).toEqual([0, 1, 3, 7, 15, 31]);
    expect(records.read('busy')?.ended?.reason).toBe('unrestorable');
  });
});
