/**
 * The tmux a daemon may use: `[tmux] socket`'s server, its version checked before anything runs,
 * and the daemon's tmux commands run in a scope that outlives a service's daemon (docs/service.md).
 *
 * Invariant: a tmux that cannot be run or is too old is refused with one line, before any session
 * is touched.
 */
import { DomainError } from '../errors.js';
import type { Logger } from '../log.js';
import { TmuxCli } from './exec.js';
import { chooseServerScope } from './server-scope.js';
import { tmuxTarget, type TmuxTarget } from './target.js';
import { checkTmuxVersion, readTmuxVersion } from './version.js';

/** The tmux that `[tmux] socket` names; refused (one line) when it cannot be run or is too old. */
export async function usableTmux(socket: string): Promise<TmuxTarget> {
  const target = tmuxTarget(socket);
  const version = await readTmuxVersion(target).catch((err: Error) => {
    throw new DomainError('tmux-unavailable', `tmux could not be run: ${err.message}`);
  });
  try {
    checkTmuxVersion(version);
  } catch (err) {
    throw new DomainError('tmux-unavailable', (err as Error).message);
  }
  return target;
}

/** The daemon's tmux commands: a tmux server it starts must outlive it, under a service too (docs/service.md). */
export async function daemonTmuxCli(target: TmuxTarget, log: Logger): Promise<TmuxCli> {
  const scope = await chooseServerScope({ tmuxBin: target.bin });
  if (scope.service !== null)
    log[scope.launcher ? 'info' : 'warn']({ service: scope.service }, `running as a systemd service: ${scope.why}`);
  return new TmuxCli(target, {
    ...(scope.launcher ? { serverLauncher: scope.launcher } : {}),
    onLauncherFailed: (why) => log.warn({ why }, "systemd-run failed: this tmux command ran in the daemon's own control group"),
  });
}
