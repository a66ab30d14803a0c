/**
 * Which agent a program is: one of the adapters of src/agent/contract/adapters.ts, or `other` (runs as it
 * is, reports no state). `[agent] kind` and `[agents.<name>] kind` decide; `auto` looks at the
 * program (docs/agents.md).
 *
 * Invariant: `auto` only reads the program's file name and where its links lead, never runs it.
 */
import { realpathSync } from 'node:fs';
import { basename } from 'node:path';
import type { AgentAdapter } from './adapter.js';
import { AGENT_ADAPTERS } from './adapters.js';

/** An agent kind once `auto` is decided: an adapter's kind, or `other`. */
export type AgentKindResolved = string;
/** The kind of a program tether does not integrate with. */
export const OTHER_KIND = 'other';
/** The kind that decides by looking at the program. */
export const AUTO_KIND = 'auto';

/** Every kind a config may name: `auto`, each adapter's, `other`. */
export function agentKinds(): string[] {
  return [AUTO_KIND, ...AGENT_ADAPTERS.map((a) => a.kind), OTHER_KIND];
}

/** The adapter of a kind, or null (`other`, or a kind tether does not know). */
export function adapterOf(kind: string | null | undefined): AgentAdapter | null {
  return AGENT_ADAPTERS.find((a) => a.kind === kind) ?? null;
}

/** The adapter whose program is named like `program`'s file (`claude`), or null. */
export function adapterNamed(program: string): AgentAdapter | null {
  const name = basename(program);
  return AGENT_ADAPTERS.find((a) => a.programs.includes(name)) ?? null;
}

/**
 * The `auto` rule: a program named as an adapter's (`claude`), or (a link to) an installed agent
 * package's CLI. A wrapper script of another name needs its `kind` said.
 */
export function detectAgentKind(program: string): AgentKindResolved {
  const named = adapterNamed(program);
  if (named) return named.kind;
  let real: string;
  try {
    real = realpathSync(program);
  } catch {
    return OTHER_KIND;
  }
  return (adapterNamed(real) ?? AGENT_ADAPTERS.find((a) => a.packageCli.test(real)))?.kind ?? OTHER_KIND;
}

/** A configured kind (`auto` decided from `program`). */
export function resolveAgentKind(kind: string, program: string): AgentKindResolved {
  if (kind === OTHER_KIND || adapterOf(kind)) return kind;
  return detectAgentKind(program);
}
