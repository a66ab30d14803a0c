/**
 * Claude Code's slash commands for `GET /sessions/:id/commands`: its built-ins (a fixed list,
 * Claude Code 2.1), then the project's and the user's custom commands, read by the daemon from
 * `<cwd>/.claude/commands/*.md` and `~/.claude/commands/*.md` (`$CLAUDE_CONFIG_DIR/commands`
 * when that is set), each described by its frontmatter `description` (else its first line).
 *
 * Invariants: reading is bounded (files per directory, bytes per file); a file that cannot be
 * read is skipped; a name that is not one short word is skipped.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { MAX_COMMAND_DESCRIPTION_CHARS, MAX_COMMAND_NAME_CHARS } from '../wire/extension-channel.js';
import type { SlashCommand } from '../contract/commands.js';

/** Most command files read per directory. */
export const MAX_COMMAND_FILES = 500;
/** Most bytes read of one command file (the frontmatter and first line are at its start). */
export const MAX_COMMAND_FILE_BYTES = 64 * 1024;

export const CLAUDE_BUILTIN_COMMANDS: readonly SlashCommand[] = Object.freeze([
  { name: 'add-dir', description: 'Add a new working directory' },
  { name: 'agents', description: 'Manage agent configurations' },
  { name: 'clear', description: 'Clear conversation history and free up context' },
  { name: 'compact', description: 'Clear conversation history but keep a summary in context' },
  { name: 'config', description: 'Open config panel' },
  { name: 'context', description: 'Visualize current context usage' },
  { name: 'cost', description: 'Show the total cost and duration of the current session' },
  { name: 'doctor', description: 'Diagnose and verify your Claude Code installation and settings' },
  { name: 'exit', description: 'Exit the REPL' },
  { name: 'export', description: 'Export the current conversation to a file or clipboard' },
  { name: 'help', description: 'Show help and available commands' },
  { name: 'hooks', description: 'Manage hook configurations for tool events' },
  { name: 'ide', description: 'Manage IDE integrations and show status' },
  { name: 'init', description: 'Initialize a new CLAUDE.md file with codebase documentation' },
  { name: 'login', description: 'Sign in with your Anthropic account' },
  { name: 'logout', description: 'Sign out from your Anthropic account' },
  { name: 'mcp', description: 'Manage MCP servers' },
  { name: 'memory', description: 'Edit Claude memory files' },
  { name: 'model', description: 'Set the AI model for Claude Code' },
  { name: 'output-style', description: 'Set the output style' },
  { name: 'permissions', description: 'Manage allow and deny tool permission rules' },
  { name: 'plugin', description: 'Manage Claude Code plugins' },
  { name: 'pr-comments', description: 'Get comments from a GitHub pull request' },
  { name: 'release-notes', description: 'View release notes' },
  { name: 'resume', description: 'Resume a conversation' },
  { name: 'review', description: 'Review a pull request' },
  { name: 'rewind', description: 'Restore the code and/or conversation to a previous point' },
  { name: 'security-review', description: 'Complete a security review of the pending changes on the current branch' },
  { name: 'status', description: 'Show Claude Code status including version, model, account and connectivity' },
  { name: 'statusline', description: "Set up Claude Code's status line UI" },
  { name: 'terminal-setup', description: 'Install Shift+Enter key binding for newlines' },
  { name: 'todos', description: 'List current todo items' },
  { name: 'usage', description: 'Show plan usage limits' },
  { name: 'vim', description: 'Toggle between Vim and Normal editing modes' },
]);

/** A frontmatter value without its quotes. */
function unquote(v: string): string {
  const t = v.trim();
  return (t.startsWith('"') && t.endsWith('"')) || (t.startsWith("'") && t.endsWith("'")) ? t.slice(1, -1) : t;
}

/**
 * A command file's description and argument hint: the frontmatter's `description` and
 * `argument-hint` (`key: value` lines between `---` lines), else the first non-empty line of the body.
 */
export function readCommandFile(text: string): { description: string; argumentHint?: string } {
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  const meta: Record<string, string> = {};
  let body = 0;
  if (lines[0]?.trim() === '---') {
    const end = lines.findIndex((l, i) => i > 0 && l.trim() === '---');
    if (end > 0) {
      for (const line of lines.slice(1, end)) {
        const m = /^([A-Za-z][\w-]*)\s*:\s*(.*)$/.exec(line);
        if (m) meta[m[1]!] = unquote(m[2]!);
      }
      body = end + 1;
    }
  }
  const first =
    lines
      .slice(body)
      .find((l) => l.trim() !== '')
      ?.trim() ?? '';
  const description = (meta.description || first.replace(/^#+\s*/, '')).slice(0, MAX_COMMAND_DESCRIPTION_CHARS);
  return { description, ...(meta['argument-hint'] ? { argumentHint: meta['argument-hint'] } : {}) };
}

async function readHead(path: string): Promise<string | null> {
  try {
    const bytes = await readFile(path);
    return bytes.subarray(0, MAX_COMMAND_FILE_BYTES).toString('utf8');
  } catch {
    return null;
  }
}

/** The commands of one `commands` directory, by file name; [] when there is none. */
export async function readCommandDir(dir: string, scope: 'project' | 'user'): Promise<SlashCommand[]> {
  let names: string[];
  try {
    names = (await readdir(dir)).filter((n) => n.endsWith('.md')).sort();
  } catch {
    return [];
  }
  const out: SlashCommand[] = [];
  for (const file of names.slice(0, MAX_COMMAND_FILES)) {
    const name = file.slice(0, -'.md'.length);
    // One word of printable characters (the protocol's rule for a command name).
    if (name === '' || name.length > MAX_COMMAND_NAME_CHARS || /\s/.test(name) || [...name].some((c) => c.charCodeAt(0) < 0x20)) continue;
    const text = await readHead(join(dir, file));
    if (text === null) continue;
    const { description, argumentHint } = readCommandFile(text);
    const shown = description === '' ? `(${scope})` : `${description} (${scope})`;
    out.push({ name, description: shown, ...(argumentHint !== undefined ? { args: { hint: argumentHint } } : {}) });
  }
  return out;
}

/** Where Claude keeps the user's files: `$CLAUDE_CONFIG_DIR`, else `~/.claude`. */
export function claudeUserDir(env: NodeJS.ProcessEnv): string | null {
  if (env.CLAUDE_CONFIG_DIR) return env.CLAUDE_CONFIG_DIR;
  return env.HOME ? join(env.HOME, '.claude') : null;
}

/** Claude's custom commands for a session working in `cwd`: the project's first, then the user's. */
export async function claudeCustomCommands(cwd: string | null, env: NodeJS.ProcessEnv): Promise<SlashCommand[]> {
  const user = claudeUserDir(env);
  const [project, own] = await Promise.all([
    cwd !== null ? readCommandDir(join(cwd, '.claude', 'commands'), 'project') : Promise.resolve([]),
    user !== null ? readCommandDir(join(user, 'commands'), 'user') : Promise.resolve([]),
  ]);
  return [...project, ...own];
}
