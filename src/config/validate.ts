/**
 * Checks a parsed config against the schema and the known agent kinds, filling in defaults, and
 * lays the `TETHER_*` variables over a valid one (docs/configuration.md).
 *
 * Invariant: what comes out is complete and valid; whatever is wrong throws one `ConfigError`
 * naming the file or variable and the key.
 */
import { ConfigError } from './config-error.js';
import { TetherConfigSchema } from './config.checks.js';
import { fillDefaults } from './defaults.js';
import { expectedOf, firstProblem, formatKey, quote } from './problems.js';
import type { TetherConfig } from './schema.js';

/** An environment variable that overrides one key. Empty counts as unset. */
interface EnvOverride {
  readonly variable: string;
  readonly key: readonly [string] | readonly [string, string];
  /** The variable's text to the key's value; unrecognised text is passed on to fail validation. */
  readonly parse: (text: string) => unknown;
  /** What the variable must hold, when it differs from the key's `expected`. */
  readonly expected?: string;
}

/** The overrides a test or a service manager needs (docs/configuration.md). */
export const ENV_OVERRIDES: readonly EnvOverride[] = [
  { variable: 'TETHER_BIND', key: ['bindAddress'], parse: (t) => t },
  { variable: 'TETHER_TMUX_SOCKET', key: ['tmux', 'socket'], parse: (t) => t },
  { variable: 'TETHER_TLS', key: ['tls'], parse: parseFlag, expected: '"1" or "0" (also "true" or "false")' },
  { variable: 'TETHER_AGENT_COMMAND', key: ['agent', 'command'], parse: (t) => t },
];

function parseFlag(text: string): unknown {
  const t = text.trim().toLowerCase();
  if (t === '1' || t === 'true') return true;
  if (t === '0' || t === 'false') return false;
  return text;
}

/** What `loadConfig` checks beyond the schema. */
export interface ConfigChecks {
  /** The agent kinds a `kind` may name (`auto`, the adapters' kinds, `other`); absent: any word. */
  readonly agentKinds?: readonly string[];
}

/** Checks a parsed file against the schema, filling in defaults; `source` names it in errors. */
export function validateConfig(raw: unknown, source: string, checks: ConfigChecks = {}): TetherConfig {
  const value = fillDefaults(TetherConfigSchema, fillNamedAgentDefaults(structuredClone(raw)));
  const problem = firstProblem(value);
  if (problem !== null) throw new ConfigError(source, problem.key, problem.detail);
  const config = structuredClone(value as TetherConfig);
  if (checks.agentKinds) checkAgentKinds(config, source, checks.agentKinds);
  return config;
}

/** Every `kind` names one of `kinds`; the first that does not is refused as the schema refuses a value. */
function checkAgentKinds(config: TetherConfig, source: string, kinds: readonly string[]): void {
  const tables: [string, string][] = [
    ['agent.kind', config.agent.kind],
    ...Object.entries(config.agents ?? {}).map(([name, t]): [string, string] => [`agents.${formatKey(name)}.kind`, t.kind]),
  ];
  for (const [key, kind] of tables) {
    if (!kinds.includes(kind))
      throw new ConfigError(source, key, `${key} must be one of ${kinds.map((k) => `"${k}"`).join(', ')}, got ${quote(kind)}`);
  }
}

/** `[agents.<name>]` tables get `args` and `kind` defaults as `[agent]` does (the schema's defaults stop at a record). */
function fillNamedAgentDefaults(raw: unknown): unknown {
  const agents = (raw as { agents?: unknown } | null)?.agents;
  if (typeof agents !== 'object' || agents === null || Array.isArray(agents)) return raw;
  for (const table of Object.values(agents as Record<string, unknown>)) {
    if (typeof table !== 'object' || table === null || Array.isArray(table)) continue;
    const t = table as Record<string, unknown>;
    if (!('args' in t)) t.args = [];
    if (!('kind' in t)) t.kind = 'auto';
  }
  return raw;
}

/** Applies the `TETHER_*` overrides to a valid config; a bad value names its variable. */
export function applyEnvOverrides(config: TetherConfig, env: NodeJS.ProcessEnv): TetherConfig {
  let result = config;
  for (const o of ENV_OVERRIDES) {
    const text = env[o.variable];
    if (text === undefined || text === '') continue;
    const next = structuredClone(result) as unknown as Record<string, Record<string, unknown>>;
    const [first, second] = o.key;
    if (second === undefined) (next as Record<string, unknown>)[first] = o.parse(text);
    else next[first]![second] = o.parse(text);
    const problem = firstProblem(next);
    if (problem !== null) {
      const key = o.key.join('.');
      const reason = problem.key === key && problem.reason !== undefined ? `: it has ${problem.reason}` : '';
      throw new ConfigError(o.variable, key, `must be ${o.expected ?? expectedOf(o.key)} (it sets ${key}), got ${quote(text)}${reason}`);
    }
    result = next as unknown as TetherConfig;
  }
  return result;
}
