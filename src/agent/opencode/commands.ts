/**
 * opencode's slash commands for `GET /sessions/:id/commands` (docs/agents.md "opencode"): its
 * built-ins as opencode 1.18's command list shows them (typing `/` in its prompt), then the
 * custom commands of the project and of the user, read by the daemon at each request: markdown
 * files (`.opencode/command[s]/*.md` in the directory the agent works in, and
 * `<config>/opencode/command[s]/*.md`, `<config>` being `$XDG_CONFIG_HOME` or `~/.config`) whose
 * name is the command and whose frontmatter's `description` (else first line) describes it, and
 * the `command` object of the project's and the user's `opencode.json`.
 *
 * Invariants: at most MAX_COMMAND_FILES files per directory and MAX_COMMAND_FILE_BYTES per file
 * are read; a file or config that cannot be read is left out, never an error.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { CommandsContext } from '../contract/adapter.js';
import { mergeCommands, type SlashCommand } from '../contract/commands.js';
import { MAX_COMMAND_DESCRIPTION_CHARS, MAX_COMMAND_NAME_CHARS } from '../wire/extension-channel.js';

export const MAX_COMMAND_FILES = 500;
export const MAX_COMMAND_FILE_BYTES = 64 * 1024;
/** Largest `opencode.json` read for its `command` object. */
const MAX_CONFIG_BYTES = 1024 * 1024;

export const OPENCODE_BUILTIN_COMMANDS: readonly SlashCommand[] = Object.freeze([
  { name: 'agents', description: 'Switch agent' },
  { name: 'compact', description: 'Compact session' },
  { name: 'connect', description: 'Connect provider' },
  { name: 'copy', description: 'Copy session transcript' },
  { name: 'debug', description: 'View debug info' },
  { name: 'diff', description: 'Open diff viewer' },
  { name: 'editor', description: 'Open editor' },
  { name: 'exit', description: 'Exit the app' },
  { name: 'export', description: 'Export session transcript' },
  { name: 'fork', description: 'Fork session' },
  { name: 'help', description: 'Help' },
  { name: 'init', description: 'guided AGENTS.md setup' },
  { name: 'mcps', description: 'Toggle MCPs' },
  { name: 'models', description: 'Switch model' },
  { name: 'move', description: 'Move to another project dir' },
  { name: 'new', description: 'New session' },
  { name: 'rename', description: 'Rename session' },
  { name: 'review', description: 'review changes [commit|branch|pr], defaults to uncommitted' },
  { name: 'sessions', description: 'Switch session' },
  { name: 'skills', description: 'Skills' },
  { name: 'status', description: 'View status' },
  { name: 'themes', description: 'Switch theme' },
  { name: 'thinking', description: 'Expand thinking' },
  { name: 'timeline', description: 'Jump to message' },
  { name: 'timestamps', description: 'Show timestamps' },
  { name: 'undo', description: 'Undo previous message' },
]);

const validName = (name: string): boolean =>
  name !== '' && name.length <= MAX_COMMAND_NAME_CHARS && !/\s/.test(name) && ![...name].some((c) => c.charCodeAt(0) < 0x20);

const described = (description: string, scope: string): string =>
  description === '' ? `(${scope})` : `${description.slice(0, MAX_COMMAND_DESCRIPTION_CHARS)} (${scope})`;

/** A command file's description: its frontmatter's `description`, else its first non-empty line. */
export function commandFileDescription(text: string): string {
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  let body = 0;
  if (lines[0]?.trim() === '---') {
    const end = lines.findIndex((l, i) => i > 0 && l.trim() === '---');
    if (end > 0) {
      for (const line of lines.slice(1, end)) {
        const m = /^description\s*:\s*(.*)$/.exec(line);
        if (m) return m[1]!.trim().replace(/^(["'])(.*)\1$/, '$2');
      }
      body = end + 1;
    }
  }
  return (
    lines
      .slice(body)
      .find((l) => l.trim() !== '')
      ?.trim()
      .replace(/^#+\s*/, '') ?? ''
  );
}

async function readHead(path: string, max: number): Promise<string | null> {
  try {
    return (await readFile(path)).subarray(0, max).toString('utf8');
  } catch {
    return null;
  }
}

async function readCommandDir(dir: string, scope: string): Promise<SlashCommand[]> {
  let names: string[];
  try {
    names = (await readdir(dir)).filter((n) => n.endsWith('.md')).sort();
  } catch {
    return [];
  }
  const out: SlashCommand[] = [];
  for (const file of names.slice(0, MAX_COMMAND_FILES)) {
    const name = file.slice(0, -'.md'.length);
    if (!validName(name)) continue;
    const text = await readHead(join(dir, file), MAX_COMMAND_FILE_BYTES);
    if (text !== null) out.push({ name, description: described(commandFileDescription(text), scope) });
  }
  return out;
}

/** The `command` object of an `opencode.json` (plain JSON; a file with comments is not read). */
async function readConfigCommands(path: string, scope: string): Promise<SlashCommand[]> {
  const text = await readHead(path, MAX_CONFIG_BYTES);
  if (text === null) return [];
  try {
    const config: unknown = JSON.parse(text);
    const commands = config && typeof config === 'object' ? (config as Record<string, unknown>).command : undefined;
    if (!commands || typeof commands !== 'object' || Array.isArray(commands)) return [];
    return Object.entries(commands as Record<string, unknown>)
      .filter(([name]) => validName(name))
      .slice(0, MAX_COMMAND_FILES)
      .map(([name, c]) => {
        const d = c && typeof c === 'object' ? (c as Record<string, unknown>).description : undefined;
        return { name, description: described(typeof d === 'string' ? d : '', scope) };
      });
  } catch {
    return [];
  }
}

/** opencode's configuration directory: `$XDG_CONFIG_HOME/opencode`, else `~/.config/opencode`. */
export function opencodeConfigDir(env: NodeJS.ProcessEnv): string | null {
  if (env.XDG_CONFIG_HOME) return join(env.XDG_CONFIG_HOME, 'opencode');
  return env.HOME ? join(env.HOME, '.config', 'opencode') : null;
}

/** The built-ins, then the project's custom commands, then the user's (the first of a name wins). */
export async function opencodeCommands(ctx: CommandsContext): Promise<SlashCommand[]> {
  const user = opencodeConfigDir(ctx.env);
  const reads: Promise<SlashCommand[]>[] = [];
  if (ctx.cwd !== null) {
    const dot = join(ctx.cwd, '.opencode');
    reads.push(readCommandDir(join(dot, 'command'), 'project'), readCommandDir(join(dot, 'commands'), 'project'));
    reads.push(readConfigCommands(join(ctx.cwd, 'opencode.json'), 'project'));
  }
  if (user !== null) {
    reads.push(readCommandDir(join(user, 'command'), 'user'), readCommandDir(join(user, 'commands'), 'user'));
    reads.push(readConfigCommands(join(user, 'opencode.json'), 'user'));
  }
  const found = await Promise.all(reads);
  return mergeCommands(OPENCODE_BUILTIN_COMMANDS, found.flat());
}
