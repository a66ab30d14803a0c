/**
 * How a session's agent is started with tether's integration injected, by kind: the agent's own
 * argv (the configured command line and `args`) plus what its adapter adds (pi: the extension;
 * Claude Code: a settings file with tether's hooks; Codex: its `notify` program), plus how a
 * restored session reopens its conversation. Every word is one argv element: nothing here is
 * ever read by a shell, and a user's own agent files (`~/.claude`, `~/.codex`) are never edited.
 */
import { claudeArgv } from './claude/launch.js';
import { codexArgv } from './codex/launch.js';
import type { AgentKindResolved } from './kinds.js';
import { piArgv } from './pi/launch.js';

/** Where each adapter's integration lives (absolute paths, decided by the composition root). */
export interface AgentIntegration {
  /** pi: the tether extension (`dist/extension/index.js`). */
  readonly piExtension: string;
  /** Claude Code: the settings file holding tether's hooks (`--settings`); null: not written, run without. */
  readonly claudeSettings: string | null;
  /** Codex: the notify program's argv (`node`, the script); null: run without. */
  readonly codexNotify: readonly string[] | null;
}

/** What a launch continues: pi's conversation file, or another agent's conversation id. */
export interface AgentResume {
  readonly sessionFile?: string | null;
  /** Claude Code's `session_id`, Codex's thread id. */
  readonly conversation?: string | null;
}

/** The argv a session of this kind runs: the agent's own, then tether's additions. */
export function integratedArgv(
  kind: AgentKindResolved,
  argv: readonly string[],
  integration: AgentIntegration,
  resume: AgentResume = {},
): string[] {
  switch (kind) {
    case 'pi':
      return piArgv(argv, integration.piExtension, resume.sessionFile ?? null);
    case 'claude':
      return claudeArgv(argv, integration.claudeSettings, resume.conversation ?? null);
    case 'codex':
      return codexArgv(argv, integration.codexNotify, resume.conversation ?? null);
    case 'other':
      return [...argv];
  }
}

/** Whether the kind reports state to tether (its panes get the agent socket's path). */
export function reportsState(kind: AgentKindResolved): boolean {
  return kind !== 'other';
}
