/**
 * A private systemd user manager for a test (`systemd --user`), so a unit runs under real
 * systemd even where systemd is not PID 1: as root, the manager starts in a fresh control group
 * of its own (in every hierarchy systemd tracks processes in) and a private mount namespace that
 * holds the /run/systemd/system marker systemd checks for; its runtime dir (the private socket
 * `systemctl --user` talks to, no D-Bus needed) and its unit dir are temp dirs. `stop` ends the
 * manager (which stops every unit and scope it runs), kills whatever is left in its control
 * group, removes the groups and the dirs. Only the manager started here is ever signalled.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { eventually } from './tmux.js';

export interface UserManager {
  readonly pid: number;
  /** XDG_CONFIG_HOME of the manager: units in `<configHome>/systemd/user` are its. */
  readonly configHome: string;
  /** The variables a client needs to reach this manager (`systemctl --user`, `systemd-run --user`). */
  readonly clientEnv: NodeJS.ProcessEnv;
  systemctl(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }>;
  /** One property of a unit (`systemctl --user show --value`). */
  show(unit: string, property: string): Promise<string>;
  stop(): Promise<void>;
}

const SYSTEMD_BINARIES = ['/lib/systemd/systemd', '/usr/lib/systemd/systemd'];

/** The hierarchies systemd tracks processes in: cgroup v2 alone, or hybrid's unified and v1's name=systemd. */
function cgroupRoots(): string[] {
  if (existsSync('/sys/fs/cgroup/cgroup.controllers')) return ['/sys/fs/cgroup'];
  return ['/sys/fs/cgroup/unified', '/sys/fs/cgroup/systemd'].filter((d) => existsSync(join(d, 'cgroup.procs')));
}

/** Why a private user manager cannot run here, or null when it can be tried. */
export function userManagerUnavailable(): string | null {
  if (process.platform !== 'linux') return 'not Linux';
  if (process.getuid?.() !== 0) return 'not root (a control group and a mount namespace of its own need root)';
  if (!SYSTEMD_BINARIES.some((b) => existsSync(b))) return 'systemd is not installed';
  if (cgroupRoots().length === 0) return 'no cgroup hierarchy systemd can use under /sys/fs/cgroup';
  return null;
}

// Runs as the manager-to-be: joins the fresh groups, marks /run/systemd/system in its own mount
// namespace when the host has no systemd there, then becomes the manager.
const START_SCRIPT = `set -e
systemd_bin=$1; shift
for g in "$@"; do echo $$ > "$g/cgroup.procs"; done
if [ ! -d /run/systemd/system ]; then
  if [ -d /run/systemd ]; then mount -t tmpfs tether-test /run/systemd; else mount -t tmpfs tether-test /run; mkdir -p /run/systemd; fi
  mkdir /run/systemd/system
fi
exec "$systemd_bin" --user`;

function run(file: string, args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(file, args, { env, encoding: 'utf8', timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : null) : 0, stdout, stderr });
    });
  });
}

/** Removes a control group and its children, deepest first (each must be empty of processes). */
function removeGroup(dir: string): void {
  if (!existsSync(dir)) return;
  for (const entry of readdirSync(dir, { withFileTypes: true })) if (entry.isDirectory()) removeGroup(join(dir, entry.name));
  rmdirSync(dir);
}

export async function startUserManager(): Promise<UserManager> {
  const why = userManagerUnavailable();
  if (why !== null) throw new Error(`no private systemd user manager here: ${why}`);
  const dir = mkdtempSync(join(tmpdir(), 'tether-usermgr-'));
  const runtimeDir = join(dir, 'run');
  const configHome = join(dir, 'config');
  const home = join(dir, 'home');
  for (const d of [runtimeDir, configHome, home]) mkdirSync(d, { mode: 0o700 });
  const name = `tether-test-${randomBytes(4).toString('hex')}`;
  const groups = cgroupRoots().map((root) => join(root, name));
  for (const g of groups) mkdirSync(g);
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    XDG_RUNTIME_DIR: runtimeDir,
    XDG_CONFIG_HOME: configHome,
  };
  const systemdBin = SYSTEMD_BINARIES.find((b) => existsSync(b))!;
  const child: ChildProcess = spawn('unshare', ['-m', '--propagation', 'private', 'sh', '-c', START_SCRIPT, 'sh', systemdBin, ...groups], {
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const clientEnv: NodeJS.ProcessEnv = { ...process.env, XDG_RUNTIME_DIR: runtimeDir };
  delete clientEnv.DBUS_SESSION_BUS_ADDRESS;
  const systemctl = (...args: string[]) => run('systemctl', ['--user', ...args], clientEnv);

  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const gone = await Promise.race([exited.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 30_000))]);
      if (!gone) {
        child.kill('SIGKILL');
        await exited;
      }
    }
    // What the manager left in its group descends from it: the unified group's kill ends it all.
    const unified = groups.find((g) => existsSync(join(g, 'cgroup.kill')));
    if (unified) writeFileSync(join(unified, 'cgroup.kill'), '1');
    await eventually(
      () => {
        for (const g of groups) removeGroup(g);
        return true;
      },
      20_000,
      100,
      "the private user manager's control groups removed",
    );
    rmSync(dir, { recursive: true, force: true });
  };

  try {
    await eventually(
      async () => {
        if (child.exitCode !== null) throw new Error(`systemd --user exited with ${child.exitCode}: ${stderr}`);
        // (`is-system-running` would say "offline": it asks this namespace, where systemd is not PID 1.)
        const state = (await systemctl('show', '--property=SystemState', '--value')).stdout.trim();
        return state === 'running' || state === 'degraded';
      },
      30_000,
      100,
      'the private systemd user manager up and running',
    );
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    pid: child.pid!,
    configHome,
    clientEnv,
    systemctl,
    show: async (unit, property) => (await systemctl('show', `--property=${property}`, '--value', unit)).stdout.trim(),
    stop,
  };
}
