/**
 * Which agent runs in a new session's pane: the configured command found on PATH, else the pi
 * that ships with tether (the `@mariozechner/pi-coding-agent` dependency, or the newer
 * `@earendil-works/pi-coding-agent` where that is installed and the runtime can run it).
 * Part of the composition root: it reads PATH and the environment so nothing else has to.
 */
import { accessSync, constants, existsSync, readFileSync } from 'node:fs';
import { basename, delimiter, dirname, isAbsolute, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AgentLaunch } from '../actors/session.actor.js';
import { AGENT_SOCKET_ENV } from '../agent/protocol.js';

/** Agent packages tether can run as the bundled pi, newest first. */
const BUNDLED_PI_PACKAGES = ['@earendil-works/pi-coding-agent', '@mariozechner/pi-coding-agent'] as const;
/**
 * Variables passed from the daemon into new panes (tmux panes otherwise get the tmux server's
 * environment). tether's own make the extension in the pane find this daemon's data dir and
 * config (and start the same daemon when none runs).
 */
const PASSED_ENV = ['PI_OFFLINE', 'PI_CODING_AGENT_DIR', 'TETHER_DATA_DIR', 'TETHER_CONFIG'] as const;

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Finds `command` the way a shell would: a path as given, else the first match on PATH. */
export function findOnPath(command: string, pathVar: string | undefined): string | null {
  if (command.includes('/')) return isExecutable(command) ? command : null;
  for (const dir of (pathVar ?? '').split(delimiter)) {
    if (dir === '' || !isAbsolute(dir)) continue;
    const candidate = join(dir, command);
    if (isExecutable(candidate)) return candidate;
  }
  return null;
}

/** The package.json of an installed package, found the way Node looks for node_modules. */
function findPackageManifest(pkg: string): string | null {
  // The agent packages export no ./package.json, so resolve by walking up instead.
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, 'node_modules', pkg, 'package.json');
    if (existsSync(candidate)) return candidate;
    const parent = dirname(dir);
    if (parent === dir) return null;
    dir = parent;
  }
}

/** The bundled pi's CLI script, or null when no installed agent package can run on this Node. */
export function bundledPi(nodeVersion = process.versions.node): string | null {
  const [major = 0, minor = 0] = nodeVersion.split('.').map(Number);
  for (const pkg of BUNDLED_PI_PACKAGES) {
    const manifestPath = findPackageManifest(pkg);
    if (!manifestPath) continue;
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as { bin?: Record<string, string>; engines?: { node?: string } };
    const need = /(\d+)\.(\d+)/.exec(manifest.engines?.node ?? '');
    if (need && (major < Number(need[1]) || (major === Number(need[1]) && minor < Number(need[2])))) continue;
    const bin = manifest.bin?.pi;
    if (bin) return join(dirname(manifestPath), bin);
  }
  return null;
}

/** Thrown when neither the configured command nor a bundled pi can be found. */
export class AgentNotFoundError extends Error {
  constructor(command: string) {
    super(`agent command "${command}" was not found on PATH and no bundled pi can run here: set [agent] command in the config`);
    this.name = 'AgentNotFoundError';
  }
}

/** The agent's argv (no arguments of tether's), and whether it is pi. */
export function resolveAgentCommand(command: string, env: NodeJS.ProcessEnv): { argv: string[]; isPi: boolean } {
  const found = findOnPath(command, env.PATH);
  if (found) return { argv: [found], isPi: basename(found) === 'pi' };
  if (command === 'pi') {
    const script = bundledPi();
    if (!script) throw new AgentNotFoundError(command);
    return { argv: [process.execPath, script], isPi: true };
  }
  throw new AgentNotFoundError(command);
}

/** The tether extension for pi, built beside this file (dist/extension/index.js). */
export function extensionPath(): string {
  return fileURLToPath(new URL('../extension/index.js', import.meta.url));
}

/** How a launch continues earlier work: pi reopens the conversation kept in `sessionFile`. */
export interface AgentResume {
  readonly sessionFile?: string | null;
}

/**
 * How to launch the agent in a new pane, decided once at start. pi gets the tether extension
 * and `--tether` (last: pi's boolean extension flags take the next word as their value), and
 * `agentSocket` in `AGENT_SOCKET_ENV`; another command runs as it is. A restored session's pi
 * reopens its conversation (`--session <file>`).
 */
export function resolveAgent(
  command: string,
  env: NodeJS.ProcessEnv,
  opts: { agentSocket?: string } = {},
): (cwd: string, resume?: AgentResume) => AgentLaunch {
  const passed: Record<string, string> = {};
  for (const key of PASSED_ENV) {
    const value = env[key];
    if (value !== undefined) passed[key] = value;
  }
  const { argv, isPi } = resolveAgentCommand(command, env);
  if (isPi && opts.agentSocket !== undefined) passed[AGENT_SOCKET_ENV] = opts.agentSocket;
  const tail = isPi ? ['-e', extensionPath(), '--tether'] : [];
  return (cwd, resume = {}) => ({
    command: [...argv, ...(isPi && resume.sessionFile ? ['--session', resume.sessionFile] : []), ...tail],
    env: passed,
    cwd,
  });
}
