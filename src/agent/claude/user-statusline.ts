/**
 * The user's own Claude Code statusLine, which the one in tether's settings file replaces (a
 * statusLine given with `--settings` wins over the user's and the project's, measured): tether's
 * statusLine program runs it in its place, found the way Claude finds it, read at each run (a
 * change applies at once): `<project>/.claude/settings.local.json`, then
 * `<project>/.claude/settings.json`, then the user's `settings.json` (`$CLAUDE_CONFIG_DIR`, else
 * `~/.claude`); the first whose `statusLine.command` is a command wins (docs/agents.md "Usage").
 *
 * Invariants: only reads, never writes a user's file; tether's own settings file is never among
 * the files read, and a command that runs tether's statusLine program is no user's (no loop);
 * nothing here throws; imports only node's fs and path (the program loads it on every run).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * What tether's program prints for a user without a statusLine: an SGR reset, zero columns wide.
 * Claude then draws no status line row at all (an empty output leaves an empty row), measured.
 */
export const NO_STATUS_LINE = '\u001b[0m';

/** Largest settings file read. */
const MAX_SETTINGS_BYTES = 1024 * 1024;

/** Where Claude keeps the user's files: `$CLAUDE_CONFIG_DIR`, else `~/.claude`. */
export function claudeUserDir(env: NodeJS.ProcessEnv): string | null {
  if (env.CLAUDE_CONFIG_DIR) return env.CLAUDE_CONFIG_DIR;
  return env.HOME ? join(env.HOME, '.claude') : null;
}

/** The settings files a statusLine is looked for in, the one Claude prefers first. */
export function statusLineSources(projectDir: string | null, env: NodeJS.ProcessEnv): string[] {
  const user = claudeUserDir(env);
  return [
    ...(projectDir !== null ? [join(projectDir, '.claude', 'settings.local.json'), join(projectDir, '.claude', 'settings.json')] : []),
    ...(user !== null ? [join(user, 'settings.json')] : []),
  ];
}

/** The project Claude works in, from a statusLine input: `workspace.project_dir`, else `cwd`, else `fallback`. */
export function statusLineProjectDir(input: unknown, fallback: string | null): string | null {
  const o = isObject(input) ? input : {};
  const workspace = isObject(o.workspace) ? o.workspace : {};
  for (const dir of [workspace.project_dir, o.cwd]) if (typeof dir === 'string' && dir.startsWith('/')) return dir;
  return fallback;
}

/** Whether a command runs tether's own statusLine program (it must not run itself). */
export function isTethersStatusLine(command: string): boolean {
  return /[\\/]agent[\\/]claude[\\/]statusline\.js\b/.test(command);
}

/** The `statusLine.command` of one settings file's text, or null (no file, not JSON, no command). */
export function statusLineCommandOf(text: string | null): string | null {
  if (text === null) return null;
  try {
    const settings: unknown = JSON.parse(text);
    const line = isObject(settings) ? settings.statusLine : null;
    const command = isObject(line) ? line.command : null;
    return typeof command === 'string' && command.trim() !== '' ? command : null;
  } catch {
    return null;
  }
}

/** A file's text, or null when it cannot be read. */
function readText(path: string): string | null {
  try {
    return readFileSync(path).subarray(0, MAX_SETTINGS_BYTES).toString('utf8');
  } catch {
    return null;
  }
}

/** The user's own statusLine command for a Claude working in `projectDir`, or null when they have none. */
export function userStatusLine(
  projectDir: string | null,
  env: NodeJS.ProcessEnv,
  read: (path: string) => string | null = readText,
): string | null {
  for (const file of statusLineSources(projectDir, env)) {
    const command = statusLineCommandOf(read(file));
    if (command !== null) return isTethersStatusLine(command) ? null : command;
  }
  return null;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
