/**
 * Keeps a tmux server the daemon starts out of the daemon's own systemd service, so stopping,
 * restarting or a crash of the service never takes tmux and the agents with it
 * (docs/service.md, "tmux outlives the daemon").
 *
 * When the daemon's process runs in a systemd service's control group (the user unit
 * `tether service install` writes, or any other), a command that may start a tmux server
 * (`new-session`) is run through `systemd-run --user --scope`: the tmux client, and the server
 * it forks, land in a scope unit of their own. Elsewhere (a terminal, an SSH login, macOS)
 * nothing changes: the server lands where tmux always puts it.
 *
 * Invariants: only argv arrays; the probe runs once, at start; when the scope cannot be made
 * tmux runs plainly (the unit's `KillMode=process` is the fallback that keeps the server).
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';

/** How long the probe (`systemd-run ... tmux -V`) may take. */
const PROBE_TIMEOUT_MS = 10_000;

/**
 * The systemd service whose control group holds the process described by `procCgroup` (the
 * text of /proc/<pid>/cgroup), or null when it is not in a service (a scope, a slice, no
 * systemd). The unified (`0::`) line is read, else cgroup v1's `name=systemd` one.
 */
export function serviceOfCgroup(procCgroup: string): string | null {
  const lines = procCgroup.split('\n');
  const path =
    lines.find((l) => l.startsWith('0::'))?.slice(3) ?? lines.find((l) => /^\d+:name=systemd:/.test(l))?.replace(/^\d+:name=systemd:/, '');
  const last = path?.split('/').pop() ?? '';
  return last.endsWith('.service') ? last : null;
}

/** The argv placed before tmux so it runs in a scope of its own (a fresh unit name each time). */
export function scopeArgv(systemdRun = 'systemd-run'): string[] {
  return [
    systemdRun,
    '--user',
    '--scope',
    '--quiet',
    '--collect',
    `--unit=tether-tmux-${randomBytes(6).toString('hex')}`,
    '--description=tmux server started by tether',
    '--',
  ];
}

/** What the daemon decided: the scope launcher to use, or none, and a sentence for its log. */
export interface ServerScopeChoice {
  readonly launcher: (() => string[]) | null;
  readonly service: string | null;
  readonly why: string;
}

/**
 * Decides, once at start, whether tmux servers start in their own scope: only when this
 * process is in a systemd service and `systemd-run --user --scope` works here (probed by
 * running `<tmux> -V` through it).
 */
export async function chooseServerScope(opts: { tmuxBin: string; systemdRun?: string; cgroupFile?: string }): Promise<ServerScopeChoice> {
  const cgroup = await readFile(opts.cgroupFile ?? '/proc/self/cgroup', 'utf8').catch(() => '');
  const service = serviceOfCgroup(cgroup);
  if (service === null) return { launcher: null, service, why: 'the daemon does not run as a systemd service' };
  const launcher = () => scopeArgv(opts.systemdRun);
  const argv = [...launcher(), opts.tmuxBin, '-V'];
  const failure = await new Promise<string | null>((resolve) => {
    execFile(argv[0]!, argv.slice(1), { timeout: PROBE_TIMEOUT_MS, encoding: 'utf8' }, (err, _stdout, stderr) => {
      resolve(err ? (stderr.trim().split('\n')[0] ?? '') || err.message : null);
    });
  });
  if (failure !== null) return { launcher: null, service, why: `systemd-run --user --scope does not work here: ${failure}` };
  return { launcher, service, why: 'tmux servers it starts run in a systemd scope of their own' };
}

/** True when a failed wrapped run failed in systemd-run itself (before tmux ran): tmux's own messages never start so. */
export function isLauncherFailure(stderr: string, code: unknown): boolean {
  return code === 'ENOENT' || code === 'EACCES' || /^Failed to /.test(stderr);
}
