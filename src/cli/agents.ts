/**
 * The configured agents as the daemon runs them: one launcher per name (`default` for `[agent]`,
 * then every `[agents.<name>]`), the kind of each, Claude Code's settings file written in the data
 * dir, and the catalog the sessions service asks (names, and the slash commands of agents whose
 * adapter lists them). Part of the composition root (docs/agents.md).
 *
 * Preparing them writes nothing: Claude Code's settings file is written by `writeSettings`,
 * which the daemon calls once it holds its port (a refused daemon changes no file).
 *
 * Invariant: the default agent must resolve (the daemon refuses to start otherwise, as before);
 * a named agent whose program is missing is refused when a session asks for it, naming why.
 */
import type { AgentLaunch } from '../actors/session.actor.js';
import { claudeCustomCommands, CLAUDE_BUILTIN_COMMANDS } from '../agent/claude/commands.js';
import { claudeHookCommand, claudeSettingsPath, writeClaudeSettings } from '../agent/claude/settings.js';
import { CODEX_BUILTIN_COMMANDS } from '../agent/codex/commands.js';
import { mergeCommands, type SlashCommand } from '../agent/commands.js';
import type { AgentKindResolved } from '../agent/kinds.js';
import type { Logger } from '../log.js';
import { DEFAULT_AGENT_NAME, type TetherConfig } from '../config/schema.js';
import type { AgentCatalog } from '../service/sessions.service.js';
import { agentNames, agentTable, claudeHookProgram, resolveAgent, resolveAgentProgram, type AgentResume } from './agent.js';

/** The agents of one daemon run. */
export interface DaemonAgents {
  /** The launch of agent `name` (default: `default`) for session `id`, in `cwd`. */
  launch(id: string, cwd: string, name?: string, resume?: AgentResume): AgentLaunch;
  /** The kind of agent `name`, or null when it is not configured. */
  kind(name: string): AgentKindResolved | null;
  /** The catalog for the sessions service; `cwdOf` says where a session's agent works. */
  catalog(cwdOf: (id: string) => string | null): AgentCatalog;
  /**
   * Writes Claude Code's settings file in the data dir when it does not hold them already; when
   * it cannot be written, Claude sessions run without it (and report no state), as said in the log.
   */
  writeSettings(): void;
}

interface Resolved {
  readonly launch: ((cwd: string, resume?: AgentResume) => AgentLaunch) | null;
  readonly kind: AgentKindResolved | null;
  /** Why it cannot be started, when it cannot. */
  readonly problem: string | null;
}

/** Resolves every configured agent; throws when the default one cannot be started. */
export function prepareAgents(
  config: TetherConfig,
  env: NodeJS.ProcessEnv,
  dataDir: string,
  agentSocket: string,
  log: Logger,
): DaemonAgents {
  const hookCommand = claudeHookCommand(process.execPath, claudeHookProgram());
  const resolveAll = (claudeSettings: string | null, quiet: boolean): Map<string, Resolved> => {
    const resolved = new Map<string, Resolved>();
    for (const name of agentNames(config)) {
      const table = agentTable(config, name)!;
      try {
        const { kind } = resolveAgentProgram(table.config, env, table.table);
        const launch = resolveAgent(table.config, env, { agentSocket, table: table.table, ...(claudeSettings ? { claudeSettings } : {}) });
        resolved.set(name, { launch, kind, problem: null });
      } catch (err) {
        if (name === DEFAULT_AGENT_NAME) throw err;
        if (!quiet) log.warn({ agent: name, err: (err as Error).message }, 'a configured agent cannot be started');
        resolved.set(name, { launch: null, kind: null, problem: (err as Error).message });
      }
    }
    return resolved;
  };
  // Launched with the settings file, which is written before any session starts (`writeSettings`).
  let agents = resolveAll(claudeSettingsPath(dataDir), false);
  const get = (name: string): Resolved => agents.get(name) ?? agents.get(DEFAULT_AGENT_NAME)!;
  return {
    launch(id, cwd, name = DEFAULT_AGENT_NAME, resume) {
      const agent = agents.get(name);
      if (!agent) throw new Error(`session ${id} runs the agent "${name}", which is no longer configured`);
      if (!agent.launch) throw new Error(agent.problem ?? `the agent "${name}" cannot be started`);
      return { ...agent.launch(cwd, resume), agent: name };
    },
    kind: (name) => agents.get(name)?.kind ?? null,
    writeSettings: () => {
      try {
        writeClaudeSettings(dataDir, hookCommand);
      } catch (err) {
        log.warn({ err: (err as Error).message }, "Claude Code's settings file could not be written: Claude sessions report no state");
        agents = resolveAll(null, true);
      }
    },
    catalog: (cwdOf) => ({
      names: () => [...agents.keys()],
      problem: (name) => agents.get(name)?.problem ?? null,
      commands: (id, name): Promise<readonly SlashCommand[]> | null => {
        const kind = get(name).kind;
        // Codex 0.169 reads no custom commands: its built-ins are the list.
        if (kind === 'codex') return Promise.resolve(CODEX_BUILTIN_COMMANDS);
        if (kind !== 'claude') return null;
        return claudeCustomCommands(cwdOf(id), env).then((custom) => mergeCommands(CLAUDE_BUILTIN_COMMANDS, custom));
      },
    }),
  };
}
