/**
 * The disk buffer as a user meets it: a real daemon on a private tmux, real output, real files
 * in `{data_dir}/buffers/`. The file holds exactly the bytes a connected client got; the caps
 * stop writing without touching what is there; the watchdog turns writing off (health degraded)
 * when the disk is nearly full (an injected free-space source, and a real small tmpfs where the
 * machine lets the test mount one) and back on when space returns; idle buffers are cleaned up
 * at start-up; DELETE removes the buffer unless asked to keep it.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { bufferPaths } from '../../src/actors/disk-buffer.actor.js';
import { useDaemon, useInProcessDaemon, type DaemonFixture } from '../helpers/daemon-fixture.js';
import type { DaemonParts, InProcessTestDaemon } from '../helpers/in-process-daemon.js';
import type { Mirror } from '../helpers/stream.js';
import { eventually } from '../helpers/tmux.js';

const MIB = 1024 * 1024;
const DAY = 86_400_000;

interface Health {
  status: string;
  bufferMb: number;
  diskFreeGb: number;
  watchdog: { state: string; reason: string | null };
  warnings: string[];
}

/** Whether this machine lets the test mount a small tmpfs (root in a VM does; many containers do not). */
function tryMount(dir: string, size: string): string | null {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size},mode=0700`, 'tmpfs', dir], { stdio: 'pipe' });
    return null;
  } catch (err) {
    return (err as { stderr?: Buffer }).stderr?.toString().trim() || (err as Error).message;
  }
}
const probeDir = mkdtempSync(join(tmpdir(), 'tether-mount-probe-'));
const mountRefusal = tryMount(probeDir, '1m');
if (mountRefusal === null) execFileSync('umount', [probeDir]);
rmSync(probeDir, { recursive: true, force: true });

const SH = '[agent]\ncommand = "/bin/sh"\n';
type Fixture = DaemonFixture<InProcessTestDaemon, [parts?: DaemonParts]>;

/** What the tests below do with their daemon: ask its health, watch a session, type into it, find its files. */
function helpersOf(fx: Fixture) {
  const health = async () => (await (await fx.d.get('/health')).json()) as Health;
  /** A client on the session that has its snapshot: the link is live, so typed output is streamed. */
  const watch = async (session = 'pi-main'): Promise<Mirror> => {
    const m = fx.mirror(session);
    await eventually(() => m.kinds().includes('snapshot'), 15_000);
    return m;
  };
  const dataDirOf = () => fx.home.env.TETHER_DATA_DIR!;
  const logFile = (id = 'pi-main') => bufferPaths(join(dataDirOf(), 'buffers'), id).log;
  const type = (line: string, session = 'pi-main') => fx.tmux.tmux('send-keys', '-t', session, '-l', `${line}\r`);
  return { health, watch, dataDirOf, logFile, type };
}
const size = (path: string) => (existsSync(path) ? statSync(path).size : 0);
/** Waits until a file stops growing (the buffer writes every 100 ms). */
const settled = async (path: string) => {
  let last = -1;
  await eventually(
    () => {
      const now = size(path);
      const same = now === last;
      last = now;
      return same && now > 0;
    },
    15_000,
    300,
  );
};

describe('disk buffer', () => {
  describe('what a client received', () => {
    const fx = useInProcessDaemon(SH);
    const { watch, logFile, dataDirOf, type } = helpersOf(fx);

    it('holds exactly the bytes a connected client received, for a mixed workload', async () => {
      const mirror = await watch();
      await type(
        `printf '\\033[1;31mred\\033[0m caf\\303\\251 \\342\\234\\223 tabs\\there\\n'; seq 1 3000; printf '\\033[2J\\033[H'; printf 'done-%s\\n' mixed`,
      );
      await eventually(async () => (await mirror.text()).includes('done-mixed'), 15_000);
      await settled(logFile());

      const received = Buffer.concat(mirror.bytesSinceSnapshot.slice(1));
      const firstData = mirror.received.find((r) => r.kind === 'data') as { seq: number; bytes: number };
      const from = firstData.seq - firstData.bytes;
      const file = readFileSync(logFile());
      // The index maps a stream position to the file offset where that byte is.
      const index = readFileSync(bufferPaths(join(dataDirOf(), 'buffers'), 'pi-main').idx, 'utf8')
        .trim()
        .split('\n')
        .map((l) => l.split(' ').map(Number) as [number, number]);
      const [offset, seq] = index.filter(([, s]) => s <= from).at(-1)!;
      const fromFile = file.subarray(offset + (from - seq));
      expect(fromFile.length).toBe(received.length);
      expect(fromFile.equals(received)).toBe(true);
      expect(received.toString('utf8')).toContain('café ✓');
      expect((statSync(logFile()).mode & 0o777).toString(8)).toBe('600');
    });
  });

  describe('the caps', () => {
    const fx = useInProcessDaemon(`${SH}[buffer]\nsession_cap_mb = 1\nglobal_cap_mb = 2\nwatchdog_interval_s = 1\n`);
    const { health, watch, logFile, dataDirOf, type } = helpersOf(fx);

    it('stops a session file at its cap without touching it; over the global cap health goes degraded', async () => {
      await watch();
      await eventually(async () => (await health()).watchdog.state === 'writing', 15_000);
      await type('head -c 900000 /dev/zero | tr "\\0" "a" | fold -w 100; echo first-done');
      await eventually(() => size(logFile()) > 900_000, 20_000);
      const head = readFileSync(logFile()).subarray(0, 800_000);
      await type('head -c 900000 /dev/zero | tr "\\0" "b" | fold -w 100; echo second-done');
      await eventually(() => size(logFile()) === MIB, 20_000);
      await settled(logFile());
      expect(size(logFile())).toBe(MIB);
      const mtime = statSync(logFile()).mtimeMs;
      await type('echo more-after-the-cap');
      await new Promise((r) => setTimeout(r, 600));
      expect(size(logFile())).toBe(MIB);
      expect(statSync(logFile()).mtimeMs).toBe(mtime);
      expect(readFileSync(logFile()).subarray(0, 800_000).equals(head)).toBe(true);
      let h = await health();
      expect(h.status).toBe('ok');
      expect(h.warnings.join('\n')).toMatch(/pi-main: its disk buffer reached session_cap_mb/);

      // A kept buffer of a deleted session takes the total past 2 MB: writing is off for everyone.
      writeFileSync(join(dataDirOf(), 'buffers', 'kept.log'), Buffer.alloc(1200 * 1024, 0x2e));
      await eventually(async () => (await health()).status === 'degraded', 15_000);
      h = await health();
      expect(h.watchdog).toMatchObject({ state: 'off' });
      expect(h.watchdog.reason).toMatch(/global_cap_mb/);
      expect(h.bufferMb).toBeGreaterThan(2);
    });
  });

  describe('low free space, injected', () => {
    let free = 50 * 1024 ** 3;
    const fx = useInProcessDaemon(`${SH}[buffer]\nmin_free_gb = 1\nwatchdog_interval_s = 1\n`, {
      parts: { freeBytes: () => Promise.resolve(free) },
    });
    const { health, watch, logFile, type } = helpersOf(fx);

    it('switches writing off when free space is low (injected), keeps streaming, and resumes when space returns', async () => {
      const mirror = await watch();
      await type('echo before-full');
      await eventually(() => readFileSync(logFile(), 'latin1').includes('before-full'), 15_000);

      free = 0.5 * 1024 ** 3;
      await eventually(async () => (await health()).status === 'degraded', 15_000);
      const h = await health();
      expect(h.watchdog.state).toBe('off');
      expect(h.watchdog.reason).toMatch(/min_free_gb/);
      expect(h.diskFreeGb).toBe(0.5);
      const sizeOff = size(logFile());
      await type('echo while-full');
      await eventually(async () => (await mirror.text()).includes('while-full'), 15_000);
      await new Promise((r) => setTimeout(r, 500));
      expect(size(logFile())).toBe(sizeOff);

      // Just above the minimum is not enough (no flapping); a tenth above it is.
      free = 1.05 * 1024 ** 3;
      await new Promise((r) => setTimeout(r, 1500));
      expect((await health()).status).toBe('degraded');
      free = 2 * 1024 ** 3;
      await eventually(async () => (await health()).status === 'ok', 15_000);
      await type('echo after-space-came-back');
      await eventually(() => readFileSync(logFile(), 'latin1').includes('after-space-came-back'), 15_000);
      expect(readFileSync(logFile(), 'latin1')).not.toContain('while-full\r\nwhile-full');
    });

    it('a buffer file removed by hand while output keeps coming is made again, with the output after it', async () => {
      const mirror = await watch();
      // Output every 200 ms: the buffer keeps its file open between batches.
      await type('i=0; while [ $i -lt 30 ]; do i=$((i+1)); echo tick-$i; sleep 0.2; done; echo ticks-done');
      await eventually(() => existsSync(logFile()) && readFileSync(logFile(), 'latin1').includes('tick-3'), 15_000);
      rmSync(logFile());
      // The watchdog (every second here) finds it gone; the next batch makes the file again.
      await eventually(
        () => existsSync(logFile()) && /tick-\d+/.test(readFileSync(logFile(), 'latin1')),
        15_000,
        100,
        'the file made again',
      );
      // The loop's last line (not the typed command's echo, which holds the same words).
      const done = /^ticks-done\r?$/m;
      await eventually(async () => done.test(await mirror.text()), 40_000, 100, 'the last line on the client');
      await eventually(() => done.test(readFileSync(logFile(), 'latin1')), 15_000, 100, 'the last line in the new file');
      expect(readFileSync(logFile(), 'latin1')).not.toContain('tick-1\r\n');
    });
  });

  describe.skipIf(mountRefusal !== null)('a real full disk', () => {
    let mnt = '';
    // The data dir on a small tmpfs, mounted before the daemon starts and unmounted after it stopped.
    const fx = useInProcessDaemon(`${SH}[buffer]\nmin_free_gb = 0.003\nwatchdog_interval_s = 1\n`, {
      before: () => {
        mnt = mkdtempSync(join(tmpdir(), 'tether-tmpfs-'));
        const refusal = tryMount(mnt, '8m');
        if (refusal !== null) throw new Error(`a tmpfs could not be mounted on ${mnt}: ${refusal}`);
        mkdirSync(join(mnt, 'data'));
      },
      extraEnv: () => ({ TETHER_DATA_DIR: join(mnt, 'data') }),
      after: () => {
        // The daemon closes its log file on stop(); a lazy unmount is the fallback if anything
        // else still holds the file system.
        try {
          execFileSync('umount', [mnt], { stdio: 'pipe' });
        } catch {
          execFileSync('umount', ['-l', mnt], { stdio: 'pipe' });
        }
        rmSync(mnt, { recursive: true, force: true });
      },
    });
    const { health, watch, logFile, type } = helpersOf(fx);

    it(`on a real full disk (a small tmpfs) writing goes off, streaming goes on, and it resumes once space is freed${mountRefusal ? ` [skipped: this machine cannot mount a tmpfs: ${mountRefusal}]` : ''}`, async () => {
      const mirror = await watch();
      await type('echo on-tmpfs');
      await eventually(() => size(logFile()) > 0, 15_000);

      // Fill the file system to within 1 MB of full: below the 3 MB minimum.
      const filler = join(mnt, 'filler');
      const free = () => Number(execFileSync('df', ['--output=avail', '-B1', mnt]).toString().trim().split('\n')[1]);
      writeFileSync(filler, Buffer.alloc(free() - 1024 * 1024));
      await eventually(async () => (await health()).status === 'degraded', 15_000);
      expect((await health()).watchdog.reason).toMatch(/min_free_gb/);
      await type('echo still-streaming');
      await eventually(async () => (await mirror.text()).includes('still-streaming'), 15_000);

      rmSync(filler);
      await eventually(async () => (await health()).status === 'ok', 15_000);
      await type('echo written-again');
      await eventually(() => readFileSync(logFile(), 'latin1').includes('written-again'), 15_000);
    });
  });

  describe('the idle cleanup at start-up', () => {
    // Buffer files of every age, and two tmux sessions (one ended), before the daemon starts.
    const fx = useInProcessDaemon(SH, {
      prepare: async ({ tmux: t, home }) => {
        const buffers = join(home.dataDir, 'buffers');
        mkdirSync(buffers, { recursive: true });
        const old = (Date.now() - 40 * DAY) / 1000;
        for (const id of ['old-orphan', 'fresh-orphan', 'ended-one', 'alive-one'])
          writeFileSync(join(buffers, `${id}.log`), `${id} output\n`);
        utimesSync(join(buffers, 'old-orphan.log'), old, old);
        // Two tmux sessions whose activity is now; the clock below is moved 40 days ahead for them.
        for (const id of ['ended-one', 'alive-one']) {
          await t.tmux('new-session', '-d', '-s', id, '/bin/sh');
          await t.tmux('set-option', '-t', id, '@created', new Date().toISOString());
        }
        await t.tmux('set-option', '-w', '-t', 'ended-one', 'remain-on-exit', 'on');
        await t.tmux('respawn-pane', '-k', '-t', 'ended-one', 'true');
        await eventually(async () => (await t.tmux('display', '-p', '-t', 'ended-one', '#{pane_dead}')).trim() === '1', 15_000);
      },
    });
    const { dataDirOf } = helpersOf(fx);

    it('deletes idle buffers at start-up (and an ended idle session), keeps recent ones', async () => {
      const buffers = join(dataDirOf(), 'buffers');
      // First start with the real clock: only the orphan that is really old goes.
      expect(existsSync(join(buffers, 'old-orphan.log'))).toBe(false);
      for (const id of ['fresh-orphan', 'ended-one', 'alive-one']) expect(existsSync(join(buffers, `${id}.log`)), id).toBe(true);
      await fx.d.stop();

      // 40 days later (an injected clock): every idle buffer goes; of the sessions, only the ended one.
      await fx.startAgain({ bufferClock: () => Date.now() + 40 * DAY });
      for (const id of ['fresh-orphan', 'ended-one', 'alive-one']) expect(existsSync(join(buffers, `${id}.log`)), id).toBe(false);
      const sessions = (await fx.tmux.tmux('list-sessions', '-F', '#{session_name}')).trim().split('\n');
      expect(sessions).toContain('alive-one');
      expect(sessions).not.toContain('ended-one');
    });
  });

  describe('DELETE and a restart', () => {
    const fx = useInProcessDaemon(SH);
    const { watch, logFile, dataDirOf, type } = helpersOf(fx);

    it('DELETE removes the buffer; with keepBuffer=true it stays; the file goes on after a restart', async () => {
      const { base, token } = fx.d;
      const auth = { authorization: `Bearer ${token}` };
      for (const name of ['gone', 'kept']) {
        expect(
          (
            await fetch(`${base}/sessions`, {
              method: 'POST',
              headers: { ...auth, 'content-type': 'application/json' },
              body: JSON.stringify({ name }),
            })
          ).status,
        ).toBe(201);
        await watch(name);
        await type(`echo output-of-${name}`, name);
        await eventually(() => size(logFile(name)) > 0, 15_000);
      }
      expect((await fetch(`${base}/sessions/gone`, { method: 'DELETE', headers: auth })).status).toBe(204);
      expect((await fetch(`${base}/sessions/kept?keepBuffer=true`, { method: 'DELETE', headers: auth })).status).toBe(204);
      expect(existsSync(logFile('gone'))).toBe(false);
      expect(existsSync(logFile('kept'))).toBe(true);

      // A restart: the main session's file is appended to, never truncated, and a new index line
      // starts above every position of the earlier run.
      await watch();
      await type('echo before-restart');
      await eventually(() => readFileSync(logFile(), 'latin1').includes('before-restart'), 15_000);
      await settled(logFile());
      const before = readFileSync(logFile());
      const idx = bufferPaths(join(dataDirOf(), 'buffers'), 'pi-main').idx;
      const lastSeqBefore = Math.max(
        ...readFileSync(idx, 'utf8')
          .trim()
          .split('\n')
          .map((l) => Number(l.split(' ')[1])),
      );
      await fx.d.stop();
      await fx.startAgain();
      await watch();
      await type('echo after-restart');
      await eventually(() => readFileSync(logFile(), 'latin1').includes('after-restart'), 15_000);
      const after = readFileSync(logFile());
      expect(after.subarray(0, before.length).equals(before)).toBe(true);
      const lines = readFileSync(idx, 'utf8')
        .trim()
        .split('\n')
        .map((l) => l.split(' ').map(Number) as [number, number]);
      const [offset, seq] = lines.at(-1)!;
      expect(offset).toBe(before.length);
      expect(seq).toBeGreaterThan(lastSeqBefore + before.length);
    });
  });

  it('keeps every buffer path inside the buffers dir, whatever the id', () => {
    for (const id of ['../x', 'a/b', '', '..', 'a\u0000b', 'x'.repeat(65), 'a;b', '$(id)']) {
      expect(() => bufferPaths('/data/buffers', id), JSON.stringify(id)).toThrow();
    }
    expect(bufferPaths('/data/buffers', 'pi-main').log).toBe('/data/buffers/pi-main.log');
  });
});

describe('disk buffer: the global cap across sessions writing at once', () => {
  // Each session could take 2 MiB; together they get 3 MiB, and three floods want about 4.6.
  const fx = useDaemon(
    `[agent]\ncommand = "/bin/sh"\ndefault_session = "flood-a"\n[buffer]\nsession_cap_mb = 2\nglobal_cap_mb = 3\nwatchdog_interval_s = 1\n`,
  );
  const SESSIONS = ['flood-a', 'flood-b', 'flood-c'];
  const CAP = 3 * MIB;

  it('never holds more than global_cap_mb on disk, and ends exactly at it', async () => {
    for (const id of SESSIONS.slice(1)) expect((await fx.json('POST', '/sessions', { name: id })).status).toBe(201);
    const mirrors = SESSIONS.map((id) => fx.mirror(id));
    await eventually(() => mirrors.every((m) => m.kinds().includes('snapshot')), 20_000, 25, 'a snapshot on every session');
    const everyScreenShows = async (text: string) =>
      (await Promise.all(SESSIONS.map((id) => fx.tmux.capture(id)))).every((t) => t.includes(text));
    const files = SESSIONS.map((id) => bufferPaths(join(fx.home.dataDir, 'buffers'), id).log);
    const onDisk = () => files.reduce((sum, f) => sum + (existsSync(f) ? statSync(f).size : 0), 0);
    // Sampled all along the floods: every look at the files, not only the last one, is under the cap.
    let most = 0;
    const sampler = setInterval(() => (most = Math.max(most, onDisk())), 5);
    try {
      // The shell prints `flood-2-done` only after the flood; the typed line shows `$((1+1))`.
      for (const m of mirrors) m.stream.sendKeys(`head -c 1500000 /dev/zero | tr '\\0' x | fold -w 100; echo flood-$((1+1))-done\r`);
      await eventually(
        async () => {
          const state = ((await (await fx.d.get('/health')).json()) as Health).watchdog.state;
          const bytes = onDisk();
          if (state !== 'off' || bytes !== CAP) throw new Error(`writing is ${state}, ${bytes} bytes on disk (the most seen: ${most})`);
          return true;
        },
        90_000,
        50,
        `writing off with the files exactly at the cap (${CAP} bytes)`,
      );
      await eventually(async () => everyScreenShows('flood-2-done'), 90_000, 200, 'every flood to end');
      // Off stays off, and the files stay as they are, while the sessions go on talking.
      for (const m of mirrors) m.stream.sendKeys('echo after-$((2+2))-the-cap\r');
      await eventually(async () => everyScreenShows('after-4-the-cap'), 20_000, 100, 'the echo on every session');
    } finally {
      clearInterval(sampler);
    }
    most = Math.max(most, onDisk());
    expect(most, 'the most the buffers ever held together').toBeLessThanOrEqual(CAP);
    expect(onDisk(), 'what the buffers hold at the end').toBe(CAP);
    const h = (await (await fx.d.get('/health')).json()) as Health;
    expect(h.status).toBe('degraded');
    expect(h.watchdog.reason).toMatch(/global_cap_mb \(3 MB\)/);
    // Every session wrote some of its flood: the cap is shared, not won by one.
    for (const f of files) expect(statSync(f).size, f).toBeGreaterThan(0);
  }, 240_000);
});
