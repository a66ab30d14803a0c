/**
 * Push beyond awaiting-input, end to end: the built daemon, real tmux, a phone paired with
 * `tether pair` + `POST /pair`, and a real HTTP/2 TLS stand-in for APNs that verifies each
 * provider token. The agent is a shell, so a test makes it exit with a status or kills it with a
 * signal, as a failing or crashing agent would; a session record whose directory is gone makes a
 * session that cannot be restored at start-up. What the phone gets is checked: one alert per
 * occurrence, naming the session and what happened, none for a clean exit, none of a kind that
 * `[push] events` leaves out. "Exactly one" is shown by a later alert arriving behind it alone.
 * A restore that keeps failing while its retry's condition comes and goes (its directory made
 * and removed again, tmux refusing the session whenever the directory is there) alerts once
 * per reason, and again only after the session came back.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SessionRecords } from '../../src/restore/records.js';
import { fakeAgent } from '../helpers/agent-socket.js';
import { pushToml, startApnsStandIns, type ApnsStandIns } from '../../testkit/apns-server.js';
import { useDaemon, type DaemonFixture } from '../helpers/daemon-fixture.js';
import { pairDevice } from '../helpers/pair-device.js';
import { eventually } from '../helpers/tmux.js';

const PHONE = 'c3'.repeat(32);

interface Alert {
  title: string;
  body: string;
  sessionId: string;
}
interface Listed {
  id: string;
  state: string;
  exitStatus: number | null;
}

/**
 * A daemon whose agent is a shell, pushing to the sandbox APNs stand-in (its production URL is
 * the sandbox's too), with the phone paired; `events` is the `[push] events` line ('' for the default).
 */
function pushingDaemon(events: string, env: NodeJS.ProcessEnv = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'tether-push-attention-'));
  let apns: ApnsStandIns | null = null;
  beforeAll(async () => {
    apns = await startApnsStandIns(dir);
  });
  const fx = useDaemon(
    () =>
      ['[agent]', 'command = "/bin/sh"', 'default_session = "pi-main"', ...pushToml(apns!.sandbox.url, apns!.keyPath), events, ''].join(
        '\n',
      ),
    { extraEnv: () => ({ NODE_EXTRA_CA_CERTS: apns!.caFile, ...env }) },
  );
  // The phone is a debug build: sandbox.
  beforeAll(() => pairDevice(fx, 'phone', PHONE, 'sandbox'));
  afterAll(async () => {
    await apns?.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    fx,
    dir,
    /** What the phone got, in order. */
    alerts: (): Alert[] =>
      apns!.sandbox.requests.map((r) => {
        expect(r.jwtError).toBeNull();
        expect(r.deviceToken).toBe(PHONE);
        const p = r.payload as { aps: { alert: { title: string; body: string } }; sessionId: string };
        return { title: p.aps.alert.title, body: p.aps.alert.body, sessionId: p.sessionId };
      }),
  };
}

/** Stops the daemon, leaves a record of a session whose directory is gone, and starts it again. */
async function restartWithLostSession(fx: DaemonFixture, dir: string, name: string, description: string): Promise<string> {
  expect(await fx.d.stop()).toBe(0);
  const cwd = join(dir, `gone-${name}`);
  new SessionRecords(fx.home.dataDir).write({
    v: 1,
    name,
    description,
    cwd,
    command: ['/bin/sh'],
    sessionFile: null,
    createdAt: new Date().toISOString(),
    reservedSeq: 0,
    server: null,
    ended: null,
  });
  await fx.startAgain(60_000);
  return `its directory ${cwd} is gone`;
}

function helpers(fx: DaemonFixture) {
  const listed = async (id: string) => ((await (await fx.d.get('/sessions')).json()) as Listed[]).find((s) => s.id === id);
  const input = async (id: string, line: string) => {
    expect((await fx.json('POST', `/sessions/${id}/input`, { type: 'keys', data: line })).status).toBe(204);
    expect((await fx.json('POST', `/sessions/${id}/input`, { type: 'key', name: 'enter' })).status).toBe(204);
  };
  const running = async (id: string) => eventually(async () => (await listed(id))?.state === 'running', 15_000, 50, `${id} running`);
  const respawn = async (id: string) => {
    expect((await fx.json('POST', `/sessions/${id}/respawn`)).status).toBe(200);
    await running(id);
  };
  const panePid = async (id: string) => Number((await fx.tmux.tmux('display-message', '-p', '-t', `=${id}:`, '#{pane_pid}')).trim());
  return { listed, input, running, respawn, panePid };
}

describe('push when an agent exits, crashes, or a session cannot be restored', () => {
  const { fx, dir, alerts } = pushingDaemon('');
  const { listed, input, running, respawn, panePid } = helpers(fx);
  const count = (n: number, what: string) => eventually(() => alerts().length === n, 20_000, 50, `${n} alerts (${what})`);

  it(
    'a session whose directory is gone at start-up: one alert with its name, description and the reason; a later start does not repeat it',
    { timeout: 240_000 },
    async () => {
      const reason = await restartWithLostSession(fx, dir, 'lost', 'port the parser');
      await count(1, 'the unrestorable session').catch((err: Error) => {
        throw new Error(`${err.message}\n${fx.d.stderr()}`);
      });
      expect(alerts()[0]).toEqual({
        title: 'A session could not be restored',
        body: `lost: port the parser — ${reason}`,
        sessionId: 'lost',
      });

      // The next start finds the record marked: nothing is retried and nothing is sent again.
      expect(await fx.d.stop()).toBe(0);
      await fx.startAgain(60_000);
      await running('pi-main');
      await input('pi-main', 'exit 3');
      await count(2, 'the exit after the restart');
      expect(alerts().map((a) => a.title)).toEqual(['A session could not be restored', 'pi exited with status 3']);
      expect(alerts()[1]).toMatchObject({ body: 'pi-main', sessionId: 'pi-main' });
    },
  );

  it(
    'exit 3 alerts once with the status, exit 0 not at all, SIGKILL as a crash, and each new exit again',
    { timeout: 120_000 },
    async () => {
      const before = alerts().length;
      const mine = () => alerts().slice(before);
      expect((await fx.json('POST', '/sessions', { name: 'worker' })).status).toBe(201);
      expect((await fx.json('PATCH', '/sessions/worker', { description: 'fix the flaky test' })).status).toBe(200);
      await running('worker');

      await input('worker', 'exit 3');
      await eventually(() => mine().length === 1, 20_000, 50, 'the alert of exit 3');
      expect(mine()[0]).toEqual({ title: 'pi exited with status 3', body: 'worker: fix the flaky test', sessionId: 'worker' });

      // A clean exit: the session says so, the phone gets nothing.
      await respawn('worker');
      await input('worker', 'exit 0');
      await eventually(async () => (await listed('worker'))?.exitStatus === 0, 15_000, 50, 'worker exited with 0');

      // Killed by a signal: told as a crash. Nothing came between: exit 3 was told once, exit 0 never.
      await respawn('worker');
      process.kill(await panePid('worker'), 'SIGKILL');
      await eventually(() => mine().length === 2, 20_000, 50, 'the alert of the kill');
      expect(mine().map((a) => a.title)).toEqual(['pi exited with status 3', 'pi crashed: killed by SIGKILL']);
      expect(mine()[1]).toMatchObject({ body: 'worker: fix the flaky test', sessionId: 'worker' });

      // Respawned and exiting the same way again: a new occurrence, a new alert (and only one).
      await respawn('worker');
      await input('worker', 'exit 3');
      await eventually(() => mine().length === 3, 20_000, 50, 'the alert of the second exit 3');
      await respawn('worker');
      process.kill(await panePid('worker'), 'SIGKILL');
      await eventually(() => mine().length === 4, 20_000, 50, 'the alert of the second kill');
      expect(mine().map((a) => a.title)).toEqual([
        'pi exited with status 3',
        'pi crashed: killed by SIGKILL',
        'pi exited with status 3',
        'pi crashed: killed by SIGKILL',
      ]);
    },
  );
});

describe('[push] events leaves kinds out', () => {
  const { fx, dir, alerts } = pushingDaemon('events = ["awaiting-input"]');
  const { listed, input, running } = helpers(fx);

  it('an exit and an unrestorable session send nothing; awaiting-input, which is named, still does', { timeout: 180_000 }, async () => {
    await restartWithLostSession(fx, dir, 'lost', '');
    await eventually(
      async () => ((await (await fx.d.get('/sessions')).json()) as Listed[]).some((s) => s.id === 'lost' && s.state === 'unrestorable'),
      15_000,
      50,
      'lost listed as unrestorable',
    );
    await running('pi-main');
    await input('pi-main', 'exit 3');
    await eventually(async () => (await listed('pi-main'))?.exitStatus === 3, 15_000, 50, 'pi-main exited with 3');

    // A later alert of a kind that is named arrives alone.
    expect((await fx.json('POST', '/sessions', { name: 'waiting' })).status).toBe(201);
    await running('waiting');
    const pane = (await fx.tmux.tmux('display-message', '-p', '-t', '=waiting:', '#{pane_id}')).trim();
    const agent = fakeAgent(fx.home.dataDir, pane, fx.tmux.socket);
    try {
      expect((await agent.welcomed).type).toBe('welcome');
      agent.event('agent.start');
      agent.event('agent.end', { idle: true });
      await eventually(() => alerts().length === 1, 20_000, 50, 'the awaiting-input alert');
      expect(alerts()).toEqual([{ title: 'pi is waiting for you', body: 'waiting', sessionId: 'waiting' }]);
    } finally {
      agent.close();
    }
  });
});

describe('a restore that keeps failing while its reason comes and goes', () => {
  // The retry checks every 200 ms instead of 5 s (a test-only knob, docs/testing.md "Time"): what
  // is checked is what each round and each failure does, not how long the rounds are apart.
  const { fx, dir, alerts } = pushingDaemon('', { TETHER_TEST_RESTORE_RETRY_MS: '200' });
  const { listed, input, running } = helpers(fx);

  it(
    'one alert per reason however often the retry fails; once the session came back, its next failure alerts again',
    { timeout: 300_000 },
    async () => {
      const records = new SessionRecords(fx.home.dataDir);
      const cwd = join(dir, 'flaky-mount');
      const dirGone = `its directory ${cwd} is gone`;
      expect(await fx.d.stop()).toBe(0);
      records.write({
        v: 1,
        name: 'flaky',
        description: 'on the other disk',
        cwd,
        command: ['/bin/sh'],
        sessionFile: null,
        // tmux takes no NUL in an argument: whenever its directory is there, making the session fails.
        createdAt: `${new Date().toISOString()}\u0000`,
        reservedSeq: 0,
        server: null,
        ended: null,
      });
      await fx.startAgain(60_000);
      const failures = () =>
        fx.d
          .stderr()
          .split('\n')
          .filter((l) => l.includes('"session":"flaky"') && l.includes('could not be restored')).length;
      /** The retry's rounds that found flaky's directory missing (each says so at debug level). */
      const goneRounds = () =>
        fx.d
          .stderr()
          .split('\n')
          .filter((l) => l.includes('"session":"flaky"') && l.includes('still cannot be restored')).length;
      const told = () => alerts().filter((a) => a.sessionId === 'flaky');
      await eventually(() => told().length === 1, 20_000, 50, 'the alert of the missing directory');
      expect(told()[0]).toEqual({
        title: 'A session could not be restored',
        body: `flaky: on the other disk — ${dirGone}`,
        sessionId: 'flaky',
      });

      // The directory comes and goes; each time it is there the retry tries, and tmux refuses.
      for (let round = 1; round <= 2; round++) {
        const before = failures();
        mkdirSync(cwd);
        await eventually(() => failures() > before, 60_000, 100, `attempt ${round} with the directory there`);
        rmSync(cwd, { recursive: true });
        const checked = goneRounds();
        await eventually(() => goneRounds() > checked, 60_000, 50, 'a retry round finding the directory gone');
      }
      expect(failures()).toBe(3);
      expect(told().map((a) => a.body)).toEqual([
        `flaky: on the other disk — ${dirGone}`,
        expect.stringMatching(/^flaky: on the other disk — tmux could not create it: .*NUL/),
      ]);

      // Made right (the directory still gone, so no attempt meets the edit half way) and the
      // directory back: restored, and its record, kept afresh, holds no reason told.
      const record = records.read('flaky')!;
      records.write({ ...record, createdAt: new Date().toISOString() });
      mkdirSync(cwd);
      await eventually(async () => (await listed('flaky'))?.state === 'running', 120_000, 200, 'flaky restored');
      await eventually(() => records.read('flaky')?.told === undefined, 15_000, 50, "flaky's record without told reasons");

      // Lost again with its directory gone: a reason told before, but the session came back since.
      rmSync(cwd, { recursive: true });
      const pid = Number((await fx.tmux.tmux('display-message', '-p', '#{pid}')).trim());
      process.kill(pid, 'SIGKILL');
      await eventually(() => told().length === 3, 60_000, 100, 'the alert of the directory gone again');
      expect(told()[2]!.body).toBe(`flaky: on the other disk — ${dirGone}`);

      // Nothing else was sent: the next alert arrives right behind.
      await running('pi-main');
      await input('pi-main', 'exit 3');
      await eventually(() => alerts().length === 4, 20_000, 50, 'the alert of the exit');
      expect(alerts().map((a) => `${a.sessionId}: ${a.title}`)).toEqual([
        'flaky: A session could not be restored',
        'flaky: A session could not be restored',
        'flaky: A session could not be restored',
        'pi-main: pi exited with status 3',
      ]);
    },
  );
});
