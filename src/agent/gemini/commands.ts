/**
 * Gemini CLI's slash commands for `GET /sessions/:id/commands`: its built-ins (a fixed list, as
 * Gemini CLI 0.61's command popup lists them), then the project's and the user's custom
 * commands, TOML files read by the daemon from `<cwd>/.gemini/commands/` and
 * `<gemini home>/.gemini/commands/` (a file in a subfolder is `/<folder>:<name>`), each described
 * by its `description` (else its `prompt`'s first line).
 *
 * Invariants: reading is bounded (MAX_COMMAND_FILES per directory, subfolders included, and
 * MAX_DEPTH deep; MAX_COMMAND_FILE_BYTES per file); a file that cannot be read is skipped; a name
 * that is not one short word is skipped.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { isCommandName, MAX_COMMAND_FILE_BYTES, MAX_COMMAND_FILES, readFileHead, scopedDescription } from '../contract/command-files.js';
import type { SlashCommand } from '../contract/commands.js';
import { MAX_COMMAND_DESCRIPTION_CHARS } from '../wire/extension-channel.js';
import { geminiUserDir } from './home.js';

/** How deep subfolders are read (`/a:b:c`). */
const MAX_DEPTH = 3;

export const GEMINI_BUILTIN_COMMANDS: readonly SlashCommand[] = Object.freeze([
  { name: 'about', description: 'Show version info' },
  { name: 'agents', description: 'Manage agents' },
  { name: 'auth', description: 'Manage authentication' },
  { name: 'bug', description: 'Submit a bug report' },
  { name: 'bug-memory', description: 'Capture a V8 heap snapshot to disk to attach to a bug report' },
  { name: 'chat', description: 'Browse auto-saved conversations and manage chat checkpoints' },
  { name: 'clear', description: 'Clear the screen and start a new session' },
  { name: 'commands', description: 'Manage custom slash commands. Usage: /commands [list|reload]' },
  { name: 'compress', description: 'Compresses the context by replacing it with a summary' },
  { name: 'copy', description: 'Copy the last result or code snippet to clipboard' },
  { name: 'directory', description: 'Manage workspace directories' },
  { name: 'docs', description: 'Open full Gemini CLI documentation in your browser' },
  { name: 'editor', description: 'Set external editor preference' },
  { name: 'export-session', description: 'Export the current session to a JSON file' },
  { name: 'extensions', description: 'Manage extensions' },
  { name: 'footer', description: 'Configure which items appear in the footer (statusline)' },
  { name: 'gemma', description: 'Check local Gemma model routing status' },
  { name: 'help', description: 'For help on gemini-cli' },
  { name: 'hooks', description: 'Manage hooks' },
  { name: 'ide', description: 'Manage IDE integration' },
  { name: 'init', description: 'Analyzes the project and creates a tailored GEMINI.md file' },
  { name: 'mcp', description: 'Manage configured Model Context Protocol (MCP) servers' },
  { name: 'memory', description: 'Commands for interacting with memory' },
  { name: 'model', description: 'Manage model configuration' },
  { name: 'oncall', description: 'Oncall related commands' },
  { name: 'permissions', description: 'Manage folder trust settings and other permissions' },
  { name: 'plan', description: 'Switch to Plan Mode and view current plan' },
  { name: 'policies', description: 'Manage policies' },
  { name: 'privacy', description: 'Display the privacy notice' },
  { name: 'quit', description: 'Exit the cli' },
  { name: 'resume', description: 'Browse auto-saved conversations and manage chat checkpoints' },
  { name: 'rewind', description: 'Jump back to a specific message and restart the conversation' },
  { name: 'settings', description: 'View and edit Gemini CLI settings' },
  { name: 'setup-github', description: 'Set up GitHub Actions' },
  { name: 'shortcuts', description: 'Toggle the shortcuts panel above the input' },
  { name: 'skills', description: 'List, enable, disable, or reload Gemini CLI agent skills' },
  { name: 'stats', description: 'Check session stats. Usage: /stats [session|model|tools]' },
  { name: 'tasks', description: 'Toggle background tasks view' },
  { name: 'terminal-setup', description: 'Configure terminal keybindings for multiline input (VS Code, Cursor, Windsurf)' },
  { name: 'theme', description: 'Change the theme' },
  { name: 'tools', description: 'List available Gemini CLI tools. Use /tools desc to include descriptions.' },
  { name: 'vim', description: 'Toggle vim mode on/off' },
]);

/** A TOML basic or literal string value of `key` on its own line (`key = "..."`), or null. */
function tomlString(text: string, key: string): string | null {
  const m = new RegExp(`^\\s*${key}\\s*=\\s*("""[\\s\\S]*?"""|'''[\\s\\S]*?'''|"(?:[^"\\\\\\n]|\\\\.)*"|'[^'\\n]*')`, 'm').exec(text);
  if (!m) return null;
  const raw = m[1]!;
  if (raw.startsWith('"""') || raw.startsWith("'''")) return raw.slice(3, -3).replace(/^\r?\n/, '');
  if (raw.startsWith("'")) return raw.slice(1, -1);
  try {
    return JSON.parse(raw) as string;
  } catch {
    return raw.slice(1, -1);
  }
}

/** A command file's description: its `description`, else the first non-empty line of its `prompt`. */
export function readGeminiCommandFile(text: string): string {
  const description = tomlString(text, 'description');
  const first = (tomlString(text, 'prompt') ?? '').split(/\r?\n/).find((l) => l.trim() !== '') ?? '';
  return (description ?? first.trim()).slice(0, MAX_COMMAND_DESCRIPTION_CHARS);
}

async function files(dir: string, prefix: string[], depth: number, out: { path: string; name: string[] }[]): Promise<void> {
  let entries;
  try {
    entries = (await readdir(dir, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name));
  } catch {
    return;
  }
  for (const e of entries) {
    if (out.length >= MAX_COMMAND_FILES) return;
    if (e.isFile() && e.name.endsWith('.toml')) out.push({ path: join(dir, e.name), name: [...prefix, e.name.slice(0, -'.toml'.length)] });
    else if (e.isDirectory() && depth < MAX_DEPTH) await files(join(dir, e.name), [...prefix, e.name], depth + 1, out);
  }
}

/** The commands of one `commands` directory; [] when there is none. */
export async function readGeminiCommandDir(dir: string, scope: 'project' | 'user'): Promise<SlashCommand[]> {
  const found: { path: string; name: string[] }[] = [];
  await files(dir, [], 0, found);
  const out: SlashCommand[] = [];
  for (const f of found) {
    const name = f.name.join(':');
    if (!isCommandName(name)) continue;
    const text = await readFileHead(f.path, MAX_COMMAND_FILE_BYTES);
    if (text === null) continue;
    out.push({ name, description: scopedDescription(readGeminiCommandFile(text), scope) });
  }
  return out;
}

/** Gemini's custom commands for a session working in `cwd`: the project's first, then the user's. */
export async function geminiCustomCommands(cwd: string | null, env: NodeJS.ProcessEnv): Promise<SlashCommand[]> {
  const user = geminiUserDir(env);
  const [project, own] = await Promise.all([
    cwd !== null ? readGeminiCommandDir(join(cwd, '.gemini', 'commands'), 'project') : Promise.resolve([]),
    user !== null ? readGeminiCommandDir(join(user, 'commands'), 'user') : Promise.resolve([]),
  ]);
  return [...project, ...own];
}
