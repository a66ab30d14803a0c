/**
 * What a failed restore tells the user (src/restore/recreate.ts, docs/push.md): one attention
 * per reason, however often the retry clears the mark and fails the same way, while the reasons
 * alternate; a new reason is told; once the session ran again (its keeper rewrote the record),
 * the same reason is told anew. Real record files; the restores fail before tmux is asked (a
 * directory that is gone, an argument tmux cannot take), so no tmux is needed.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { attentionOf } from '../../src/actors/attention.js';
import type { Logger } from '../../src/log.js';
import { SessionRecords, type SessionRecord } from '../../src/restore/records.js';
import { MAX_TOLD_REASONS, recreateSession, type RestoreDeps } from '../../src/restore/recreate.js';
import type { TmuxCli } from '../../src/tmux/exec.js';

const quiet = { info: () => undefined, warn: () => undefined, debug: () => undefined, error: () => undefined } as unknown as Logger;

describe('a restore that keeps failing', () => {
  let dir: string;
  let cwd: string;
  let records: SessionRecords;
  let deps: RestoreDeps;

  /** What a session's record holds while it runs: no mark, nothing told. */
  const running = (): SessionRecord => ({
    v: 1,
    name: 'lost',
    description: 'port the parser',
    cwd,
    command: ['/bin/sh'],
    sessionFile: null,
    // tmux takes no NUL in an argument: with its directory there, the creation itself fails.
    createdAt: '2026-01-01T00:00:00.000Z\u0000',
    reservedSeq: 7,
    server: null,
    ended: null,
  });
  /** One restore attempt as the retry makes it (the mark cleared first); the reason told, or null. */
  const attempt = async (): Promise<string | null> => {
    records.update('lost', { ended: null });
    const err = await recreateSession(deps, 'lost').then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(Error);
    const attention = attentionOf(err);
    return attention?.kind === 'unrestorable' ? attention.reason : null;
  };
  const dirGone = () => `its directory ${cwd} is gone`;
  const tmuxRefuses = /^tmux could not create it: .*NUL/;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tether-told-'));
    cwd = join(dir, 'work');
    records = new SessionRecords(join(dir, 'data'));
    // Never asked: both failures come before a tmux command runs.
    const cli = {} as TmuxCli;
    deps = { cli, records, agent: () => ({ command: ['/bin/sh'], env: {} }), now: () => Date.parse('2026-02-01T00:00:00Z'), log: quiet };
    records.write(running());
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('tells each reason once while its condition comes and goes, and again after the session ran', async () => {
    // Its directory missing (a disk not mounted yet): told.
    expect(await attempt()).toBe(dirGone());
    expect(records.read('lost')?.ended).toMatchObject({ reason: 'unrestorable', detail: dirGone() });
    // The directory back, and tmux refusing the session: a new reason, told.
    mkdirSync(cwd);
    expect(await attempt()).toMatch(tmuxRefuses);
    // The same failures again and again, in any order: nothing more is told.
    for (let i = 0; i < 4; i++) {
      expect(await attempt()).toBeNull();
      rmSync(cwd, { recursive: true });
      expect(await attempt()).toBeNull();
      mkdirSync(cwd);
    }
    expect(records.read('lost')?.told).toEqual([dirGone(), expect.stringMatching(tmuxRefuses)]);
    // The record still says why (the latest reason), for health and the session list.
    expect(records.read('lost')?.ended).toMatchObject({ reason: 'unrestorable', detail: dirGone() });

    // It came back once (its keeper writes the record of a running session afresh): told again.
    records.write(running());
    expect(await attempt()).toMatch(tmuxRefuses);
    expect(await attempt()).toBeNull();
  });

  it('keeps at most MAX_TOLD_REASONS reasons, the newest', async () => {
    const reasons = Array.from({ length: MAX_TOLD_REASONS + 3 }, (_, i) => `reason ${i}`);
    for (const why of reasons) {
      deps = {
        ...deps,
        agent: () => {
          throw new Error(why);
        },
      };
      expect(await attempt()).toBe(why);
    }
    expect(records.read('lost')?.told).toEqual(reasons.slice(-MAX_TOLD_REASONS));
  });
});
