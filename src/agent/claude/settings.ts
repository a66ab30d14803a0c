/**
 * The settings file tether gives Claude Code (`claude --settings <file>`): a `hooks` object that
 * runs tether's hook program for each event tether reads. Claude merges settings given this way
 * with the user's own (`~/.claude/settings.json`, the project's), so the user's hooks keep
 * firing; tether never edits those files. Written in the data dir (0600) when the daemon starts
 * and when `tether attach` makes a Claude session.
 *
 * Invariant: Claude runs a hook's `command` through a shell, so the two paths in it (node and
 * the hook program) are single-quoted for POSIX sh; nothing a user typed is in it.
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

/** The hook's command line: node running tether's hook program. */
export function claudeHookCommand(node: string, hookProgram: string): string {
  return `${shellQuote(node)} ${shellQuote(hookProgram)}`;
}

/** The settings object: one command hook per event tether reads. */
export function claudeSettings(command: string): { hooks: Record<string, unknown[]> } {
  const hook = { type: 'command', command, timeout: HOOK_TIMEOUT_S };
  const hooks: Record<string, unknown[]> = {};
  for (const event of CLAUDE_HOOK_EVENTS) hooks[event] = [{ ...(MATCHED_EVENTS.has(event) ? { matcher: '*' } : {}), hooks: [hook] }];
  return { hooks };
}

/** Where the settings file lives in the data dir. */
export function claudeSettingsPath(dataDir: string): string {
  return join(dataDir, DATA_DIR_NAMES.agents, 'claude-settings.json');
}

/** Writes the settings file (only when it differs); returns its path. Throws on an I/O failure. */
export function writeClaudeSettings(dataDir: string, command: string): string {
  const path = claudeSettingsPath(dataDir);
  const text = `${JSON.stringify(claudeSettings(command), null, 2)}\n`;
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
