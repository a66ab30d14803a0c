/**
 * `tether stop` and `tether restart`: the running daemon, found by its run file, is asked to
 * stop (SIGTERM: the same clean shutdown as Ctrl-C; tmux sessions keep running) and waited for,
 * within a bound; `restart` then starts `tether serve` detached the way the pi extension does
 * (src/config/daemon-process.ts), in the old daemon's directory, with this command's
 * environment (so the same data dir and config), and waits until it serves.
 *
 * A daemon run by the login service (`tether service install`) is stopped and restarted
 * through its manager instead (src/cli/service-control.ts): `systemctl --user stop|restart
 * tether.service`, on macOS a SIGTERM then `launchctl kickstart -k`; so the service stays the
 * one that runs tether, and a stopped unit stays stopped.
 *
 * Exit codes (docs/operations.md "Stopping and restarting"): 0 done; 1 it failed (the daemon
 * did not stop in time, could not be signalled, or the new one did not come up); 3 (`stop`
 * only) no daemon was running, nothing was done.
 */
import { existsSync, readFileSync } from 'node:fs';
import { execFile } from 'node:child_process';
import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Command } from 'clipanion';
import { agentKinds } from '../agent/contract/kinds.js';
import { loadConfig } from '../config/load.js';
import { lastOutputLine, spawnDetachedDaemon } from '../config/daemon-process.js';
import { resolvePaths, type TetherPaths } from '../config/paths.js';
import { packageVersion } from '../config/version.js';
import { processExists } from '../process.js';
import { CliError, reportFailure } from '../runtime/fail.js';
import { readRunFile, type RunFile } from '../runtime/run-file.js';
import { describeManager, restartArgv, runArgv, serviceManagerOf, stopArgv, type ServiceManager } from './service-control.js';
import { DATA_DIR_NAMES } from '../config/data-layout.js';

/** How long a daemon has to finish its shutdown after SIGTERM. */
export const STOP_TIMEOUT_MS = 20_000;
/** How long a new daemon has to write its run file. */
export const START_TIMEOUT_MS = 30_000;
/** The exit code of `tether stop` when no daemon runs. */
export const NOT_RUNNING_EXIT = 3;
const POLL_MS = 100;

const run = promisify(execFile);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The command line of a process, or null when it cannot be read (gone, or no /proc and no ps). */
async function commandLineOf(pid: number): Promise<string[] | null> {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8')
      .split('\0')
      .filter((a) => a !== '');
  } catch {
    // No /proc (macOS): ask ps.
  }
  try {
    const { stdout } = await run('ps', ['-p', String(pid), '-o', 'command='], { timeout: 5000 });
    return stdout.trim() === '' ? null : stdout.trim().split(/\s+/);
  } catch {
    return null;
  }
}

/**
 * Whether `pid` is still a `tether serve` (a pid in a run file left by a daemon that died may
 * belong to another program by now: that one is never signalled). Unknown counts as yes.
 */
async function isTetherServe(pid: number): Promise<boolean> {
  const argv = await commandLineOf(pid);
  if (argv === null) return true;
  return argv.includes('serve') && argv.some((a) => ['main.js', 'main.ts', 'tether'].includes(basename(a)));
}

/** The run file of a live daemon, or null; `because` says why there is none. */
async function liveDaemon(paths: TetherPaths): Promise<{ run: RunFile | null; because: string }> {
  const found = readRunFile(paths.runDir);
  if (!found) return { run: null, because: 'no live daemon in the run file' };
  if (!(await isTetherServe(found.pid))) return { run: null, because: `the run file's pid ${found.pid} is another program now` };
  return { run: found, because: '' };
}

/** SIGTERM, then waits until the process is gone. */
async function stopProcess(run: RunFile): Promise<void> {
  try {
    process.kill(run.pid, 'SIGTERM');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ESRCH') return;
    throw new CliError(`the daemon (pid ${run.pid}) cannot be signalled (${code}): run this as the user that runs tether`);
  }
  const deadline = Date.now() + STOP_TIMEOUT_MS;
  while (processExists(run.pid)) {
    if (Date.now() > deadline) {
      throw new CliError(
        `the daemon (pid ${run.pid}) did not stop within ${STOP_TIMEOUT_MS / 1000} s and still runs: see its log, or end it with "kill -KILL ${run.pid}"`,
      );
    }
    await sleep(POLL_MS);
  }
}

/** Runs a service manager's command; its own message when it fails. */
async function managerCommand(argv: string[]): Promise<void> {
  const r = await runArgv(argv);
  if (!r.ok) throw new CliError(`"${argv.join(' ')}" failed: ${r.stderr}`);
}

/** Waits until `pid` is gone (the manager stopped it), within the stop bound. */
async function waitGone(pid: number, how: string): Promise<void> {
  const deadline = Date.now() + STOP_TIMEOUT_MS;
  while (processExists(pid)) {
    if (Date.now() > deadline) throw new CliError(`the daemon (pid ${pid}) still runs ${STOP_TIMEOUT_MS / 1000} s after "${how}"`);
    await sleep(POLL_MS);
  }
}

/**
 * Stops the service's daemon so the manager leaves it stopped: systemd through `systemctl
 * --user stop` (which waits for it); launchd by `launchctl kill SIGTERM`, whose clean exit
 * KeepAlive ignores. Returns the words that say how.
 */
async function stopService(manager: ServiceManager, old: RunFile): Promise<string> {
  const argv = stopArgv(manager);
  await managerCommand(argv);
  await waitGone(old.pid, argv.join(' '));
  return ` with "${argv.join(' ')}"`;
}

/** Restarts the service and waits until the daemon it starts serves; the line that says so. */
async function restartService(manager: ServiceManager, old: RunFile, out: NodeJS.WritableStream, runDir: string): Promise<string> {
  // launchd: the clean SIGTERM first, as everywhere; kickstart then starts the job (-k: and ends
  // an instance launchd may have started meanwhile).
  if (manager.kind === 'launchd') await stopProcess(old);
  const argv = restartArgv(manager);
  await managerCommand(argv);
  await waitGone(old.pid, argv.join(' '));
  out.write(`stopped ${describe(old)} with "${argv.join(' ')}"\n`);
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    const now = readRunFile(runDir);
    if (now && now.pid !== old.pid) {
      const runner = await serviceManagerOf(now.pid);
      if (runner?.kind !== manager.kind) throw new CliError(`a daemon serves (pid ${now.pid}), but not the ${describeManager(manager)}'s`);
      return `started tether ${now.version ?? packageVersion()} (pid ${now.pid}) at ${now.url}, run by the ${describeManager(manager)}`;
    }
    if (Date.now() > deadline) {
      const see = manager.kind === 'systemd' ? `systemctl --user status ${manager.unit}` : `launchctl print ${manager.target}`;
      throw new CliError(
        `the ${describeManager(manager)} started no daemon that serves within ${START_TIMEOUT_MS / 1000} s: see "${see}" and ${DATA_DIR_NAMES.log}`,
      );
    }
    await sleep(POLL_MS);
  }
}

/** The login service that runs the daemon, or null; refuses one in tether's unit that systemctl cannot reach. */
async function managerOf(run: RunFile, doing: string): Promise<ServiceManager | null> {
  const found = await serviceManagerOf(run.pid);
  if (found?.kind !== 'unconfirmed') return found;
  throw new CliError(
    `the daemon (pid ${run.pid}) runs in tether's systemd unit, but ${found.why}: ${doing} it with systemctl --user as its user`,
  );
}

const describe = (run: RunFile): string => `tether ${run.version ?? '(version unknown)'} (pid ${run.pid})`;

export class StopCommand extends Command {
  static override paths = [['stop']];
  static override usage = Command.Usage({
    description: 'Stop the running daemon (tmux sessions keep running)',
    details: `
      Finds the daemon by its run file, sends it SIGTERM (a clean shutdown, as Ctrl-C) and waits
      up to ${STOP_TIMEOUT_MS / 1000} s until it is gone. The tmux sessions and their agents keep running.
      A daemon run by the login service is stopped with "systemctl --user stop tether.service"
      (so systemd does not start it again), on macOS with "launchctl kill SIGTERM", whose clean
      exit launchd lets be.
      Exits 0 once it stopped, ${NOT_RUNNING_EXIT} when no daemon was running, 1 when it did not stop.
    `,
  });

  async execute(): Promise<number> {
    try {
      const paths = resolvePaths(process.env);
      await loadConfig(paths, process.env, { agentKinds: agentKinds() });
      const { run, because } = await liveDaemon(paths);
      if (!run) throw new CliError(`tether is not running (${because}): nothing to stop`, NOT_RUNNING_EXIT);
      const manager = await managerOf(run, 'stop');
      let how = '';
      if (manager) how = await stopService(manager, run);
      else await stopProcess(run);
      this.context.stdout.write(`stopped ${describe(run)}${how}\n`);
      return 0;
    } catch (err) {
      return reportFailure(err, this.context.stderr);
    }
  }
}

export class RestartCommand extends Command {
  static override paths = [['restart']];
  static override usage = Command.Usage({
    description: 'Stop the running daemon and start this version of tether in its place, detached',
    details: `
      Stops the daemon as "tether stop" does (when one runs), then starts "tether serve"
      detached, as an agent's plugin starts it: in the old daemon's directory (else this one),
      with this command's environment (the same data dir and config), its output in
      run/serve.out. Waits up to ${START_TIMEOUT_MS / 1000} s until it serves. Use it after an upgrade:
      "tether status" says when the daemon runs another version. Exits 0 once the new daemon
      serves, 1 otherwise. A daemon run by the login service is restarted by its manager
      instead ("systemctl --user restart tether.service"; on macOS SIGTERM, then
      "launchctl kickstart -k gui/<uid>/dev.tether.daemon"), and the same wait applies.
    `,
  });

  async execute(): Promise<number> {
    try {
      const env = process.env;
      const paths = resolvePaths(env);
      await loadConfig(paths, env, { agentKinds: agentKinds() });
      const { run: old } = await liveDaemon(paths);
      const manager = old ? await managerOf(old, 'restart') : null;
      if (old && manager) {
        this.context.stdout.write(`${await restartService(manager, old, this.context.stdout, paths.runDir)}\n`);
        return 0;
      }
      if (old) {
        await stopProcess(old);
        this.context.stdout.write(`stopped ${describe(old)}\n`);
      } else {
        this.context.stdout.write('tether was not running\n');
      }
      const { child, outFile } = spawnDetachedDaemon({
        node: process.execPath,
        cli: fileURLToPath(new URL('./main.js', import.meta.url)),
        runDir: paths.runDir,
        // The old daemon's directory, unless it is gone since.
        cwd: old?.cwd && existsSync(old.cwd) ? old.cwd : process.cwd(),
        env,
      });
      let exited: number | null | undefined;
      let spawnError: Error | null = null;
      child.on('exit', (code) => (exited = code));
      child.on('error', (err) => (spawnError = err));
      const deadline = Date.now() + START_TIMEOUT_MS;
      for (;;) {
        const now = readRunFile(paths.runDir);
        if (now && now.pid === child.pid) {
          this.context.stdout.write(`started tether ${now.version ?? packageVersion()} (pid ${now.pid}) at ${now.url}\n`);
          return 0;
        }
        if (spawnError) throw new CliError(`tether serve could not be started: ${(spawnError as Error).message}`);
        if (exited !== undefined) {
          throw new CliError(`the new daemon did not start: ${lastOutputLine(outFile) || `tether serve exited with ${String(exited)}`}`);
        }
        if (Date.now() > deadline) {
          throw new CliError(`the new daemon (pid ${String(child.pid)}) did not serve within ${START_TIMEOUT_MS / 1000} s: see ${outFile}`);
        }
        await sleep(POLL_MS);
      }
    } catch (err) {
      return reportFailure(err, this.context.stderr);
    }
  }
}
