/**
 * Disk faults under a running daemon: its buffer file deleted, replaced by a directory, the
 * buffers on a file system remounted read-only. No crash, the stream goes on, health says what
 * is wrong, and writing comes back once the fault is gone.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { runDaemon, type RunningDaemon } from '../../src/cli/daemon.js';
import { daemonHome, type DaemonHome } from '../helpers/daemon.js';
import { Mirror } from '../helpers/stream.js';
import { eventually, privateTmux, type PrivateTmux } from '../helpers/tmux.js';

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

describe('disk faults under a running daemon', () => {
  let tmux: PrivateTmux;
  let home: DaemonHome;
  let daemon: RunningDaemon | undefined;
  let mirror: Mirror | undefined;
  const cleanups: (() => void)[] = [];
  afterEach(async () => {
    mirror?.close();
    await daemon?.stop();
    await tmux?.cleanup();
    home?.cleanup();
    for (const c of cleanups.splice(0)) c();
  });

  async function start(extraEnv: NodeJS.ProcessEnv = {}) {
    tmux = await privateTmux();
    // min_free_gb = 0: the read-only case mounts a 16 MB tmpfs, below the default 1 GB floor, and
    // the watchdog would turn writing off for low disk (another fault) before a write could fail.
    home = daemonHome(tmux.socket, '[agent]\ncommand = "/bin/sh"\n[buffer]\nwatchdog_interval_s = 1\nmin_free_gb = 0\n', extraEnv);
    daemon = await runDaemon({ env: home.env, stdout: new PassThrough(), stderr: new PassThrough(), cwd: home.dir });
    const url = new URL(daemon.url);
    const base = `${url.protocol}//${url.host}`;
    const token = url.searchParams.get('token')!;
    mirror = new Mirror(base, token, 'pi-main').connect();
    const m = mirror;
    await eventually(() => m.kinds().includes('snapshot'), 15_000);
    const health = async () => (await (await fetch(`${base}/health`, { headers: { authorization: `Bearer ${token}` } })).json()) as Health;
    const log = join(home.env.TETHER_DATA_DIR!, 'buffers', 'pi-main.log');
    const type = (line: string) => tmux.tmux('send-keys', '-t', 'pi-main', '-l', `${line}\r`);
    const seen = (marker: string) => eventually(async () => (await m.text()).includes(marker), 15_000);
    const inFile = (marker: string) => eventually(() => existsSync(log) && readFileSync(log, 'latin1').includes(marker), 15_000);
    return { health, log, type, seen, inFile };
  }

  it('a buffer file deleted, then replaced by a directory: no crash, health says so, writing comes back', async () => {
    const { health, log, type, seen, inFile } = await start();
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

  it.skipIf(mountRefusal !== null)(
    `the buffers on a file system remounted read-only: the stream goes on, health says so${mountRefusal ? ` [skipped: this machine cannot mount a tmpfs: ${mountRefusal}]` : ''}`,
    async () => {
      // The buffers dir is its own file system (the daemon's log file stays writable elsewhere).
      const dataDir = mkdtempSync(join(tmpdir(), 'tether-ro-data-'));
      const mnt = join(dataDir, 'buffers');
      mkdirSync(mnt);
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=16m,mode=0700', 'tmpfs', mnt]);
      cleanups.push(() => {
        try {
          execFileSync('umount', [mnt]);
        } catch {
          execFileSync('umount', ['-l', mnt]);
        }
        rmSync(dataDir, { recursive: true, force: true });
      });
      const { health, log, type, seen, inFile } = await start({ TETHER_DATA_DIR: dataDir });
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
      expect(daemon).toBeDefined();
      execFileSync('mount', ['-o', 'remount,rw', mnt]);
      await type('echo rw-again');
      await inFile('rw-again');
    },
  );
});
