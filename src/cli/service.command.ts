/**
 * `tether service install | uninstall | status`: start the daemon at login (docs/service.md).
 * Linux gets a systemd user unit, macOS a launchd agent; both run `tether serve` the way
 * tether's own launchers do (the same node, its flags, this install's CLI), restart it when it
 * fails, and carry the environment that chose the data dir and config at install time.
 *
 * `install` is idempotent and says what it wrote and the one command that enables it; it never
 * overwrites a file tether did not write. `uninstall` removes only a file `install` wrote, and
 * refuses while systemd still has it enabled (the link `systemctl enable` made is systemd's to
 * remove). `status` changes nothing.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmdirSync, rmSync } from 'node:fs';
import { homedir, userInfo } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command } from 'clipanion';
import { DAEMON_ENV, DAEMON_NODE_ARGS } from '../config/daemon-process.js';
import { resolvePaths } from '../config/paths.js';
import { writeAtomic } from '../files.js';
import { CliError, reportFailure } from '../runtime/fail.js';
import {
  launchdPlist,
  LAUNCHD_LABEL,
  MARKER,
  missingProtection,
  serviceFile,
  systemdUnit,
  SYSTEMD_UNIT_NAME,
  type DaemonLaunch,
  type ServicePlatform,
} from './login-service.js';
import { AGENT_ADAPTERS } from '../agent/contract/adapters.js';
import { DATA_DIR_NAMES, RUN_DIR_NAMES } from '../config/data-layout.js';

/** Variables carried into the service when set at install: they choose what the daemon serves (and its agents' panes get). */
const CARRIED_ENV = [
  'TETHER_DATA_DIR',
  'TETHER_CONFIG',
  'TETHER_LOG_LEVEL',
  'TETHER_LOG_MAX_MB',
  ...AGENT_ADAPTERS.flatMap((a) => a.passedEnv),
];

function platformOf(platform = process.platform): ServicePlatform {
  if (platform === 'linux') return 'systemd';
  if (platform === 'darwin') return 'launchd';
  throw new CliError(`starting at login is supported on Linux (systemd) and macOS (launchd), not on ${platform}`);
}

/** Everything install, uninstall and status need, from the environment tether runs in. */
function context(env: NodeJS.ProcessEnv) {
  const platform = platformOf();
  const home = env.HOME && env.HOME.startsWith('/') ? env.HOME : homedir();
  const file = serviceFile(platform, env, home);
  const { dataDir } = resolvePaths(env);
  const carried: Record<string, string> = { ...DAEMON_ENV, PATH: env.PATH ?? '/usr/local/bin:/usr/bin:/bin' };
  for (const key of CARRIED_ENV) if (env[key]) carried[key] = env[key];
  const launch: DaemonLaunch = {
    node: process.execPath,
    nodeArgs: DAEMON_NODE_ARGS,
    // This install's CLI: dist/cli/main.js beside this file.
    cli: fileURLToPath(new URL('./main.js', import.meta.url)),
    env: carried,
  };
  const text =
    platform === 'systemd'
      ? systemdUnit(launch, join(dataDir, DATA_DIR_NAMES.log))
      : launchdPlist(launch, join(dataDir, DATA_DIR_NAMES.run, RUN_DIR_NAMES.serviceOut));
  return { platform, file, text, dataDir };
}

function ours(file: string): boolean {
  try {
    return readFileSync(file, 'utf8').includes(MARKER);
  } catch {
    return false;
  }
}

/** systemd's enable link for the unit, if the unit is enabled. */
function enabledLink(file: string): string | null {
  const link = join(dirname(file), 'default.target.wants', basename(file));
  try {
    lstatSync(link);
    return link;
  } catch {
    return null;
  }
}

/** Removes `dir` and up to `levels - 1` of its parents while they are empty (what install made for the file). */
function removeEmptyParents(dir: string, levels: number): void {
  for (let i = 0; i < levels; i++, dir = dirname(dir)) {
    try {
      if (readdirSync(dir).length > 0) return;
      rmdirSync(dir);
    } catch {
      return;
    }
  }
}

/** What a unit or plist without the protection lets happen. */
const UNPROTECTED = 'stopping or restarting the service, or a crash of the daemon, can kill tmux and every agent with it';

function reloadCommand(file: string): string {
  return `launchctl bootout gui/$(id -u)/${LAUNCHD_LABEL}; launchctl bootstrap gui/$(id -u) ${JSON.stringify(file)}`;
}

/** The KillMode systemd has loaded for the unit (it reads a changed file at daemon-reload), or null when it cannot say. */
function loadedKillMode(): string | null {
  const shown = spawnSync('systemctl', ['--user', 'show', '--property=LoadState,KillMode', SYSTEMD_UNIT_NAME], { encoding: 'utf8' });
  if (shown.error || shown.status !== 0) return null;
  const props = new Map(shown.stdout.split('\n').map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)] as const));
  return props.get('LoadState') === 'loaded' ? (props.get('KillMode') ?? null) : null;
}

function enableCommand(platform: ServicePlatform, file: string): string {
  return platform === 'systemd'
    ? `systemctl --user daemon-reload && systemctl --user enable --now ${SYSTEMD_UNIT_NAME}`
    : `launchctl bootstrap gui/$(id -u) ${JSON.stringify(file)}`;
}

export class ServiceInstallCommand extends Command {
  static override paths = [['service', 'install']];
  static override usage = Command.Usage({
    description: 'start the daemon at login (a systemd user unit, or a launchd agent on macOS)',
    details: 'Writes the unit and prints the command that enables it. Running it again updates the file. See docs/service.md.',
  });

  execute(): Promise<number> {
    try {
      const { platform, file, text } = context(process.env);
      if (existsSync(file) && !ours(file)) {
        throw new CliError(`${file} exists and was not written by tether: it is left alone (move it away to install)`);
      }
      if (existsSync(file) && readFileSync(file, 'utf8') === text) {
        this.context.stdout.write(`${file} is already up to date\n`);
      } else {
        const old = existsSync(file) ? readFileSync(file, 'utf8') : null;
        mkdirSync(dirname(file), { recursive: true });
        writeAtomic(file, text, (_code, message) => new CliError(message));
        this.context.stdout.write(`${old !== null ? 'updated' : 'wrote'} ${file}\n`);
        if (old !== null) this.reportUpdate(platform, file, old);
      }
      this.context.stdout.write(`enable it with:\n  ${enableCommand(platform, file)}\n`);
      if (platform === 'systemd') {
        this.context.stdout.write(
          `on a machine nobody logs into, let it run without a login:\n  loginctl enable-linger ${userInfo().username}\n`,
        );
      }
      return Promise.resolve(0);
    } catch (err) {
      return Promise.resolve(reportFailure(err, this.context.stderr));
    }
  }

  /** What an updated file changes, and how the running service manager takes it. */
  private reportUpdate(platform: ServicePlatform, file: string, old: string): void {
    const out = (line: string) => this.context.stdout.write(`${line}\n`);
    const missing = missingProtection(platform, old);
    if (missing !== null) out(`the old file lacked ${missing}: ${UNPROTECTED}; the new one has it`);
    if (platform === 'systemd') {
      out('systemd reads the update at (the daemon keeps running):\n  systemctl --user daemon-reload');
    } else {
      out(`launchd reads the update when the agent is loaded again:\n  ${reloadCommand(file)}`);
    }
  }
}

export class ServiceUninstallCommand extends Command {
  static override paths = [['service', 'uninstall']];
  static override usage = Command.Usage({ description: 'remove what `tether service install` wrote' });

  execute(): Promise<number> {
    try {
      const { platform, file } = context(process.env);
      if (!existsSync(file)) {
        this.context.stdout.write(`nothing to remove: ${file} does not exist\n`);
        return Promise.resolve(0);
      }
      if (!ours(file)) throw new CliError(`${file} was not written by tether: it is left alone`);
      if (platform === 'systemd' && enabledLink(file)) {
        throw new CliError(`${SYSTEMD_UNIT_NAME} is enabled: run "systemctl --user disable --now ${SYSTEMD_UNIT_NAME}" first`);
      }
      if (platform === 'launchd') {
        this.context.stdout.write(`if it is loaded, stop it with: launchctl bootout gui/$(id -u)/${LAUNCHD_LABEL}\n`);
      }
      rmSync(file);
      removeEmptyParents(dirname(file), platform === 'systemd' ? 2 : 0);
      this.context.stdout.write(`removed ${file}\n`);
      return Promise.resolve(0);
    } catch (err) {
      return Promise.resolve(reportFailure(err, this.context.stderr));
    }
  }
}

export class ServiceStatusCommand extends Command {
  static override paths = [['service', 'status']];
  static override usage = Command.Usage({ description: 'whether the daemon is set to start at login, and whether it runs' });

  execute(): Promise<number> {
    try {
      const { platform, file, text, dataDir } = context(process.env);
      const out = (line: string) => this.context.stdout.write(`${line}\n`);
      if (!existsSync(file)) {
        out(`not installed (${file} does not exist): tether service install`);
        return Promise.resolve(0);
      }
      out(`installed: ${file}${ours(file) ? '' : ' (not written by tether)'}`);
      const installed = readFileSync(file, 'utf8');
      if (ours(file) && installed !== text) out('it differs from what this tether would write: tether service install updates it');
      const missing = missingProtection(platform, installed);
      if (missing !== null) out(`it lacks ${missing}: ${UNPROTECTED}${ours(file) ? ' (tether service install adds it)' : ''}`);
      if (platform === 'systemd') {
        const loaded = missing === null ? loadedKillMode() : null;
        if (loaded !== null && loaded !== 'process') {
          out(`systemd still runs it with KillMode=${loaded}: ${UNPROTECTED}; have it read the file with: systemctl --user daemon-reload`);
        }
        out(`enabled: ${enabledLink(file) ? 'yes' : `no (${enableCommand(platform, file)})`}`);
        const active = spawnSync('systemctl', ['--user', 'is-active', SYSTEMD_UNIT_NAME], { encoding: 'utf8' });
        out(`running: ${active.error ? 'unknown (systemctl could not be run)' : active.stdout.trim() || 'unknown'}`);
        out(`logs: journalctl --user -u ${SYSTEMD_UNIT_NAME}, and ${join(dataDir, DATA_DIR_NAMES.log)}`);
      } else {
        const listed = spawnSync('launchctl', ['print', `gui/${process.getuid?.() ?? ''}/${LAUNCHD_LABEL}`], { encoding: 'utf8' });
        out(`loaded: ${listed.error ? 'unknown (launchctl could not be run)' : listed.status === 0 ? 'yes' : 'no'}`);
        out(`logs: ${join(dataDir, DATA_DIR_NAMES.log)} (start-up output: ${join(dataDir, DATA_DIR_NAMES.run, RUN_DIR_NAMES.serviceOut)})`);
      }
      return Promise.resolve(0);
    } catch (err) {
      return Promise.resolve(reportFailure(err, this.context.stderr));
    }
  }
}
