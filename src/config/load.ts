/**
 * Reads the config (docs/configuration.md): `config.toml`, else a legacy
 * `config.json` beside it (with a warning), else all defaults; then the `TETHER_*` overrides.
 *
 * Invariant: whatever is wrong (unreadable file, syntax, unknown key, bad value, bad
 * variable) ends as one `ConfigError` whose message is one line naming the file or variable,
 * the key, and what is expected; a config that loads is complete and valid.
 */
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { parse as parseToml, TomlError } from 'smol-toml';
import type { TSchema } from 'typebox';
import type { TAdditionalPropertiesError, TLocalizedValidationError } from 'typebox/error';
import { isDomainError } from '../errors.js';
import { typeboxType, typeboxValue } from '../protocol/schema-check.js';
import type { TetherPaths } from './paths.js';
import { splitCommandLine } from './command-line.js';
import { CHECKS, TetherConfigSchema } from './config.checks.js';
import { fillDefaults } from './defaults.js';
import {
  AGENT_NAME_EXPECTED,
  COMMAND_LINE_EXPECTED,
  DEFAULT_AGENT_NAME,
  isValidAgentName,
  tetherConfigSchema,
  tryParseBindAddress,
  type BindAddress,
  type TetherConfig,
} from './schema.js';

/** Largest config file read; anything bigger is not a config file. */
export const MAX_CONFIG_FILE_BYTES = 1024 * 1024;
/** Longest excerpt of a bad value quoted in an error. */
const MAX_QUOTED_CHARS = 60;

/**
 * A config that cannot be used. `message` is one line: `<source>: <what is wrong>`. Internal to
 * start-up (never a client's answer), and kept apart from DomainError because it carries where
 * the fault is (`source`, `key`, `line`) as fields a caller can point at, not only as words.
 */
export class ConfigError extends Error {
  /** The file path or environment variable at fault, or null for a bare value. */
  readonly source: string | null;
  /** The dotted key path (`buffer.session_cap_mb`), or null when no key is at fault. */
  readonly key: string | null;
  /** The line in the file, for syntax errors that know it. */
  readonly line: number | null;
  constructor(source: string | null, key: string | null, detail: string, line: number | null = null) {
    super(oneLine(source === null ? detail : `${source}: ${detail}`));
    this.name = 'ConfigError';
    this.source = source;
    this.key = key;
    this.line = line;
  }
}

/** What `loadConfig` found: the config, the file it came from (null: defaults) and warnings. */
export interface LoadedConfig {
  config: TetherConfig;
  source: string | null;
  warnings: string[];
}

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

/** Splits a bind address into host (no brackets) and port; throws a ConfigError when invalid. */
export function parseBindAddress(s: string): BindAddress {
  const parsed = tryParseBindAddress(s);
  if (parsed === null) throw new ConfigError(null, 'bindAddress', `bindAddress must be ${expectedOf(['bindAddress'])}, got ${quote(s)}`);
  return parsed;
}

/** What `loadConfig` checks beyond the schema. */
export interface ConfigChecks {
  /** The agent kinds a `kind` may name (`auto`, the adapters' kinds, `other`); absent: any word. */
  readonly agentKinds?: readonly string[];
}

/** Loads the config for `paths`, applying the environment's overrides. */
export async function loadConfig(
  paths: Pick<TetherPaths, 'configFile' | 'legacyConfigFile'>,
  env: NodeJS.ProcessEnv,
  checks: ConfigChecks = {},
): Promise<LoadedConfig> {
  const warnings: string[] = [];
  let source: string | null = paths.configFile;
  let text = await readText(paths.configFile);
  if (text !== null) {
    if (paths.legacyConfigFile !== paths.configFile && (await exists(paths.legacyConfigFile))) {
      warnings.push(`${paths.legacyConfigFile} is ignored because ${paths.configFile} exists: delete it`);
    }
  } else {
    text = await readText(paths.legacyConfigFile);
    source = text === null ? null : paths.legacyConfigFile;
  }
  let raw: unknown = {};
  if (source !== null && text !== null) {
    const json = path.extname(source).toLowerCase() === '.json';
    if (json)
      warnings.push(`${source}: JSON config is deprecated: move its settings to ${tomlPathFor(paths.configFile)} (TOML, same keys)`);
    raw = json ? parseJsonText(text, source) : parseTomlText(text, source);
  }
  const config = applyEnvOverrides(validateConfig(raw, source ?? 'defaults', checks), env);
  return { config, source, warnings };
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

/** The file's text, or null when it does not exist. */
async function readText(file: string): Promise<string | null> {
  let bytes: Buffer;
  try {
    const info = await stat(file);
    if (info.isFile() && info.size > MAX_CONFIG_FILE_BYTES) {
      throw new ConfigError(file, null, `is larger than ${MAX_CONFIG_FILE_BYTES} bytes: not a config file`);
    }
    bytes = await readFile(file);
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return null;
    throw new ConfigError(file, null, `cannot be read (${code ?? (err as Error).message})`);
  }
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    throw new ConfigError(file, null, 'is not valid UTF-8 text');
  }
}

async function exists(file: string): Promise<boolean> {
  return stat(file).then(
    () => true,
    () => false,
  );
}

function parseTomlText(text: string, file: string): unknown {
  try {
    return parseToml(text);
  } catch (err) {
    if (!(err instanceof TomlError)) throw err;
    const reason = (err.message.split('\n')[0] ?? '').replace(/^Invalid TOML document:\s*/, '');
    throw new ConfigError(file, null, `TOML syntax error on line ${err.line}, column ${err.column}: ${reason}`, err.line);
  }
}

function parseJsonText(text: string, file: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    const reason = (err as Error).message;
    const at = /at position (\d+)/.exec(reason);
    const line = at ? text.slice(0, Number(at[1])).split('\n').length : null;
    throw new ConfigError(file, null, `JSON syntax error${line === null ? '' : ` on line ${line}`}: ${reason}`, line);
  }
}

/** The TOML file a JSON config should move to: the configured one, or config.toml beside it. */
function tomlPathFor(configFile: string): string {
  return path.extname(configFile).toLowerCase() === '.json' ? path.join(path.dirname(configFile), 'config.toml') : configFile;
}

interface Problem {
  readonly key: string;
  readonly detail: string;
  /** What exactly is wrong, when `detail` says more than the expected shape. */
  readonly reason?: string;
}

const checkConfig = CHECKS.get(TetherConfigSchema)!;

/**
 * What is wrong with `value` against the schema, in TypeBox's words: none when the generated
 * check passes it, else TypeBox's own errors over the TypeBox schema (loaded and built only then).
 */
function schemaErrors(value: unknown): TLocalizedValidationError[] {
  if (checkConfig(value)) return [];
  return typeboxValue().Errors(tetherConfigSchema(typeboxType()), value);
}

/** The first thing wrong with `value`: unknown keys first (a typo explains the rest), then values. */
function firstProblem(value: unknown): Problem | null {
  const errors = schemaErrors(value);
  const unknown = errors.find((e): e is TAdditionalPropertiesError & { message: string } => e.keyword === 'additionalProperties');
  if (unknown !== undefined) {
    const parent = pointerToPath(unknown.instancePath);
    const name = unknown.params.additionalProperties[0] ?? '';
    return unknownKeyProblem(parent, name);
  }
  const missing = errors.find((e) => e.keyword === 'required');
  if (missing !== undefined) {
    const at = pointerToPath(missing.instancePath);
    const name = (missing.params as { requiredProperties?: string[] }).requiredProperties?.[0] ?? '';
    const key = [...at, name].map(formatKey).join('.');
    return { key, detail: `${key} is missing: it must be ${expectedOf([...at, name])}` };
  }
  const bad = errors.find((e) => e.keyword !== 'boolean');
  if (bad !== undefined) {
    const at = pointerToPath(bad.instancePath);
    const key = at.map(formatKey).join('.');
    if (at.length === 0) return { key: '', detail: `the file must hold ${expectedOf(at)}, got ${describe(value)}` };
    return { key, detail: `${key} must be ${expectedOf(at)}, got ${describe(valueAt(value, at))}` };
  }
  return crossFieldProblem(value as TetherConfig);
}

/** The command line of `[agent]` or of an `[agents.<name>]` that does not split, as a problem. */
function commandLineProblem(key: string, command: string): Problem | null {
  try {
    splitCommandLine(command);
    return null;
  } catch (err) {
    if (!isDomainError(err, 'command-line-invalid')) throw err;
    return { key, detail: `${key} must be ${COMMAND_LINE_EXPECTED}, got ${quote(command)}: it has ${err.message}`, reason: err.message };
  }
}

function crossFieldProblem(config: TetherConfig): Problem | null {
  const own = commandLineProblem('agent.command', config.agent.command);
  if (own !== null) return own;
  for (const [name, agent] of Object.entries(config.agents ?? {})) {
    if (!isValidAgentName(name) || name === DEFAULT_AGENT_NAME) {
      return {
        key: `agents.${formatKey(name)}`,
        detail: `agents.${formatKey(name)}: an agent name must be ${AGENT_NAME_EXPECTED}, and not "${DEFAULT_AGENT_NAME}" (that is [agent]), got ${quote(name)}`,
      };
    }
    const problem = commandLineProblem(`agents.${name}.command`, agent.command);
    if (problem !== null) return problem;
  }
  const { session_cap_mb, global_cap_mb } = config.buffer;
  if (session_cap_mb > global_cap_mb) {
    return {
      key: 'buffer.session_cap_mb',
      detail: `buffer.session_cap_mb must be at most buffer.global_cap_mb (${global_cap_mb}), got ${session_cap_mb}`,
    };
  }
  return null;
}

function unknownKeyProblem(parent: string[], name: string): Problem {
  const key = [...parent, name].map(formatKey).join('.');
  const known = Object.keys(schemaAt(parent)?.properties ?? {});
  const where = parent.length === 0 ? 'at the top level' : `in [${parent.join('.')}]`;
  const hint = suggestKey(name);
  return { key, detail: `unknown key ${key}${hint === null ? '' : ` (did you mean ${hint}?)`}; known keys ${where}: ${known.join(', ')}` };
}

/** A known key that differs from `name` only in case, `_`/`-`, or its section. */
function suggestKey(name: string): string | null {
  const norm = (s: string): string => s.toLowerCase().replace(/[_-]/g, '');
  const candidates: string[] = [];
  for (const [k, s] of Object.entries(TetherConfigSchema.properties)) {
    if (norm(k) === norm(name)) candidates.push(k);
    const props = (s as { properties?: Record<string, unknown> }).properties ?? {};
    for (const sub of Object.keys(props)) if (norm(sub) === norm(name)) candidates.push(`${k}.${sub}`);
  }
  return candidates[0] ?? null;
}

function pointerToPath(pointer: string): string[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function schemaAt(at: readonly string[]): (TSchema & { properties?: Record<string, TSchema>; expected?: string }) | undefined {
  let s: (TSchema & { properties?: Record<string, TSchema> }) | undefined = TetherConfigSchema;
  for (const k of at) {
    const items: TSchema | undefined = (s as { items?: TSchema } | undefined)?.items;
    // A table of named tables (`[agents.<name>]`): every name has the one schema.
    const named: TSchema | undefined = Object.values(
      (s as { patternProperties?: Record<string, TSchema> } | undefined)?.patternProperties ?? {},
    )[0];
    s = /^\d+$/.test(k) && items !== undefined ? items : (s?.properties?.[k] ?? named);
  }
  return s;
}

function expectedOf(at: readonly string[]): string {
  return schemaAt(at)?.expected ?? 'a valid value';
}

function valueAt(value: unknown, at: readonly string[]): unknown {
  let v = value;
  for (const k of at) v = typeof v === 'object' && v !== null ? (v as Record<string, unknown>)[k] : undefined;
  return v;
}

/** A key as TOML writes it: bare when it can be, else quoted. */
function formatKey(k: string): string {
  return /^[A-Za-z0-9_-]+$/.test(k) ? k : JSON.stringify(k);
}

/** A bad value as the error quotes it, never more than a short line. */
function describe(v: unknown): string {
  if (v === null) return 'null';
  if (v instanceof Date) return `the date ${Number.isNaN(v.getTime()) ? String(v) : v.toISOString()}`;
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'object') return 'a table';
  if (typeof v === 'string') return quote(v);
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  return typeof v;
}

function quote(s: string): string {
  const cut = [...s].length > MAX_QUOTED_CHARS ? `${[...s].slice(0, MAX_QUOTED_CHARS).join('')}…` : s;
  return JSON.stringify(cut);
}

/** Collapses any line breaks so the message stays one line. */
function oneLine(s: string): string {
  return s.replace(/\s*[\r\n]+\s*/g, ' ');
}
