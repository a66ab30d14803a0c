/**
 * Which agent a program is: the kinds tether integrates with (one adapter folder each:
 * `pi/`, `claude/`, `codex/`) and `other` (runs as it is, reports no state). `[agent] kind`
 * and `[agents.<name>] kind` decide; `auto` looks at the program (docs/agents.md).
 *
 * Invariant: `auto` only reads the program's file name and where its links lead, never runs it.
 */
import { realpathSync } from 'node:fs';
import { basename } from 'node:path';

/** An agent kind once `auto` is decided. */
export type AgentKindResolved = 'pi' | 'claude' | 'codex' | 'other';
/** The agents whose integration arrives by hook programs (short connections) rather than a long one. */
export type HookAgentKind = 'claude' | 'codex';
export const HOOK_AGENT_KINDS: readonly HookAgentKind[] = ['claude', 'codex'];

/** The file of an installed agent package's CLI, for `auto` (npm links `claude`/`codex` to it). */
const PACKAGE_CLI: readonly (readonly [AgentKindResolved, RegExp])[] = [
  ['pi', /[\\/]pi-coding-agent[\\/]dist[\\/]cli\.js$/],
  ['claude', /[\\/]@anthropic-ai[\\/]claude-code[\\/][^\\/]+$/],
  ['codex', /[\\/]@openai[\\/]codex[\\/]bin[\\/]codex\.js$/],
];

function byName(file: string): AgentKindResolved | null {
  const name = basename(file);
  return name === 'pi' || name === 'claude' || name === 'codex' ? name : null;
}

/**
 * The `auto` rule: a program named `pi`, `claude` or `codex`, or (a link to) an installed
 * agent package's CLI. A wrapper script of another name needs its `kind` said.
 */
export function detectAgentKind(program: string): AgentKindResolved {
  const named = byName(program);
  if (named) return named;
  let real: string;
  try {
    real = realpathSync(program);
  } catch {
    return 'other';
  }
  return byName(real) ?? PACKAGE_CLI.find(([, re]) => re.test(real))?.[0] ?? 'other';
}

/** A configured kind (`auto` decided from `program`). */
export function resolveAgentKind(kind: string, program: string): AgentKindResolved {
  if (kind === 'pi' || kind === 'claude' || kind === 'codex' || kind === 'other') return kind;
  return detectAgentKind(program);
}
