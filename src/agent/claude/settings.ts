/**
 * The settings file tether gives Claude Code (`claude --settings <file>`): a `hooks` object that
 * runs tether's hook program for each event tether reads, and a `statusLine` that runs tether's
 * statusLine program (statusline.ts: the usage windows, and the user's own statusLine run in its
 * place). Claude merges settings given this way with the user's own (`~/.claude/settings.json`,
 * the project's), so the user's hooks keep firing; a statusLine is one command, tether's wins
 * (the user's `padding` and `refreshInterval` still apply: only `type` and `command` are set
 * here, measured); tether never edits those files. Written in the data dir (0600) when the
 * daemon starts and when `tether attach` makes a Claude session.
 *
 * Invariant: Claude runs a hook's and the statusLine's `command` through a shell, so the paths in
 * them (node and the program) are single-quoted for POSIX sh; nothing a user typed is in them.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeAtomic } from '../../files.js';
import { CLAUDE_HOOK_EVENTS } from './events.js';
import { DATA_DIR_NAMES } from '../../config/data-layout.js';

/** Seconds Claude gives a hook before it stops it (the program gives up after about one). */
const HOOK_TIMEOUT_S = 5;
/** Events whose hooks Claude selects by a matcher (tool name); "*" takes every one. */
const MATCHED_EVENTS = new Set(['PreToolUse', 'PostToolUse', 'PostToolUseFailure', 'PermissionRequest']);

/** `word` as one POSIX shell word. */
export function shellQuote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/** A hook's (or the statusLine's) command line: node running one of tether's programs. */
export function claudeHookCommand(node: string, hookProgram: string): string {
  return `${shellQuote(node)} ${shellQuote(hookProgram)}`;
}

/** Claude's `statusLine` setting as tether gives it: its command only. */
export interface ClaudeStatusLine {
  readonly type: 'command';
  readonly command: string;
}

/** The settings object: one command hook per event tether reads, and a statusLine running `statusLine` when it is given. */
export function claudeSettings(command: string, statusLine?: string): { hooks: Record<string, unknown[]>; statusLine?: ClaudeStatusLine } {
  const hook = { type: 'command', command, timeout: HOOK_TIMEOUT_S };
  const hooks: Record<string, unknown[]> = {};
  for (const event of CLAUDE_HOOK_EVENTS) hooks[event] = [{ ...(MATCHED_EVENTS.has(event) ? { matcher: '*' } : {}), hooks: [hook] }];
  return { hooks, ...(statusLine !== undefined ? { statusLine: { type: 'command', command: statusLine } } : {}) };
}

/** Where the settings file lives in the data dir. */
export function claudeSettingsPath(dataDir: string): string {
  return join(dataDir, DATA_DIR_NAMES.agents, 'claude-settings.json');
}

/** Writes the settings file (only when it differs); returns its path. Throws on an I/O failure. */
export function writeClaudeSettings(dataDir: string, command: string, statusLine: string): string {
  const path = claudeSettingsPath(dataDir);
  const text = `${JSON.stringify(claudeSettings(command, statusLine), null, 2)}\n`;
  let current: string | null = null;
  try {
    current = readFileSync(path, 'utf8');
  } catch {
    // Not written yet.
  }
  if (current === text) return path;
  mkdirSync(join(dataDir, DATA_DIR_NAMES.agents), { recursive: true, mode: 0o700 });
  writeAtomic(path, text, (_code, message) => new Error(message));
  return path;
}
