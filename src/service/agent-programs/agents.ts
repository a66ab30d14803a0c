/**
 * The configured agents as the daemon runs them: one launcher per name (`default` for `[agent]`,
 * then every `[agents.<name>]`), the kind of each, what each adapter's integration needs written
 * in the data dir, and the catalog the sessions service asks (names, and each session's slash
 * commands from its agent's adapter). Made once by the daemon's root (docs/agents.md).
 *
 * Preparing them writes nothing: what the adapters' integrations need in the data dir (a settings
 * file, Claude Code's for one) is written by `writeSettings`, which the daemon calls once it holds its
 * port (a refused daemon changes no file).
 *
 * Invariant: the default agent must resolve (the daemon refuses to start otherwise);
 * a named agent whose program is missing is refused when a session asks for it, naming why.
 */
import type { AgentLaunch } from '../../actors/session.actor.js';
import { DEFAULT_ADAPTER } from '../../agent/contract/adapters.js';
import type { SlashCommand } from '../../agent/contract/commands.js';
import { adapterOf, type AgentKindResolved } from '../../agent/contract/kinds.js';
import type { ReportedCommand } from '../../agent/wire/extension-channel.js';
import type { Logger } from '../../log.js';
import { DEFAULT_AGENT_NAME, type TetherConfig } from '../../config/schema.js';
import type { AgentCatalog } from '../sessions/sessions.service.js';
import {
  agentNames,
  agentTable,
  prepareAdapters,
  preparedPaths,
  resolveAgent,
  resolveAgentProgram,
  type AgentResume,
} from './agent-program.js';

/** The agents of one daemon run. */
export interface DaemonAgents {
  /** The launch of agent `name` (default: `default`) for session `id`, in `cwd`. */
  launch(id: string, cwd: string, name?: string, resume?: AgentResume): AgentLaunch;
  /** The kind of agent `name`, or null when it is not configured. */
  kind(name: string): AgentKindResolved | null;
  /**
   * The catalog for the sessions service: `agents` says where a session's agent works and what it
   * reported; `recordedCwd` where the session started (when its agent said nothing).
   */
  catalog(
    agents: { agentCwd(id: string): string | null; commands(id: string): readonly ReportedCommand[] | null },
    recordedCwd: (id: string) => string | null,
  ): AgentCatalog;
  /**
   * Writes what each adapter's integration needs in the data dir (Claude Code's settings file)
   * when it does not hold it already; an agent whose files cannot be written runs without them
   * (and reports no state), as said in the log.
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
  const resolveAll = (prepared: Record<string, string>, quiet: boolean): Map<string, Resolved> => {
    const resolved = new Map<string, Resolved>();
    for (const name of agentNames(config)) {
      const table = agentTable(config, name)!;
      try {
        const { kind } = resolveAgentProgram(table.config, env, table.table);
        const launch = resolveAgent(table.config, env, { agentSocket, table: table.table, prepared });
        resolved.set(name, { launch, kind, problem: null });
      } catch (err) {
        if (name === DEFAULT_AGENT_NAME) throw err;
        if (!quiet) log.warn({ agent: name, err: (err as Error).message }, 'a configured agent cannot be started');
        resolved.set(name, { launch: null, kind: null, problem: (err as Error).message });
      }
    }
    return resolved;
  };
  // Launched with the adapters' files, which are written before any session starts (`writeSettings`).
  let agents = resolveAll(preparedPaths(dataDir), false);
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
      let failed = false;
      const written = prepareAdapters(
        dataDir,
        (label, err) => {
          failed = true;
          log.warn({ err: err.message }, `${label}'s integration could not be written: its sessions report no state`);
        },
        undefined,
        env,
      );
      if (failed) agents = resolveAll(written, true);
    },
    catalog: (view, recordedCwd) => ({
      names: () => [...agents.keys()],
      problem: (name) => agents.get(name)?.problem ?? null,
      // An agent tether does not integrate with lists what the default agent's adapter would.
      commands: (id, name): Promise<readonly SlashCommand[]> =>
        Promise.resolve(
          (adapterOf(get(name).kind) ?? DEFAULT_ADAPTER).commands({
            cwd: view.agentCwd(id) ?? recordedCwd(id),
            env,
            reported: view.commands(id),
          }),
        ),
    }),
  };
}
