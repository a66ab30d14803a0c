/**
 * The service never kills the agents (docs/service.md, "tmux outlives the daemon"), under a real
 * systemd user manager (test/helpers/user-manager.ts): the unit `tether service install` writes
 * is started, the daemon starts the tmux server of its default session, and a stop, a start, a
 * restart and a SIGKILL that `Restart=on-failure` answers all leave the tmux server and the
 * agent's pane process (same pids) running while each new daemon adopts the session again.
 * Both ways the server is kept are shown: its own scope (systemd-run works) and the unit's
 * KillMode=process (no systemd-run on the unit's PATH), the latter after the control: the unit
 * as tether wrote it before, which loses tmux on the first stop, and which `service status`
 * flags and `service install` updates. `tether restart` and `tether stop` under the service go
 * through systemctl: the unit runs the new daemon, then is stopped and stays so, tmux and the
 * agent the same processes throughout. And the pi extension's detached start: SIGKILL of the
 * daemon's whole process group leaves tmux running.
 *
 * Each daemon here is started by systemd or as the extension starts one, not by the daemon
 * fixture, because how it is started is what is tested; every process is one this file started.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readRunFile } from '../../src/runtime/run-file.js';
import { spawnDetachedDaemon } from '../../src/config/daemon-process.js';
import { processExists } from '../../src/process.js';
import { CLI, daemonHome, runCli, type DaemonHome } from '../helpers/daemon.js';
import { eventually, privateTmux, type PrivateTmux } from '../helpers/tmux.js';
import { startUserManager, userManagerUnavailable, type UserManager } from '../helpers/user-manager.js';

const SESSION = 'svc-main';
const CONFIG = `[agent]\ncommand = "/bin/sh"\ndefault_session = "${SESSION}"\n`;
const UNIT = 'tether.service';

/** Whether a process runs (one that exited and waits to be reaped does not). */
const alive = processExists;

/** The tmux server's pid and the agent pane's process. */
async function tmuxPids(tmux: PrivateTmux): Promise<{ server: number; pane: number }> {
  const [server, pane] = (await tmux.tmux('display-message', '-p', '-t', `=${SESSION}:`, '#{pid} #{pane_pid}'))
    .trim()
    .split(' ')
    .map(Number);
  return { server: server!, pane: pane! };
}

/** The daemon's pid and its sessions, as `tether status --json` reports them; null when none answers. */
async function daemonStatus(home: DaemonHome): Promise<{ pid: number; sessions: { id: string; state: string }[] } | null> {
  const r = await runCli(['status', '--json'], home.env, 60_000);
  if (r.code !== 0) return null;
  const report = JSON.parse(r.stdout) as { daemon: { pid: number }; sessions: { id: string; state: string }[] };
  return { pid: report.daemon.pid, sessions: report.sessions };
}

function logTail(home: DaemonHome): string {
  try {
    return readFileSync(join(home.dataDir, 'tether.log'), 'utf8').split('\n').slice(-15).join('\n');
  } catch {
    return '(no log)';
  }
}

const systemdWhyNot = userManagerUnavailable();
/** Only a machine that cannot run a user manager at all skips it; a missing install fails. */
const systemdImpossible = process.platform !== 'linux' || process.getuid?.() !== 0;
if (systemdImpossible) console.log(`the systemd part is skipped: ${systemdWhyNot}`);

describe.skipIf(systemdImpossible)('under a real systemd user manager', () => {
  beforeAll(() => {
    if (systemdWhyNot !== null) throw new Error(`${systemdWhyNot}: apt-get install systemd (.ci/run does)`);
  });
  let mgr: UserManager;
  let tmux: PrivateTmux;
  let home: DaemonHome;
  let installEnv: NodeJS.ProcessEnv;
  let unitFile: string;
  let bareBin: string;
  const outsiders: number[] = [];

  beforeAll(async () => {
    mgr = await startUserManager();
    tmux = await privateTmux();
    home = daemonHome(tmux.socket, CONFIG);
    installEnv = { ...home.env, XDG_CONFIG_HOME: mgr.configHome, HOME: home.dir, XDG_RUNTIME_DIR: mgr.clientEnv.XDG_RUNTIME_DIR };
    unitFile = join(mgr.configHome, 'systemd', 'user', UNIT);
    // A PATH with tmux and nothing else: no systemd-run, so the daemon cannot make a scope.
    bareBin = mkdtempSync(join(tmpdir(), 'tether-bin-'));
    symlinkSync(execFileSync('sh', ['-c', 'command -v tmux'], { encoding: 'utf8' }).trim(), join(bareBin, 'tmux'));
  }, 60_000);
  afterAll(async () => {
    // The manager stops the unit and the scopes it runs; the private server is then ours to end.
    await mgr?.stop();
    for (const pid of outsiders) if (alive(pid)) process.kill(pid, 'SIGKILL');
    await tmux?.cleanup();
    home?.cleanup();
    if (bareBin) rmSync(bareBin, { recursive: true, force: true });
  }, 60_000);

  const systemctl = async (...args: string[]) => {
    const r = await mgr.systemctl(...args);
    expect(r.code, `systemctl --user ${args.join(' ')}: ${r.stderr}`).toBe(0);
  };

  /** Waits until the unit's daemon (another pid than `previous`) serves and has adopted the session; its pid. */
  const serving = (previous: number): Promise<number> =>
    eventually(
      async () => {
        const main = Number(await mgr.show(UNIT, 'MainPID'));
        if (main === 0 || main === previous || readRunFile(join(home.dataDir, 'run'))?.pid !== main) return 0;
        const status = await daemonStatus(home);
        const session = status?.sessions.find((s) => s.id === SESSION);
        return status?.pid === main && session?.state === 'running' ? main : 0;
      },
      120_000,
      200,
      `a new daemon of ${UNIT} (not pid ${previous}) serving, with ${SESSION} running`,
    ).catch((err: Error) => {
      throw new Error(`${err.message}\nits log:\n${logTail(home)}`);
    });

  /** The unit's control group, and the one the tmux server is in. */
  const serverGroup = (server: number) => readFileSync(`/proc/${server}/cgroup`, 'utf8');

  /** Stop, start, restart and a SIGKILL answered by Restart=on-failure: tmux and the agent live through each. */
  async function survivesEveryWay(first: number): Promise<void> {
    const pids = await tmuxPids(tmux);
    const same = async (after: string) => {
      expect(alive(pids.server) && alive(pids.pane), `the tmux server and the agent after ${after}`).toBe(true);
      expect(await tmuxPids(tmux), after).toEqual(pids);
    };
    await systemctl('stop', UNIT);
    expect(await mgr.show(UNIT, 'ActiveState')).toBe('inactive');
    await same('systemctl --user stop');
    await systemctl('start', UNIT);
    const second = await serving(first);
    await same('systemctl --user start');
    await systemctl('restart', UNIT);
    const third = await serving(second);
    await same('systemctl --user restart');
    process.kill(third, 'SIGKILL');
    await serving(third);
    await same('a SIGKILL of the daemon, restarted by systemd');
  }

  it('the daemon starts tmux in a scope of its own: stop, restart and a crash leave tmux and the agent running', async () => {
    const install = await runCli(['service', 'install'], installEnv);
    expect(install.code, install.stderr).toBe(0);
    expect(readFileSync(unitFile, 'utf8')).toMatch(/^KillMode=process$/m);
    await systemctl('daemon-reload');
    await systemctl('start', UNIT);
    const first = await serving(0);
    const { server } = await tmuxPids(tmux);
    // What `systemctl --user status` shows: tmux is not the service's.
    expect(serverGroup(server)).toMatch(/\/tether-tmux-[0-9a-f]+\.scope$/m);
    expect(serverGroup(server)).not.toContain(UNIT);
    await survivesEveryWay(first);
  }, 300_000);

  it('tether restart and tether stop go through systemd: a new daemon in the unit, then the unit stopped, tmux and the agent running throughout', async () => {
    const install = await runCli(['service', 'install'], installEnv);
    expect(install.code, install.stderr).toBe(0);
    await systemctl('daemon-reload');
    await systemctl('start', UNIT);
    const first = await serving(0);
    const pids = await tmuxPids(tmux);
    // The CLI reaches this private manager as a user's shell reaches theirs.
    const cliEnv: NodeJS.ProcessEnv = { ...installEnv };
    delete cliEnv.DBUS_SESSION_BUS_ADDRESS;

    const restarted = await runCli(['restart'], cliEnv, 120_000);
    expect(restarted.code, restarted.stderr).toBe(0);
    const started = /started tether \S+ \(pid (\d+)\)/.exec(restarted.stdout);
    expect(started, restarted.stdout).not.toBeNull();
    const second = Number(started![1]);
    // Whoever started it, this file ends it if the manager does not (a daemon outside the unit).
    outsiders.push(second);
    expect(second).not.toBe(first);
    expect(alive(first)).toBe(false);
    // The unit runs the new daemon: active, its main pid, in its control group.
    expect(await mgr.show(UNIT, 'ActiveState')).toBe('active');
    expect(Number(await mgr.show(UNIT, 'MainPID'))).toBe(second);
    expect(readFileSync(`/proc/${second}/cgroup`, 'utf8')).toMatch(new RegExp(`/${UNIT.replace('.', '\\.')}$`, 'm'));
    expect(restarted.stdout).toContain(`(pid ${first}) with "systemctl --user restart ${UNIT}"`);
    expect(restarted.stdout).toContain(`(pid ${second}) at `);
    expect(restarted.stdout).toContain(', run by the systemd user unit tether.service');
    // It adopts the session; tmux and the agent are the same processes.
    expect(await serving(first)).toBe(second);
    expect(alive(pids.server) && alive(pids.pane), 'the tmux server and the agent after tether restart').toBe(true);
    expect(await tmuxPids(tmux)).toEqual(pids);

    const stopped = await runCli(['stop'], cliEnv, 120_000);
    expect(stopped.code, stopped.stderr).toBe(0);
    expect(stopped.stdout).toContain(`(pid ${second}) with "systemctl --user stop ${UNIT}"`);
    expect(alive(second)).toBe(false);
    // Stopped by the user: inactive and dead, not waiting to be restarted (SubState auto-restart).
    expect(await mgr.show(UNIT, 'ActiveState')).toBe('inactive');
    expect(await mgr.show(UNIT, 'SubState')).toBe('dead');
    expect(Number(await mgr.show(UNIT, 'MainPID'))).toBe(0);
    expect(alive(pids.server) && alive(pids.pane), 'the tmux server and the agent after tether stop').toBe(true);
    expect(await tmuxPids(tmux)).toEqual(pids);
    expect((await runCli(['stop'], cliEnv)).code, 'a second stop: nothing runs').toBe(3);
  }, 300_000);

  it('without systemd-run, KillMode=process keeps tmux; a unit written before it had that loses tmux, and status and install say so', async () => {
    await systemctl('stop', UNIT);
    await tmux.tmux('kill-server');
    await eventually(async () => (await tmux.tmux('list-sessions').catch(() => 'gone')) === 'gone', 10_000, 50, 'the tmux server gone');
    const env = { ...installEnv, PATH: bareBin };

    // The control: the unit as tether wrote it before (no KillMode), the daemon unable to make a scope.
    expect((await runCli(['service', 'install'], env)).code).toBe(0);
    writeFileSync(unitFile, readFileSync(unitFile, 'utf8').replace(/^KillMode=process\n/m, ''));
    const flagged = await runCli(['service', 'status'], env);
    expect(flagged.stdout).toContain('it lacks KillMode=process');
    await systemctl('daemon-reload');
    await systemctl('start', UNIT);
    await serving(0);
    const old = await tmuxPids(tmux);
    expect(serverGroup(old.server)).toMatch(new RegExp(`/${UNIT.replace('.', '\\.')}$`, 'm'));
    await systemctl('stop', UNIT);
    await eventually(() => !alive(old.server) && !alive(old.pane), 20_000, 50, 'the old unit killing tmux and the agent on stop');

    const updated = await runCli(['service', 'install'], env);
    expect(updated.stdout).toContain(`updated ${unitFile}`);
    expect(updated.stdout).toContain('the old file lacked KillMode=process');
    expect(updated.stdout).toContain('systemctl --user daemon-reload');
    await systemctl('daemon-reload');
    expect((await runCli(['service', 'status'], env)).stdout).not.toContain('lacks');
    await systemctl('start', UNIT);
    const first = await serving(0);
    const { server } = await tmuxPids(tmux);
    // No scope this time: tmux lives in the service's group, and KillMode=process is what keeps it.
    expect(serverGroup(server)).toMatch(new RegExp(`/${UNIT.replace('.', '\\.')}$`, 'm'));
    await survivesEveryWay(first);
  }, 300_000);
});

describe('the daemon the pi extension starts (detached)', () => {
  let tmux: PrivateTmux;
  let home: DaemonHome;
  const started: number[] = [];

  beforeAll(async () => {
    tmux = await privateTmux();
    home = daemonHome(tmux.socket, CONFIG);
  });
  afterAll(async () => {
    for (const pid of started) if (alive(pid)) process.kill(pid, 'SIGKILL');
    await tmux.cleanup();
    home.cleanup();
  });

  const detached = () => {
    const { child } = spawnDetachedDaemon({
      node: process.execPath,
      cli: CLI,
      runDir: join(home.dataDir, 'run'),
      cwd: home.dir,
      env: home.env,
    });
    started.push(child.pid!);
    return child.pid!;
  };
  const serving = (pid: number) =>
    eventually(
      async () => {
        if (readRunFile(join(home.dataDir, 'run'))?.pid !== pid) return false;
        const status = await daemonStatus(home);
        return status?.pid === pid && status.sessions.some((s) => s.id === SESSION && s.state === 'running');
      },
      120_000,
      100,
      `the detached daemon ${pid} serving ${SESSION}`,
    );

  it("a SIGKILL of the daemon's whole process group leaves the tmux server it started, and the agent, running", async () => {
    const first = detached();
    await serving(first);
    const pids = await tmuxPids(tmux);
    // detached: the daemon leads its own process group, as a launcher's job would.
    process.kill(-first, 'SIGKILL');
    await eventually(() => !alive(first), 10_000, 50, 'the daemon gone');
    expect(alive(pids.server) && alive(pids.pane)).toBe(true);
    const second = detached();
    await serving(second);
    expect(await tmuxPids(tmux)).toEqual(pids);
    process.kill(second, 'SIGTERM');
    await eventually(() => !alive(second), 20_000, 50, 'the second daemon stopped');
  }, 300_000);
});
