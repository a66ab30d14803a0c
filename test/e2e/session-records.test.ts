/**
 * Each tether session's record, kept by the daemon in step with the session (real daemon, real
 * tmux): written when the session is up, with its directory, description, agent command, creation
 * time, reserved stream position and tmux server; updated when the description changes and when
 * the agent exits; forgotten on DELETE; none for a session that is not tether's.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { SessionRecords, type SessionRecord } from '../../src/restore/records.js';
import { eventually } from '../helpers/tmux.js';
import { useDaemon } from '../helpers/daemon-fixture.js';

describe('session records kept by the daemon', () => {
  const fx = useDaemon(`[agent]\ncommand = "/bin/sh"\ndefault_session = "pi-main"\n`);
  let records: SessionRecords;
  beforeAll(() => {
    records = new SessionRecords(fx.home.dataDir);
  });

  const json = (method: string, path: string, body?: unknown) =>
    fx.d.get(path, {
      method,
      headers: { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  /** Waits until `name`'s record satisfies `ok`; returns it. */
  const recordOf = async (name: string, ok: (r: SessionRecord | null) => boolean, what: string): Promise<SessionRecord | null> => {
    const seen: { last: SessionRecord | null } = { last: null };
    await eventually(() => ok((seen.last = records.read(name))), 15_000, 50, what);
    return seen.last;
  };

  it('a created session gets a record with what it takes to bring it back; a new description reaches it', async () => {
    const cwd = join(fx.home.dir, 'work dir #{x} $(y)');
    mkdirSync(cwd);
    expect((await json('POST', '/sessions', { name: 'rec-a', cwd })).status).toBe(201);
    const first = (await recordOf('rec-a', (r) => r !== null, 'the record of rec-a'))!;
    const [pid, start] = (await fx.tmux.tmux('display', '-p', '#{pid} #{start_time}')).trim().split(' ').map(Number);
    expect(first).toMatchObject({
      v: 1,
      name: 'rec-a',
      description: '',
      cwd,
      sessionFile: null,
      ended: null,
      server: { pid, startTime: start },
    });
    expect(first.command.join(' ')).toContain('/bin/sh');
    expect(first.createdAt).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(first.reservedSeq).toBeGreaterThan(0);

    const description = 'fix the login form; #{pane_id} $(x)\nline two';
    expect((await json('PATCH', '/sessions/rec-a', { description })).status).toBe(200);
    await recordOf('rec-a', (r) => r?.description === description, 'the new description in the record');
    // The default session has one too.
    await recordOf('pi-main', (r) => r !== null && r.ended === null, 'the record of pi-main');
  });

  it('an agent that exits marks its record ended (not to be restored); DELETE forgets the record', async () => {
    expect((await json('POST', '/sessions', { name: 'rec-b' })).status).toBe(201);
    await recordOf('rec-b', (r) => r !== null, 'the record of rec-b');
    expect((await json('POST', '/sessions/rec-b/input', { type: 'keys', data: 'exit 3\r' })).status).toBe(204);
    const ended = await recordOf('rec-b', (r) => r?.ended !== null && r?.ended !== undefined, 'rec-b marked as exited');
    expect(ended!.ended).toMatchObject({ reason: 'exited', detail: 'the agent exited with status 3' });

    expect((await fx.d.get('/sessions/rec-a', { method: 'DELETE' })).status).toBe(204);
    expect(records.read('rec-a')).toBeNull();
    expect((await fx.d.get('/sessions/rec-b', { method: 'DELETE' })).status).toBe(204);
    expect(records.read('rec-b')).toBeNull();
  });

  it("a session that is not tether's gets no record", async () => {
    await fx.tmux.tmux('new-session', '-d', '-s', 'by-hand', '/bin/sh');
    // Discovery sees it (it is listed by tmux, not by tether); nothing is written for it.
    await eventually(async () => (await fx.tmux.tmux('list-sessions', '-F', '#{session_name}')).includes('by-hand'), 15_000);
    expect((await json('PATCH', '/sessions/pi-main', { description: 'touch' })).status).toBe(200);
    await recordOf('pi-main', (r) => r?.description === 'touch', 'pi-main updated after by-hand appeared');
    expect(records.read('by-hand')).toBeNull();
    expect(records.list().broken).toEqual([]);
  });
});
