/**
 * Which agent runs in a new session's pane: the configured command line of `[agent]` or of an
 * `[agents.<name>]` (its program found on PATH, else the copy tether ships of an agent whose
 * adapter has one), which kind of agent it is, and its adapter's integration (docs/agents.md).
 * The one place that looks an agent's program up on PATH: the daemon's root and `tether attach`
 * call it, with the environment they were given.
 */
import { accessSync, constants } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DomainError } from '../../errors.js';
import type { AgentLaunch } from '../../actors/session.actor.js';
import { AGENT_ADAPTERS } from '../../agent/contract/adapters.js';
import { adapterNamed, adapterOf, AUTO_KIND, resolveAgentKind, type AgentKindResolved } from '../../agent/contract/kinds.js';
import { integratedArgv, integratedEnv, reportsState, type AgentResume } from '../../agent/contract/launch.js';
import { AGENT_SOCKET_ENV } from '../../agent/wire/extension-channel.js';
import { splitCommandLine } from '../../config/command-line.js';
import { DEFAULT_AGENT_NAME, type TetherConfig } from '../../config/schema.js';

export type { AgentResume } from '../../agent/contract/launch.js';

/** What of `[agent]` decides the agent's command. */
export interface AgentCommandConfig {
  /** The command line: the program, then its arguments (split as a shell would, never run by one). */
  readonly command: string;
  /** More arguments, after the command line's own. */
  readonly args: readonly string[];
  /** An agent kind (docs/agents.md): an adapter's, `other` (runs as it is), or `auto` (see `detectAgentKind`). */
  readonly kind: string;
}

/**
 * Variables passed from the daemon into new panes (tmux panes otherwise get the tmux server's
 * environment): tether's own, so a program in the pane finds this daemon's data dir and config
 * (and starts the same daemon when none runs), and those the adapters name.
 */
export function passedEnvNames(): string[] {
  return ['TETHER_DATA_DIR', 'TETHER_CONFIG', ...AGENT_ADAPTERS.flatMap((a) => a.passedEnv)];
}

/** tether's built tree (`dist/`), from this file's place in it (one folder below it: `dist/cli/` bundled, `dist/service/` not). */
export function distDir(): string {
  return fileURLToPath(new URL('../', import.meta.url));
}

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

/**
 * Neither the configured program nor a copy tether ships can be found (`agent-not-found`): the
 * message names the agent and how to install it, when tether knows which agent it is. `table`:
 * where the command is configured (`[agent]`, `[agents.<name>]`).
 */
function agentNotFound(program: string, kind: string, table: string): DomainError {
  const adapter = adapterOf(kind) ?? (kind === AUTO_KIND ? adapterNamed(program) : null);
  const shipped = adapter?.bundled !== undefined ? ` and the ${adapter.product} that ships with tether cannot run here` : '';
  const install = adapter ? `${adapter.product} is not installed: install it with "${adapter.install}", or ` : '';
  return new DomainError(
    'agent-not-found',
    `the agent program "${program}" (${table} command) was not found on PATH${shipped}: ${install}set ${table} command in the config to a program on PATH or a full path`,
  );
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
  // Not on PATH: the copy tether ships of the agent the program is named after, if it has one.
  const named = adapterNamed(program);
  if (named?.bundled && !program.includes('/')) {
    const shipped = named.bundled();
    if (!shipped) throw agentNotFound(program, agent.kind, table);
    return { argv: [...shipped, ...rest], kind: agent.kind === AUTO_KIND ? named.kind : resolveAgentKind(agent.kind, program) };
  }
  throw agentNotFound(program, agent.kind, table);
}

/** What `resolveAgent` needs besides the agent's own command. */
export interface AgentLaunchOptions {
  /** The daemon's agent socket, given to agents that report (`AGENT_SOCKET_ENV`). */
  readonly agentSocket?: string;
  /** What each adapter's `prepare` wrote (Claude Code's settings file), by kind; without it the agent runs without. */
  readonly prepared?: Readonly<Record<string, string>>;
  /** Where the agent is configured, for errors (`[agent]`, `[agents.<name>]`). */
  readonly table?: string;
}

/**
 * How to launch the agent in a new pane, decided once at start: the configured argv plus the
 * integration of its kind (its adapter's), and `agentSocket` in `AGENT_SOCKET_ENV` for an agent
 * that reports; another command runs as it is. A restored session's agent reopens its
 * conversation (its adapter says how).
 */
export function resolveAgent(
  agent: AgentCommandConfig,
  env: NodeJS.ProcessEnv,
  opts: AgentLaunchOptions = {},
): (cwd: string, resume?: AgentResume) => AgentLaunch {
  const passed: Record<string, string> = {};
  for (const key of passedEnvNames()) {
    const value = env[key];
    if (value !== undefined) passed[key] = value;
  }
  const { argv, kind } = resolveAgentProgram(agent, env, opts.table);
  if (reportsState(kind) && opts.agentSocket !== undefined) passed[AGENT_SOCKET_ENV] = opts.agentSocket;
  const ctx = { node: process.execPath, distDir: distDir(), prepared: opts.prepared?.[kind] ?? null };
  const paneEnv = { ...passed, ...integratedEnv(kind, ctx, env) };
  return (cwd, resume = {}) => ({ command: integratedArgv(kind, argv, ctx, resume), env: paneEnv, cwd });
}

/**
 * Writes what each adapter's integration needs in the data dir (Claude Code's settings file), by
 * kind; an adapter whose files cannot be written is left out (its agent runs without) and `failed`
 * says why.
 */
export function prepareAdapters(
  dataDir: string,
  failed: (label: string, err: Error) => void,
  only?: (kind: string) => boolean,
  env: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const adapter of AGENT_ADAPTERS) {
    if (!adapter.prepare || (only && !only(adapter.kind))) continue;
    try {
      out[adapter.kind] = adapter.prepare(dataDir, { node: process.execPath, distDir: distDir(), env });
    } catch (err) {
      failed(adapter.label, err as Error);
    }
  }
  return out;
}

/** Where each adapter's `prepare` writes in the data dir, by kind; writes nothing. */
export function preparedPaths(dataDir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const adapter of AGENT_ADAPTERS) if (adapter.preparedAt) out[adapter.kind] = adapter.preparedAt(dataDir);
  return out;
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
