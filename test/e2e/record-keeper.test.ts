/**
 * The record keeper against real tmux (a private server) and real files: a record forgotten
 * while a write of it was reading tmux stays forgotten. The write reads the session from tmux
 * first (a listing, and the options it does not hold yet), so a session that ends meanwhile (its
 * server killed, its agent exited) must not get its record back when that write finishes, nor
 * one marked unrestorable meanwhile lose the mark.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log.js';
import { SessionRecords } from '../../src/restore/records.js';
import { RecordKeeper } from '../../src/restore/record-keeper.js';
import { recreateSession } from '../../src/restore/recreate.js';
import type { TmuxCli } from '../../src/tmux/exec.js';
import { SESSION_OPTIONS } from '../../src/tmux/layout.js';
import { createSession } from '../../src/tmux/sessions/session-create.js';
import { killSession, readUserOption } from '../../src/tmux/sessions/sessions.js';
import { privateTmux, type PrivateTmux } from '../helpers/tmux.js';

describe('the record keeper', () => {
  let tmux: PrivateTmux;
  let dataDir: string;
  beforeAll(async () => {
    tmux = await privateTmux();
    dataDir = mkdtempSync(join(tmpdir(), 'tether-keeper-'));
  });
  afterAll(async () => {
    await tmux?.cleanup();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const keeperOf = (records: SessionRecords) =>
    new RecordKeeper({
      records,
      cli: tmux.cli,
      agentCommand: () => ['/bin/cat'],
      sessionFile: () => null,
      reservedSeq: () => 0,
      now: Date.now,
      log: silentLogger,
    });

  it("writes a session's record, and one forgotten during a write is not brought back by it", async () => {
    const records = new SessionRecords(dataDir);
    const keeper = keeperOf(records);
    await createSession(tmux.cli, { name: 'kept', command: ['/bin/cat'], createdAt: new Date().toISOString() });
    await keeper.sync('kept');
    expect(records.read('kept')).toMatchObject({ name: 'kept', ended: null });

    // The session ends while a write is reading tmux: the write finishes after the forget.
    const writing = keeper.sync('kept');
    keeper.forget('kept');
    await writing;
    expect(records.read('kept')).toBeNull();

    // A later sync (the session linked again, say) writes it as before.
    await keeper.sync('kept');
    expect(records.read('kept')).toMatchObject({ name: 'kept' });
  });

  it('leaves a session marked unrestorable while a write of it was reading tmux as it was marked', async () => {
    const records = new SessionRecords(dataDir);
    const keeper = keeperOf(records);
    await createSession(tmux.cli, { name: 'lost', command: ['/bin/cat'], createdAt: new Date().toISOString() });
    await keeper.sync('lost');
    // Its server is lost while a write is reading tmux, and the restore cannot bring it back.
    const writing = keeper.sync('lost');
    const ended = { reason: 'unrestorable' as const, detail: 'its directory /mnt/x is gone', at: new Date().toISOString() };
    records.update('lost', { ended });
    await writing;
    expect(records.read('lost')?.ended).toEqual(ended);
    expect(records.unrestorable().map((r) => r.name)).toEqual(['lost']);
  });

  it('keeps the description of a restored session that is written the moment tmux made it', async () => {
    const records = new SessionRecords(dataDir);
    const keeper = keeperOf(records);
    const continueOption = JSON.stringify({ v: 1, at: '2026-03-01T00:00:00.000Z' });
    await createSession(tmux.cli, { name: 'back', command: ['/bin/cat'], createdAt: new Date().toISOString() });
    await keeper.sync('back');
    records.update('back', { description: 'on the other disk #{x} $(y)', reservedSeq: 4096, continue: continueOption });
    await killSession(tmux.cli, 'back');
    // The restore's own tmux, whose every invocation is followed by a write of the record before
    // the restore goes on: the worst moment for the session's link to come up and the keeper to
    // write what tmux holds.
    const cli = Object.create(tmux.cli) as TmuxCli;
    cli.runList = async (commands, opts) => {
      const out = await tmux.cli.runList(commands, opts);
      await keeper.sync('back');
      return out;
    };
    await recreateSession({ cli, records, agent: () => ({ command: ['/bin/cat'], env: {} }), now: Date.now, log: silentLogger }, 'back');
    expect(records.read('back')).toMatchObject({ description: 'on the other disk #{x} $(y)', reservedSeq: 4096, ended: null });
    expect(await readUserOption(tmux.cli, 'back', SESSION_OPTIONS.description)).toBe('on the other disk #{x} $(y)');
    expect(await readUserOption(tmux.cli, 'back', SESSION_OPTIONS.seq)).toBe('4096');
    expect(await readUserOption(tmux.cli, 'back', SESSION_OPTIONS.continue)).toBe(continueOption);
  });
});
