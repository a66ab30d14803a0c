/**
 * What is wrong with a config value, said in words: the first problem the schema (or a rule
 * across fields) finds, as the key at fault and one line naming what it must be and what it is.
 *
 * Invariant: a value with no problem here is a complete, valid `TetherConfig`; every quoted bad
 * value is cut to a short line.
 */
import type { TSchema } from 'typebox';
import type { TAdditionalPropertiesError, TLocalizedValidationError } from 'typebox/error';
import { isDomainError } from '../errors.js';
import { typeboxType, typeboxValue } from '../protocol/schema-check.js';
import { cutText } from '../protocol/text.js';
import { splitCommandLine } from './command-line.js';
import { CHECKS, TetherConfigSchema } from './config.checks.js';
import {
  AGENT_NAME_EXPECTED,
  COMMAND_LINE_EXPECTED,
  DEFAULT_AGENT_NAME,
  isValidAgentName,
  tetherConfigSchema,
  type TetherConfig,
} from './schema.js';

/** Longest excerpt of a bad value quoted in an error. */
const MAX_QUOTED_CHARS = 61;

/** One thing wrong: the dotted key at fault and the line that says so. */
export interface Problem {
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
export function firstProblem(value: unknown): Problem | null {
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

/** What the schema says a value at `at` must be, in words (its `expected`). */
export function expectedOf(at: readonly string[]): string {
  return schemaAt(at)?.expected ?? 'a valid value';
}

function valueAt(value: unknown, at: readonly string[]): unknown {
  let v = value;
  for (const k of at) v = typeof v === 'object' && v !== null ? (v as Record<string, unknown>)[k] : undefined;
  return v;
}

/** A key as TOML writes it: bare when it can be, else quoted. */
export function formatKey(k: string): string {
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

/** A text as the error quotes it: JSON-quoted, cut to a short line. */
export function quote(s: string): string {
  return JSON.stringify(cutText(s, MAX_QUOTED_CHARS));
}
