/**
 * Disk faults under a running daemon: its buffer file deleted, replaced by a directory, the
 * buffers on a file system remounted read-only. No crash, the stream goes on, health says what
 * is wrong, and writing comes back once the fault is gone.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { useInProcessDaemon, type DaemonFixture } from '../helpers/daemon-fixture.js';
import type { DaemonParts, InProcessTestDaemon } from '../helpers/in-process-daemon.js';
import type { Mirror } from '../helpers/stream.js';
import { eventually } from '../helpers/tmux.js';

interface Health {
  status: string;
  warnings: string[];
}

function canMount(): string | null {
  const dir = mkdtempSync(join(tmpdir(), 'tether-mount-probe-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', dir], { stdio: 'pipe' });
    execFileSync('umount', [dir]);
    return null;
  } catch (err) {
    return (err as { stderr?: Buffer }).stderr?.toString().trim() || (err as Error).message;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
const mountRefusal = canMount();

// min_free_gb = 0: the read-only case mounts a 16 MB tmpfs, below the default 1 GB floor, and
// the watchdog would turn writing off for low disk (another fault) before a write could fail.
const CONFIG = '[agent]\ncommand = "/bin/sh"\n[buffer]\nwatchdog_interval_s = 1\nmin_free_gb = 0\n';

type Fixture = DaemonFixture<InProcessTestDaemon, [parts?: DaemonParts]>;

/** A client on pi-main that has its snapshot: the link is live, so typed output is streamed. */
async function watchMain(fx: Fixture): Promise<Mirror> {
  const m = fx.mirror('pi-main');
  await eventually(() => m.kinds().includes('snapshot'), 15_000);
  return m;
}

/** The test's view of its daemon: health, the buffer file, typing, and waits on what `main` shows. */
function helpersOf(fx: Fixture, main: Mirror) {
  const health = async () => (await (await fx.d.get('/health')).json()) as Health;
  const log = join(fx.home.env.TETHER_DATA_DIR!, 'buffers', 'pi-main.log');
  const type = (line: string) => fx.tmux.tmux('send-keys', '-t', 'pi-main', '-l', `${line}\r`);
  const seen = (marker: string) => eventually(async () => (await main.text()).includes(marker), 15_000);
  const inFile = (marker: string) => eventually(() => existsSync(log) && readFileSync(log, 'latin1').includes(marker), 15_000);
  return { health, log, type, seen, inFile };
}

describe('disk faults under a running daemon', () => {
  describe('the buffer file removed', () => {
    const fx = useInProcessDaemon(CONFIG);
    let main: Mirror;
    beforeAll(async () => {
      main = await watchMain(fx);
    });

    it('a buffer file deleted, then replaced by a directory: no crash, health says so, writing comes back', async () => {
      const { health, log, type, seen, inFile } = helpersOf(fx, main);
      await type('echo first');
      await inFile('first');

      rmSync(log);
      await type('echo after-delete');
      await seen('after-delete');
      await inFile('after-delete');

      rmSync(log);
      mkdirSync(log);
      await type('echo into-a-directory');
      await seen('into-a-directory');
      await eventually(async () => (await health()).warnings.some((w) => /pi-main: the disk buffer cannot be written/.test(w)), 15_000);

      rmSync(log, { recursive: true });
      await type('echo writable-again');
      await inFile('writable-again');
      await eventually(async () => !(await health()).warnings.some((w) => /cannot be written/.test(w)), 15_000);
    });
  });

  describe.skipIf(mountRefusal !== null)('the buffers remounted read-only', () => {
    // The buffers dir is its own file system (the daemon's log file stays writable elsewhere).
    let dataDir = '';
    let mnt = '';
    const fx = useInProcessDaemon(CONFIG, {
      before: () => {
        dataDir = mkdtempSync(join(tmpdir(), 'tether-ro-data-'));
        mnt = join(dataDir, 'buffers');
        mkdirSync(mnt);
        execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=16m,mode=0700', 'tmpfs', mnt]);
      },
      extraEnv: () => ({ TETHER_DATA_DIR: dataDir }),
      after: () => {
        try {
          execFileSync('umount', [mnt]);
        } catch {
          execFileSync('umount', ['-l', mnt]);
        }
        rmSync(dataDir, { recursive: true, force: true });
      },
    });
    let main: Mirror;
    beforeAll(async () => {
      main = await watchMain(fx);
    });

    it(`the buffers on a file system remounted read-only: the stream goes on, health says so${mountRefusal ? ` [skipped: this machine cannot mount a tmpfs: ${mountRefusal}]` : ''}`, async () => {
      const { health, log, type, seen, inFile } = helpersOf(fx, main);
      await type('echo before-ro');
      await inFile('before-ro');
      // A read-only remount is refused (EBUSY) while a file there is open for writing: the buffer
      // actor opens its file only to append a batch, so try again until the remount lands between.
      await eventually(
        () => {
          execFileSync('mount', ['-o', 'remount,ro', mnt], { stdio: 'pipe' });
          return true;
        },
        15_000,
        10,
      );
      await type('echo while-ro');
      await seen('while-ro');
      await eventually(async () => (await health()).warnings.some((w) => /cannot be written/.test(w)), 15_000);
      expect(readFileSync(log, 'latin1')).not.toContain('while-ro');
      expect(fx.d).toBeDefined();
      execFileSync('mount', ['-o', 'remount,rw', mnt]);
      await type('echo rw-again');
      await inFile('rw-again');
    });
  });
});
