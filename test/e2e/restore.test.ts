/**
 * Sessions that outlive their tmux server (real daemon, real tmux, the real pi with a fake
 * model): five sessions with descriptions, each in its own directory, each pi with a
 * conversation of two turns. The tmux server is SIGKILLed while the daemon runs and a client
 * streams; then again while the daemon is stopped (a reboot: the daemon starts after tmux is
 * gone). Every session must come back under its name, in its directory, with its description,
 * pi showing and continuing its conversation; clients get a snapshot and larger positions;
 * health counts no session lost. A deleted session and an agent that exited are not restored; a
 * session whose directory is gone is reported with the reason, not tried again while it stays
 * gone, and restored without a restart once it is back.
 */
import { mkdirSync, realpathSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { processExists } from '../../src/process.js';
import { SessionRecords } from '../../src/restore/records.js';
import type { TestDaemon } from '../helpers/daemon.js';
import { useDaemon, useInProcessDaemon } from '../helpers/daemon-fixture.js';
import { useFakePi } from '../helpers/fake-pi-fixture.js';
import { lastOfRole, messageText } from '../helpers/fake-model.js';
import { Mirror } from '../helpers/stream.js';
import { eventually } from '../helpers/tmux.js';

/** pi starts slowly on two shared cores: waits are generous, never sleeps. */
const PI_START_MS = 90_000;
const TURN_MS = 60_000;
const NAMES = ['r1', 'r2', 'r3', 'r4', 'r5'] as const;
/** The restore retry's interval for the daemon that waits for a directory to come back. */
const RETRY_MS = 200;

interface Item {
  id: string;
  description: string;
  state: string;
  cwd: string | null;
  agentState: string | null;
  reason?: string;
}
interface Health {
  sessionIds: string[];
  warnings: string[];
  restore: { enabled: boolean; restoring: string[]; unrestorable: { id: string; reason: string }[] };
}

describe('sessions restored after their tmux server is lost', () => {
  // Before the daemon, whose environment names them: they go after it.
  const fp = useFakePi((req) => ({ text: `You said: ${messageText(lastOfRole(req, 'user')).slice(0, 40)}` }));
  const fx = useDaemon(`[agent]\ndefault_session = "pi-main"\n`, { extraEnv: () => fp.pi.env, startTimeoutMs: 30_000 });
  let records: SessionRecords;
  const dirs = new Map<string, string>();
  const descriptions = new Map<string, string>();

  const json = fx.json;
  const list = async (): Promise<Item[]> => (await (await fx.d.get('/sessions')).json()) as Item[];
  const item = async (id: string) => (await list()).find((s) => s.id === id);
  const health = async (): Promise<Health> => (await (await fx.d.get('/health')).json()) as Health;
  const type = async (id: string, text: string) => {
    expect((await json('POST', `/sessions/${id}/input`, { type: 'keys', data: text })).status).toBe(204);
    expect((await json('POST', `/sessions/${id}/input`, { type: 'key', name: 'enter' })).status).toBe(204);
  };
  /** Types a prompt once the agent waits; resolves when the model got it and the agent waits again. */
  const turn = async (id: string, text: string) => {
    await eventually(
      async () => ['idle', 'awaiting-input'].includes((await item(id))?.agentState ?? ''),
      PI_START_MS,
      100,
      `${id}'s pi ready`,
    );
    const seen = fp.model.requests.length;
    await type(id, text);
    await eventually(
      () => fp.model.requests.slice(seen).some((r) => messageText(lastOfRole(r, 'user')) === text),
      TURN_MS,
      50,
      `the model asked "${text}"`,
    );
    await eventually(async () => (await item(id))?.agentState === 'awaiting-input', TURN_MS, 100, `${id} awaiting input after "${text}"`);
  };
  const serverPid = async () => Number((await fx.tmux.tmux('display-message', '-p', '#{pid}')).trim());
  /** The daemon's log lines about one session (its stderr carries every line at debug level). */
  const linesOf = (session: string) =>
    fx.d
      .stderr()
      .split('\n')
      .filter((l) => l.includes(`"session":"${session}"`))
      .join('\n');
  /** Awaits `p`; when it fails, the error says what `explain` finds (a rare failure leaves its evidence). */
  const explained = async <T>(p: Promise<T>, explain: () => string): Promise<T> => {
    try {
      return await p;
    } catch (err) {
      throw new Error(`${(err as Error).message}\n${explain()}`, { cause: err });
    }
  };
  const killServer = async () => {
    const pid = await serverPid();
    expect(pid).toBeGreaterThan(0);
    process.kill(pid, 'SIGKILL');
    await eventually(() => !processExists(pid), 15_000, 25, 'the tmux server gone');
    return pid;
  };
  /** Every named session runs again, in its directory, with its description, pi showing its conversation. */
  const expectBack = async (names: readonly string[], oldServer: number) => {
    await eventually(
      async () => {
        const items = await list();
        return names.every((n) => items.find((i) => i.id === n)?.state === 'running');
      },
      PI_START_MS,
      200,
      `${names.join(', ')} running again`,
    );
    expect(await serverPid()).not.toBe(oldServer);
    // The default session has no conversation or directory of the test's: running again is its part.
    for (const n of names.filter((x) => dirs.has(x))) {
      const it = (await item(n))!;
      expect(it.description).toBe(descriptions.get(n));
      expect(it.cwd).toBe(dirs.get(n));
      expect((await fx.tmux.tmux('display-message', '-p', '-t', `=${n}:`, '#{pane_current_path}')).trim()).toBe(dirs.get(n));
      // pi reopened the conversation: its earlier messages are on the screen again.
      await eventually(
        async () => {
          const screen = await fx.tmux.tmux('capture-pane', '-p', '-J', '-S', '-', '-t', `=${n}:`);
          return screen.includes(`first words of ${n}`) && screen.includes(`You said: second words of ${n}`);
        },
        PI_START_MS,
        200,
        `${n}'s pi showing its earlier messages`,
      );
    }
    await eventually(async () => (await health()).restore.restoring.length === 0, 30_000, 100, 'no session still restoring');
    const h = await health();
    expect(h.restore).toMatchObject({ enabled: true, restoring: [], unrestorable: [] });
    for (const n of names) expect(h.sessionIds).toContain(n);
  };

  beforeAll(async () => {
    records = new SessionRecords(fx.home.dataDir);
    for (const n of NAMES) {
      const dir = join(fx.home.dir, `work ${n} #{x} $(y)`);
      mkdirSync(dir);
      dirs.set(n, dir);
      descriptions.set(n, `task ${n}; #{pane_id} $(x)`);
      expect((await json('POST', '/sessions', { name: n, cwd: dir })).status).toBe(201);
      expect((await json('PATCH', `/sessions/${n}`, { description: descriptions.get(n) })).status).toBe(200);
    }
    await Promise.all(
      NAMES.map(async (n) => {
        await turn(n, `first words of ${n}`);
        await turn(n, `second words of ${n}`);
      }),
    );
    // Each record names pi's conversation file (the extension reported it).
    await eventually(() => NAMES.every((n) => records.read(n)?.sessionFile), 30_000, 50, "every record naming pi's conversation file");
  }, 600_000);

  it(
    'the tmux server SIGKILLed while a client streams: every session comes back, the client gets a snapshot and larger positions, the conversation goes on',
    { timeout: 300_000 },
    async () => {
      const streaming = new Mirror(fx.d.base, fx.d.token, 'r1').connect();
      const old = new Mirror(fx.d.base, fx.d.token, 'r2').connect();
      try {
        await eventually(() => streaming.kinds().includes('snapshot') && old.kinds().includes('snapshot'), 15_000, 25, 'both snapshots');
        const seqs = (m: Mirror) => m.received.flatMap((r) => (r.kind === 'snapshot' || r.kind === 'data' ? [r.seq] : []));
        const oldSeq = Math.max(...seqs(old));
        old.close();
        const before = streaming.received.length;
        const streamedSeq = Math.max(...seqs(streaming));

        const pid = await killServer();
        await expectBack([...NAMES, 'pi-main'], pid);

        // The client that kept streaming got a new snapshot above everything it had, showing the conversation.
        const after = streaming.received.slice(before);
        const snap = after.find((r) => r.kind === 'snapshot');
        expect(snap, `a snapshot after the restore; got ${after.map((r) => r.kind).join(',')}`).toBeDefined();
        expect((snap as { seq: number }).seq).toBeGreaterThan(streamedSeq);
        await eventually(
          async () => (await streaming.text()).includes('second words of r1'),
          30_000,
          50,
          'the restored screen on the client',
        );
        expect(streaming.errors()).toEqual([]);

        // A client resuming from its position before the loss gets a snapshot, above it.
        const resumed = new Mirror(fx.d.base, fx.d.token, 'r2', oldSeq).connect();
        try {
          await eventually(() => resumed.kinds().includes('snapshot'), 15_000, 25, 'the resumed client snapshot');
          const first = resumed.received.find((r) => r.kind === 'snapshot' || r.kind === 'data')!;
          expect(first.kind).toBe('snapshot');
          expect((first as { seq: number }).seq).toBeGreaterThan(oldSeq);
        } finally {
          resumed.close();
        }

        // The conversation goes on where it was: the model sees the earlier turns.
        const seen = fp.model.requests.length;
        await turn('r3', 'third words after the loss');
        const request = fp.model.requests.slice(seen).find((r) => messageText(lastOfRole(r, 'user')) === 'third words after the loss')!;
        const said = request.messages.map((m) => messageText(m)).join('\n');
        expect(said).toContain('first words of r3');
        expect(said).toContain('second words of r3');
      } finally {
        streaming.close();
      }
    },
  );

  it(
    'a reboot: the daemon stopped, the tmux server gone, the daemon started again: every session comes back',
    { timeout: 300_000 },
    async () => {
      expect(await fx.d.stop()).toBe(0);
      const pid = await killServer();
      await fx.startAgain(60_000);
      await expectBack([...NAMES, 'pi-main'], pid);
    },
  );

  it(
    'a deleted session and an agent that exited are not restored; one whose directory is gone is reported with the reason, not retried while it is gone',
    { timeout: 300_000 },
    async () => {
      expect((await fx.d.get('/sessions/r5', { method: 'DELETE' })).status).toBe(204);
      const piPid = Number((await fx.tmux.tmux('display-message', '-p', '-t', '=r4:', '#{pane_pid}')).trim());
      process.kill(piPid, 'SIGTERM');
      await eventually(async () => (await item('r4'))?.state === 'exited', 30_000, 100, 'r4 exited');
      await eventually(() => records.read('r4')?.ended?.reason === 'exited', 15_000, 50, "r4's record marked exited");
      rmSync(dirs.get('r3')!, { recursive: true, force: true });

      const pid = await killServer();
      await eventually(
        async () => {
          const items = await list();
          return ['r1', 'r2'].every((n) => items.find((i) => i.id === n)?.state === 'running') && items.some((i) => i.id === 'r3');
        },
        PI_START_MS,
        200,
        'r1 and r2 running again, r3 listed',
      );
      expect(await serverPid()).not.toBe(pid);
      const items = await list();
      expect(items.find((i) => i.id === 'r3')).toMatchObject({
        state: 'unrestorable',
        description: descriptions.get('r3'),
        reason: `its directory ${dirs.get('r3')} is gone`,
      });
      expect(items.map((i) => i.id)).not.toContain('r4');
      expect(items.map((i) => i.id)).not.toContain('r5');
      // The exited one ended with its server: nothing of it is kept to restore later.
      await explained(
        eventually(() => records.read('r4') === null, 15_000, 50, "r4's record forgotten"),
        () => `r4's record: ${JSON.stringify(records.read('r4'))}\nthe daemon on r4:\n${linesOf('r4')}`,
      );
      const sessionsInTmux = (await fx.tmux.tmux('list-sessions', '-F', '#{session_name}')).trim().split('\n');
      for (const gone of ['r3', 'r4', 'r5']) expect(sessionsInTmux).not.toContain(gone);
      const h = await health();
      expect(h.restore.unrestorable).toEqual([expect.objectContaining({ id: 'r3', reason: `its directory ${dirs.get('r3')} is gone` })]);
      expect(h.warnings.some((w) => w.includes('r3 could not be restored'))).toBe(true);

      // Not tried again while its directory is gone: not by this daemon, nor by the next one.
      const attempts = (log: string) =>
        log.split('\n').filter((l) => l.includes('"session":"r3"') && l.includes('could not be restored')).length;
      expect(attempts(fx.d.stderr())).toBe(1);
      expect(await fx.d.stop()).toBe(0);
      await fx.startAgain(60_000);
      expect((await item('r3'))?.state).toBe('unrestorable');
      expect(attempts(fx.d.stderr())).toBe(0);
      expect((await fx.tmux.tmux('list-sessions', '-F', '#{session_name}')).split('\n')).not.toContain('r3');

      // Deleting it forgets it.
      expect((await fx.d.get('/sessions/r3', { method: 'DELETE' })).status).toBe(204);
      expect((await list()).map((i) => i.id)).not.toContain('r3');
      expect((await health()).restore.unrestorable).toEqual([]);
      expect(records.read('r3')).toBeNull();
    },
  );
});

describe('sessions that are not restored: killed on purpose, or restoring turned off', () => {
  const ids = async (d: TestDaemon) => ((await (await d.get('/sessions')).json()) as Item[]).map((i) => i.id);
  const create = async (d: TestDaemon, name: string) =>
    expect(
      (await d.get('/sessions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name }) }))
        .status,
    ).toBe(201);

  describe('killed on purpose', () => {
    const fx = useDaemon(`[agent]\ncommand = "/bin/sh"\ndefault_session = "keep"\n`, { startTimeoutMs: 30_000 });

    it(
      'killed with tmux kill-session, while the daemon runs or while it is stopped: not restored, the record forgotten',
      { timeout: 120_000 },
      async () => {
        const { d, tmux } = fx;
        const records = new SessionRecords(fx.home.dataDir);
        await create(d, 'k1');
        await create(d, 'k2');
        await eventually(() => records.read('k1') !== null && records.read('k2') !== null, 15_000, 50, 'records of k1 and k2');
        await tmux.tmux('kill-session', '-t', '=k1');
        await eventually(
          async () => !(await ids(d)).includes('k1') && records.read('k1') === null,
          15_000,
          50,
          'k1 gone, its record forgotten',
        );
        expect(await d.stop()).toBe(0);
        await tmux.tmux('kill-session', '-t', '=k2');
        const again = await fx.startAgain(30_000);
        expect(await ids(again)).toEqual(['keep']);
        expect(records.read('k2')).toBeNull();
        expect((await tmux.tmux('list-sessions', '-F', '#{session_name}')).trim().split('\n')).toEqual(['keep']);
        expect(again.stderr()).toContain('killed while tether was not running');
        expect(await again.stop()).toBe(0);
        await tmux.tmux('kill-server').catch(() => undefined);
      },
    );
  });

  describe('restoring turned off', () => {
    const fx = useDaemon(`[agent]\ncommand = "/bin/sh"\ndefault_session = "off-main"\nrestore = false\n`, { startTimeoutMs: 30_000 });

    it('[agent] restore = false: a session lost with its server is gone, as before', { timeout: 120_000 }, async () => {
      const { d, tmux } = fx;
      const records = new SessionRecords(fx.home.dataDir);
      await create(d, 'off-1');
      await eventually(() => records.read('off-1') !== null, 15_000, 50, 'the record of off-1');
      const pid = Number((await tmux.tmux('display-message', '-p', '#{pid}')).trim());
      process.kill(pid, 'SIGKILL');
      await eventually(async () => (await ids(d)).length === 0, 30_000, 100, 'every session gone from the list');
      const h = (await (await d.get('/health')).json()) as Health;
      expect(h.restore).toEqual({ enabled: false, restoring: [], unrestorable: [] });
      expect(h.sessionIds).toEqual([]);
      await expect(tmux.tmux('list-sessions')).rejects.toThrow(/no server running|error connecting/);
      expect(records.read('off-1')).toBeNull();
    });
  });
});

describe('an unrestorable session whose reason goes away', () => {
  // In this process, so that the retry's interval can be shortened: what is checked is what each
  // round does (looks, and does not try while the directory is missing), not how long it waits.
  const fx = useInProcessDaemon(`[agent]\ncommand = "/bin/sh"\ndefault_session = "pi-main"\n`, { parts: { restoreRetryMs: RETRY_MS } });
  const records = () => new SessionRecords(fx.home.dataDir);
  const item = async (id: string) => ((await (await fx.d.get('/sessions')).json()) as Item[]).find((i) => i.id === id);
  const attempts = () =>
    fx.d
      .stderr()
      .split('\n')
      .filter((l) => l.includes('"session":"mnt"') && l.includes('could not be restored')).length;
  /** The retry's rounds that found mnt's obstacle standing (each logs it at debug level). */
  const rounds = () =>
    fx.d
      .stderr()
      .split('\n')
      .filter((l) => l.includes('"session":"mnt"') && l.includes('still cannot be restored')).length;

  it(
    'its directory missing (a disk not mounted yet): unrestorable; the directory made again: restored without a restart',
    { timeout: 120_000 },
    async () => {
      const dir = join(realpathSync(fx.home.dir), 'mnt #{x} $(y)');
      mkdirSync(dir);
      expect((await fx.json('POST', '/sessions', { name: 'mnt', cwd: dir })).status).toBe(201);
      expect((await fx.json('PATCH', '/sessions/mnt', { description: 'on the other disk' })).status).toBe(200);
      await eventually(() => records().read('mnt')?.cwd === dir, 15_000, 50, "mnt's record naming its directory");
      await eventually(() => records().read('mnt')?.description === 'on the other disk', 15_000, 50, "mnt's record with its description");

      rmSync(dir, { recursive: true, force: true });
      const pid = Number((await fx.tmux.tmux('display-message', '-p', '#{pid}')).trim());
      process.kill(pid, 'SIGKILL');
      await eventually(async () => (await item('mnt'))?.state === 'unrestorable', 60_000, 100, 'mnt unrestorable');
      expect((await item('mnt'))?.reason).toBe(`its directory ${dir} is gone`);
      await eventually(async () => (await item('pi-main'))?.state === 'running', 60_000, 100, 'pi-main restored');

      // Two rounds of the retry with the directory still missing: checked, not tried.
      const seen = rounds();
      await eventually(() => rounds() >= seen + 2, 30_000, 25, 'two rounds of the retry finding the directory missing');
      expect((await item('mnt'))?.state).toBe('unrestorable');
      expect(attempts()).toBe(1);

      mkdirSync(dir);
      await eventually(async () => (await item('mnt'))?.state === 'running', 30_000, 100, 'mnt running again');
      const back = (await item('mnt'))!;
      expect(back).toMatchObject({ cwd: dir, description: 'on the other disk' });
      expect((await fx.tmux.tmux('display-message', '-p', '-t', '=mnt:', '#{pane_current_path}')).trim()).toBe(dir);
      const h = (await (await fx.d.get('/health')).json()) as Health;
      expect(h.restore.unrestorable).toEqual([]);
      expect(records().read('mnt')?.ended).toBeNull();
      // It streams: typed input comes back.
      const m = fx.mirror('mnt');
      await eventually(() => m.received.some((r) => r.kind === 'snapshot'), 15_000, 25, 'a snapshot of mnt');
      m.stream.sendKeys('echo back-$((6*7))\r');
      await eventually(async () => (await m.screen()).text.includes('back-42'), 15_000, 25, 'the echo in mnt');
      expect(attempts()).toBe(1);
    },
  );
});
