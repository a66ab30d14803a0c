/**
 * Which agent runs in a new session's pane: the configured command line of `[agent]` or of an
 * `[agents.<name>]` (its program found on PATH, else, for `pi`, the pi that ships with tether:
 * the `@mariozechner/pi-coding-agent` dependency, or the newer `@earendil-works/pi-coding-agent`
 * where that is installed and the runtime can run it), which kind of agent it is, and tether's
 * integration for that kind (docs/agents.md). Part of the composition root: it reads PATH and
 * the environment so nothing else has to.
 */
import { accessSync, constants, existsSync, readFileSync } from 'node:fs';
import { delimiter, dirname, isAbsolute, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DomainError } from '../errors.js';
import type { AgentLaunch } from '../actors/session.actor.js';
import { integratedArgv, reportsState, type AgentIntegration, type AgentResume } from '../agent/launch.js';
import { detectAgentKind, resolveAgentKind, type AgentKindResolved } from '../agent/kinds.js';
import { AGENT_SOCKET_ENV } from '../agent/protocol.js';
import { splitCommandLine } from '../config/command-line.js';
import { DEFAULT_AGENT_NAME, type TetherConfig } from '../config/schema.js';

export type { AgentResume } from '../agent/launch.js';

/** What of `[agent]` decides the agent's command. */
export interface AgentCommandConfig {
  /** The command line: the program, then its arguments (split as a shell would, never run by one). */
  readonly command: string;
  /** More arguments, after the command line's own. */
  readonly args: readonly string[];
  /** An `AgentKind`: `pi`, `claude`, `codex` (each with tether's integration), `other` (runs as it is), or `auto` (see `detectAgentKind`). */
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

/**
 * Neither the configured program nor a bundled pi can be found (`agent-not-found`). `table`:
 * where the command is configured (`[agent]`, `[agents.claude]`).
 */
const agentNotFound = (program: string, table = '[agent]'): DomainError =>
  new DomainError(
    'agent-not-found',
    `the agent program "${program}" (${table} command) was not found on PATH and no bundled pi can run here: set ${table} command in the config to a program on PATH or a full path`,
  );

/**
 * The `auto` rule: the program is pi when its file is named `pi`, or when it is (a link to)
 * the CLI of an installed pi package. A wrapper script of another name needs `kind = "pi"`.
 */
export function looksLikePi(program: string): boolean {
  return detectAgentKind(program) === 'pi';
}

/** The agent's argv (the configured arguments, none of tether's) and its kind; `table` names it in errors. */
export function resolveAgentProgram(
  agent: AgentCommandConfig,
  env: NodeJS.ProcessEnv,
  table = '[agent]',
): { argv: string[]; kind: AgentKindResolved } {
  const [program = '', ...words] = splitCommandLine(agent.command);
  const rest = [...words, ...agent.args];
  const found = findOnPath(program, env.PATH);
  if (found) return { argv: [found, ...rest], kind: resolveAgentKind(agent.kind, found) };
  if (program === 'pi') {
    const script = bundledPi();
    if (!script) throw agentNotFound(program, table);
    return { argv: [process.execPath, script, ...rest], kind: agent.kind === 'auto' ? 'pi' : resolveAgentKind(agent.kind, program) };
  }
  throw agentNotFound(program, table);
}

/** The agent's argv (the configured arguments, none of tether's), and whether it is pi. */
export function resolveAgentCommand(agent: AgentCommandConfig, env: NodeJS.ProcessEnv): { argv: string[]; isPi: boolean } {
  const { argv, kind } = resolveAgentProgram(agent, env);
  return { argv, isPi: kind === 'pi' };
}

/** The tether extension for pi, built beside this file (dist/extension/index.js). */
export function extensionPath(): string {
  return fileURLToPath(new URL('../extension/index.js', import.meta.url));
}

/** tether's hook program for Claude Code, built beside this file (dist/agent/claude/hook.js). */
export function claudeHookProgram(): string {
  return fileURLToPath(new URL('../agent/claude/hook.js', import.meta.url));
}

/** tether's notify program for Codex, built beside this file (dist/agent/codex/notify.js). */
export function codexNotifyProgram(): string {
  return fileURLToPath(new URL('../agent/codex/notify.js', import.meta.url));
}

/** What `resolveAgent` needs besides the agent's own command. */
export interface AgentLaunchOptions {
  /** The daemon's agent socket, given to agents that report (`AGENT_SOCKET_ENV`). */
  readonly agentSocket?: string;
  /** Claude Code's settings file with tether's hooks (written by the caller); without it Claude runs without. */
  readonly claudeSettings?: string;
  /** Where the agent is configured, for errors (`[agent]`, `[agents.claude]`). */
  readonly table?: string;
}

/**
 * How to launch the agent in a new pane, decided once at start: the configured argv plus the
 * integration of its kind (src/agent/launch.ts), and `agentSocket` in `AGENT_SOCKET_ENV` for
 * an agent that reports; another command runs as it is. A restored session's agent reopens its
 * conversation (pi: `--session <file>`; Claude Code: `--resume <id>`; Codex: `resume <id>`).
 */
export function resolveAgent(
  agent: AgentCommandConfig,
  env: NodeJS.ProcessEnv,
  opts: AgentLaunchOptions = {},
): (cwd: string, resume?: AgentResume) => AgentLaunch {
  const passed: Record<string, string> = {};
  for (const key of PASSED_ENV) {
    const value = env[key];
    if (value !== undefined) passed[key] = value;
  }
  const { argv, kind } = resolveAgentProgram(agent, env, opts.table);
  if (reportsState(kind) && opts.agentSocket !== undefined) passed[AGENT_SOCKET_ENV] = opts.agentSocket;
  const integration: AgentIntegration = {
    piExtension: extensionPath(),
    claudeSettings: opts.claudeSettings ?? null,
    codexNotify: [process.execPath, codexNotifyProgram()],
  };
  return (cwd, resume = {}) => ({ command: integratedArgv(kind, argv, integration, resume), env: passed, cwd });
}

/** The config table of a named agent (`default` is `[agent]`), or null when none is configured by that name. */
export function agentTable(
  config: Pick<TetherConfig, 'agent' | 'agents'>,
  name: string,
): { config: AgentCommandConfig; table: string } | null {
  if (name === DEFAULT_AGENT_NAME) return { config: config.agent, table: '[agent]' };
  const named = config.agents !== undefined && Object.hasOwn(config.agents, name) ? config.agents[name] : undefined;
  return named ? { config: named, table: `[agents.${name}]` } : null;
}

/** Every configured agent's name: `default` first, then `[agents.<name>]` in the file's order. */
export function agentNames(config: Pick<TetherConfig, 'agents'>): string[] {
  return [DEFAULT_AGENT_NAME, ...Object.keys(config.agents ?? {})];
}
