/**
 * Which login service, if any, runs a daemon, and the commands that stop or restart it through
 * its service manager (docs/operations.md, "Stopping and restarting"). `tether stop` and
 * `tether restart` use this so a daemon started by `tether service install`'s unit or agent is
 * stopped and restarted by systemd or launchd, never replaced by a daemon outside the service.
 *
 * A daemon is systemd's when its /proc/<pid>/cgroup names `tether.service` in a user manager's
 * tree and that manager (`systemctl --user show`) names the same pid as the unit's main pid;
 * launchd's when `launchctl print gui/<uid>/dev.tether.daemon` names its pid. Only argv arrays,
 * never a shell. A daemon in the unit's group that `systemctl --user` cannot confirm is reported
 * as such: `restart` then refuses rather than start a daemon beside the unit.
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { serviceOfCgroup } from '../tmux/server-scope.js';
import { LAUNCHD_LABEL, SYSTEMD_UNIT_NAME } from './login-service.js';

/** How long one `systemctl` or `launchctl` call may take (a stop waits for the daemon's shutdown). */
export const MANAGER_TIMEOUT_MS = 60_000;

/** The service manager that runs a daemon. */
export type ServiceManager = { readonly kind: 'systemd'; readonly unit: string } | { readonly kind: 'launchd'; readonly target: string };

/** A daemon in tether's unit whose manager `systemctl --user` cannot confirm (no bus, another manager). */
export interface Unconfirmed {
  readonly kind: 'unconfirmed';
  readonly why: string;
}

/** What the caller can run: argv in, exit status and output out (never a shell). */
export type Runner = (argv: readonly string[]) => Promise<{ ok: boolean; stdout: string; stderr: string }>;

export const runArgv: Runner = (argv) =>
  new Promise((resolve) => {
    execFile(argv[0]!, argv.slice(1), { timeout: MANAGER_TIMEOUT_MS, encoding: 'utf8' }, (err, stdout, stderr) => {
      resolve({ ok: !err, stdout, stderr: stderr.trim() || (err ? err.message : '') });
    });
  });

/** The launchd service target of tether's agent for a user: `gui/<uid>/dev.tether.daemon`. */
export const launchdTarget = (uid: number): string => `gui/${uid}/${LAUNCHD_LABEL}`;

/**
 * Whether a /proc/<pid>/cgroup text puts the process in tether's unit under a user manager
 * (a system unit of the same name lives in system.slice and is not `systemctl --user`'s).
 */
export function inUserUnit(procCgroup: string): boolean {
  if (serviceOfCgroup(procCgroup) !== SYSTEMD_UNIT_NAME) return false;
  return !/(^|\n)(0::|\d+:name=systemd:)\/system\.slice\//.test(procCgroup);
}

/** The pid `launchctl print` names for a running job, or null. */
export function launchdPid(printed: string): number | null {
  const m = /^\s*pid = (\d+)\s*$/m.exec(printed);
  return m ? Number(m[1]) : null;
}

/** The argv that stops the service's daemon so the manager does not start it again. */
export function stopArgv(manager: ServiceManager): string[] {
  if (manager.kind === 'systemd') return ['systemctl', '--user', 'stop', manager.unit];
  // launchd: SIGTERM to the job; the daemon exits 0, which KeepAlive (SuccessfulExit false) leaves be.
  return ['launchctl', 'kill', 'SIGTERM', manager.target];
}

/** The argv that restarts the service: the manager stops the daemon and starts a new one in the service. */
export function restartArgv(manager: ServiceManager): string[] {
  if (manager.kind === 'systemd') return ['systemctl', '--user', 'restart', manager.unit];
  return ['launchctl', 'kickstart', '-k', manager.target];
}

/** How the service is named to a user. */
export function describeManager(manager: ServiceManager): string {
  return manager.kind === 'systemd' ? `systemd user unit ${manager.unit}` : `launchd agent ${manager.target}`;
}

export interface DetectOptions {
  readonly platform?: NodeJS.Platform;
  readonly uid?: number;
  readonly run?: Runner;
  readonly readCgroup?: (pid: number) => Promise<string>;
}

/**
 * The service manager that runs `pid` as tether's login service; null when none does (a
 * terminal, the pi extension); `unconfirmed` when its control group is tether's unit but
 * `systemctl --user` does not say so.
 */
export async function serviceManagerOf(pid: number, opts: DetectOptions = {}): Promise<ServiceManager | Unconfirmed | null> {
  const platform = opts.platform ?? process.platform;
  const run = opts.run ?? runArgv;
  if (platform === 'linux') {
    const read = opts.readCgroup ?? ((p: number) => readFile(`/proc/${p}/cgroup`, 'utf8'));
    const cgroup = await read(pid).catch(() => '');
    if (!inUserUnit(cgroup)) return null;
    const shown = await run(['systemctl', '--user', 'show', '--property=MainPID', '--value', SYSTEMD_UNIT_NAME]);
    if (!shown.ok) return { kind: 'unconfirmed', why: `systemctl --user cannot be asked about ${SYSTEMD_UNIT_NAME}: ${shown.stderr}` };
    const main = Number(shown.stdout.trim());
    if (main === pid) return { kind: 'systemd', unit: SYSTEMD_UNIT_NAME };
    return { kind: 'unconfirmed', why: `systemctl --user names pid ${main || 'none'} as ${SYSTEMD_UNIT_NAME}'s main process, not ${pid}` };
  }
  if (platform === 'darwin') {
    const uid = opts.uid ?? process.getuid?.() ?? -1;
    if (uid < 0) return null;
    const target = launchdTarget(uid);
    const printed = await run(['launchctl', 'print', target]);
    return printed.ok && launchdPid(printed.stdout) === pid ? { kind: 'launchd', target } : null;
  }
  return null;
}
