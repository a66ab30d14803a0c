/**
 * Which agent runs in a new session's pane: the configured command line (its program found on
 * PATH, else, for `pi`, the pi that ships with tether: the `@mariozechner/pi-coding-agent`
 * dependency, or the newer `@earendil-works/pi-coding-agent` where that is installed and the
 * runtime can run it), and whether it is pi (docs/agent.md "Running pi with tether").
 * Part of the composition root: it reads PATH and the environment so nothing else has to.
 */
import { accessSync, constants, existsSync, readFileSync, realpathSync } from 'node:fs';
import { basename, delimiter, dirname, isAbsolute, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AgentLaunch } from '../actors/session.actor.js';
import { AGENT_SOCKET_ENV } from '../agent/protocol.js';
import { splitCommandLine } from '../config/command-line.js';

/** What of `[agent]` decides the agent's command. */
export interface AgentCommandConfig {
  /** The command line: the program, then its arguments (split as a shell would, never run by one). */
  readonly command: string;
  /** More arguments, after the command line's own. */
  readonly args: readonly string[];
  /** An `AgentKind`: `pi` (gets the extension), `other` (runs as it is), or `auto` (see `looksLikePi`). */
  readonly kind: string;
}

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

/** Thrown when neither the configured program nor a bundled pi can be found. */
export class AgentNotFoundError extends Error {
  constructor(program: string) {
    super(
      `the agent program "${program}" ([agent] command) was not found on PATH and no bundled pi can run here: set [agent] command in the config to a program on PATH or a full path`,
    );
    this.name = 'AgentNotFoundError';
  }
}

/**
 * The `auto` rule: the program is pi when its file is named `pi`, or when it is (a link to)
 * the CLI of an installed pi package. A wrapper script of another name needs `kind = "pi"`.
 */
export function looksLikePi(program: string): boolean {
  if (basename(program) === 'pi') return true;
  let real: string;
  try {
    real = realpathSync(program);
  } catch {
    return false;
  }
  return basename(real) === 'pi' || /[\\/]pi-coding-agent[\\/]dist[\\/]cli\.js$/.test(real);
}

/** The agent's argv (the configured arguments, none of tether's), and whether it is pi. */
export function resolveAgentCommand(agent: AgentCommandConfig, env: NodeJS.ProcessEnv): { argv: string[]; isPi: boolean } {
  const [program = '', ...words] = splitCommandLine(agent.command);
  const rest = [...words, ...agent.args];
  const found = findOnPath(program, env.PATH);
  if (found) return { argv: [found, ...rest], isPi: agent.kind === 'pi' || (agent.kind === 'auto' && looksLikePi(found)) };
  if (program === 'pi') {
    const script = bundledPi();
    if (!script) throw new AgentNotFoundError(program);
    return { argv: [process.execPath, script, ...rest], isPi: agent.kind !== 'other' };
  }
  throw new AgentNotFoundError(program);
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
 * and `--tether` after the configured arguments (last: pi's boolean extension flags take the
 * next word as their value; a wrapper script with `kind = "pi"` must pass its arguments on), and
 * `agentSocket` in `AGENT_SOCKET_ENV`; another command runs as it is. A restored session's pi
 * reopens its conversation (`--session <file>`, before tether's own arguments).
 */
export function resolveAgent(
  agent: AgentCommandConfig,
  env: NodeJS.ProcessEnv,
  opts: { agentSocket?: string } = {},
): (cwd: string, resume?: AgentResume) => AgentLaunch {
  const passed: Record<string, string> = {};
  for (const key of PASSED_ENV) {
    const value = env[key];
    if (value !== undefined) passed[key] = value;
  }
  const { argv, isPi } = resolveAgentCommand(agent, env);
  if (isPi && opts.agentSocket !== undefined) passed[AGENT_SOCKET_ENV] = opts.agentSocket;
  const tail = isPi ? ['-e', extensionPath(), '--tether'] : [];
  return (cwd, resume = {}) => ({
    command: [...argv, ...(isPi && resume.sessionFile ? ['--session', resume.sessionFile] : []), ...tail],
    env: passed,
    cwd,
  });
}
