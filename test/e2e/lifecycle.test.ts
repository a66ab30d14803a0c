/**
 * `tether stop` and `tether restart` against daemons started the way the pi extension starts
 * them (the built extension's own `startDaemon`: detached, outliving the process that started
 * it), and a daemon of another version made visible: an "old install" (a copy of the built
 * package whose package.json says another version) serves, `tether status` names the mismatch,
 * and `tether restart` replaces it with this version. Only processes these tests started are
 * ever signalled.
 */
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { readRunFile, writeRunFile } from '../../src/runtime/run-file.js';
import { spawnDetachedDaemon } from '../../src/config/daemon-process.js';
import { resolvePaths } from '../../src/config/paths.js';
import { processExists } from '../../src/process.js';
import { daemonHome, ROOT, runCli, type DaemonHome } from '../helpers/daemon.js';
import { eventually, privateTmux, type PrivateTmux } from '../helpers/tmux.js';

const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const OLD_VERSION = '0.0.9-old';

interface ExtensionStart {
  startDaemon(opts: { runDir: string; cwd: string; env: NodeJS.ProcessEnv; isUp: () => boolean; onFailed: (why: string) => void }): void;
}

describe('tether stop, restart, and a daemon of another version', () => {
  let tmux: PrivateTmux;
  let home: DaemonHome;
  let runDir: string;
  let oldInstall: string;
  /** Every daemon pid these tests started, stopped at the end if still running. */
  const started = new Set<number>();

  beforeAll(async () => {
    tmux = await privateTmux();
    home = daemonHome(tmux.socket, '[agent]\ncommand = "/bin/cat"\n');
    runDir = resolvePaths(home.env).runDir;
    // An older install: the same built code, a package.json that says another version.
    oldInstall = mkdtempSync(join(tmpdir(), 'tether-old-install-'));
    cpSync(join(ROOT, 'dist'), join(oldInstall, 'dist'), { recursive: true });
    writeFileSync(join(oldInstall, 'package.json'), JSON.stringify({ name: 'pi-tether', version: OLD_VERSION, type: 'module' }));
    symlinkSync(join(ROOT, 'node_modules'), join(oldInstall, 'node_modules'));
  }, 30_000);

  afterAll(async () => {
    for (const pid of started) if (processExists(pid)) process.kill(pid, 'SIGTERM');
    await eventually(() => [...started].every((pid) => !processExists(pid)), 20_000, 100, 'the test daemons to exit');
    await tmux.cleanup();
    home.cleanup();
    rmSync(oldInstall, { recursive: true, force: true });
  });

  type RunFile = ReturnType<typeof readRunFile>;
  /** Waits for the run file `read` finds; its daemon is then one the tests stop at the end. */
  async function awaitRunFile(read: () => RunFile | Promise<RunFile>, what: string): Promise<NonNullable<RunFile>> {
    const run = await eventually(read, 30_000, 100, what);
    if (!run) throw new Error(`no run file: ${what}`);
    started.add(run.pid);
    return run;
  }

  /** Starts a daemon with the built pi extension's own launcher; resolves with its run file. */
  async function startAsTheExtensionDoes() {
    const ext = (await import(join(ROOT, 'dist/extension/daemon-start.js'))) as ExtensionStart;
    const failures: string[] = [];
    ext.startDaemon({ runDir, cwd: home.dir, env: home.env, isUp: () => readRunFile(runDir) !== null, onFailed: (w) => failures.push(w) });
    return awaitRunFile(() => (failures.length > 0 ? Promise.reject(new Error(failures[0])) : readRunFile(runDir)), 'the run file');
  }

  /** Starts the old install's daemon detached, as its own extension would have. */
  async function startOldInstall() {
    const { child } = spawnDetachedDaemon({
      node: process.execPath,
      cli: join(oldInstall, 'dist/cli/main.js'),
      runDir,
      cwd: home.dir,
      env: home.env,
    });
    return awaitRunFile(() => (readRunFile(runDir)?.pid === child.pid ? readRunFile(runDir) : null), 'the old daemon');
  }

  const health = async (port: number) => {
    const token = readFileSync(join(home.dataDir, 'auth', 'local-token'), 'utf8').trim();
    return (await (await fetch(`http://127.0.0.1:${port}/health`, { headers: { authorization: `Bearer ${token}` } })).json()) as {
      version: string;
    };
  };

  it('stop when none runs says so and exits 3; restart when none runs starts one', { timeout: 60_000 }, async () => {
    const stop = await runCli(['stop'], home.env);
    expect(stop.code).toBe(3);
    expect(stop.stdout).toBe('');
    expect(stop.stderr).toBe('tether: tether is not running (no live daemon in the run file): nothing to stop\n');

    const restart = await runCli(['restart'], home.env, 45_000);
    expect(restart.stderr).toBe('');
    expect(restart.code).toBe(0);
    const run = readRunFile(runDir)!;
    started.add(run.pid);
    expect(restart.stdout).toBe(`tether was not running\nstarted tether ${VERSION} (pid ${run.pid}) at ${run.url}\n`);
    // Detached: it outlived the command that started it, and serves.
    expect((await health(run.port)).version).toBe(VERSION);
    expect((await runCli(['stop'], home.env)).code).toBe(0);
    expect(processExists(run.pid)).toBe(false);
  });

  it('a run file whose pid is another program now: that program is never signalled', { timeout: 60_000 }, async () => {
    // A daemon that died without cleaning up, its pid since taken by something else (a sleep we own).
    const other = spawn('sleep', ['60'], { stdio: 'ignore' });
    const gone = new Promise((r) => other.once('exit', r));
    try {
      writeRunFile(runDir, {
        pid: other.pid!,
        url: 'http://127.0.0.1:9',
        scheme: 'http',
        host: '127.0.0.1',
        port: 9,
        fingerprint: null,
        name: 'x',
        version: VERSION,
        cwd: home.dir,
      });
      const stop = await runCli(['stop'], home.env);
      expect(stop.code).toBe(3);
      expect(stop.stderr).toBe(`tether: tether is not running (the run file's pid ${other.pid} is another program now): nothing to stop\n`);
      expect(other.exitCode).toBe(null);
      expect(processExists(other.pid!)).toBe(true);
    } finally {
      rmSync(join(runDir, 'daemon.json'), { force: true });
      other.kill();
      await gone;
    }
  });

  it('stop: a daemon the extension started stops cleanly; its tmux sessions keep running', { timeout: 60_000 }, async () => {
    const run = await startAsTheExtensionDoes();
    expect(run.version).toBe(VERSION);
    await eventually(async () => (await tmux.tmux('list-sessions', '-F', '#{session_name}')).includes('pi-main'), 15_000, 100, 'pi-main');
    const { code, stdout, stderr } = await runCli(['stop'], home.env, 45_000);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toBe(`stopped tether ${VERSION} (pid ${run.pid})\n`);
    expect(processExists(run.pid)).toBe(false);
    expect(existsSync(join(runDir, 'daemon.json'))).toBe(false);
    expect(await tmux.tmux('list-sessions', '-F', '#{session_name}')).toContain('pi-main');
    const again = await runCli(['stop'], home.env);
    expect(again.code).toBe(3);
  });

  it('status names a daemon of another version; restart replaces it with this one, detached', { timeout: 90_000 }, async () => {
    const old = await startOldInstall();
    expect(old.version).toBe(OLD_VERSION);
    expect((await health(old.port)).version).toBe(OLD_VERSION);

    const status = await runCli(['status'], home.env);
    expect(status.code).toBe(0);
    expect(status.stdout.split('\n')[1]).toBe(
      `version mismatch: the daemon runs tether ${OLD_VERSION}, this command is tether ${VERSION}: run "tether restart" to serve with ${VERSION}`,
    );
    const json = JSON.parse((await runCli(['status', '--json'], home.env)).stdout) as { cliVersion: string; health: { version: string } };
    expect([json.health.version, json.cliVersion]).toEqual([OLD_VERSION, VERSION]);

    const restart = await runCli(['restart'], home.env, 60_000);
    expect(restart.stderr).toBe('');
    expect(restart.code).toBe(0);
    const now = readRunFile(runDir)!;
    started.add(now.pid);
    expect(restart.stdout).toBe(
      `stopped tether ${OLD_VERSION} (pid ${old.pid})\nstarted tether ${VERSION} (pid ${now.pid}) at ${now.url}\n`,
    );
    expect(processExists(old.pid)).toBe(false);
    expect(now.pid).not.toBe(old.pid);
    expect(now.cwd).toBe(home.dir);
    expect((await health(now.port)).version).toBe(VERSION);
    const after = await runCli(['status'], home.env);
    expect(after.code).toBe(0);
    expect(after.stdout).not.toContain('version mismatch');
    expect(after.stdout).toMatch(/^pi-main\s+running/m);
    expect((await runCli(['stop'], home.env)).code).toBe(0);
  });
});
