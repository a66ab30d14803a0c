/**
 * opencode's slash commands for `GET /sessions/:id/commands` (docs/agents.md "opencode"): its
 * built-ins as opencode 1.18's command list shows them (typing `/` in its prompt), then the
 * custom commands of the project and of the user, read by the daemon at each request: markdown
 * files (`.opencode/command[s]/*.md` in the directory the agent works in, and
 * `<config>/opencode/command[s]/*.md`, `<config>` being `$XDG_CONFIG_HOME` or `~/.config`) whose
 * name is the command and whose frontmatter's `description` (else first line) describes it, and
 * the `command` object of the project's and the user's `opencode.json`.
 *
 * Invariants: the markdown files are read as every command directory is
 * (agent/contract/command-files.ts: bounded, what cannot be read left out); an `opencode.json` is
 * read up to MAX_CONFIG_BYTES, and one that cannot be read or parsed adds nothing.
 */
import { join } from 'node:path';
import type { CommandsContext } from '../contract/adapter.js';
import { isCommandName, MAX_COMMAND_FILES, readCommandDir, readFileHead, scopedDescription } from '../contract/command-files.js';
import { mergeCommands, type SlashCommand } from '../contract/commands.js';

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

/** The `command` object of an `opencode.json` (plain JSON; a file with comments is not read). */
async function readConfigCommands(path: string, scope: string): Promise<SlashCommand[]> {
  const text = await readFileHead(path, MAX_CONFIG_BYTES);
  if (text === null) return [];
  try {
    const config: unknown = JSON.parse(text);
    const commands = config && typeof config === 'object' ? (config as Record<string, unknown>).command : undefined;
    if (!commands || typeof commands !== 'object' || Array.isArray(commands)) return [];
    return Object.entries(commands as Record<string, unknown>)
      .filter(([name]) => isCommandName(name))
      .slice(0, MAX_COMMAND_FILES)
      .map(([name, c]) => {
        const d = c && typeof c === 'object' ? (c as Record<string, unknown>).description : undefined;
        return { name, description: scopedDescription(typeof d === 'string' ? d : '', scope) };
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
    reads.push(readCommandDir(join(dot, 'command'), 'project', false), readCommandDir(join(dot, 'commands'), 'project', false));
    reads.push(readConfigCommands(join(ctx.cwd, 'opencode.json'), 'project'));
  }
  if (user !== null) {
    reads.push(readCommandDir(join(user, 'command'), 'user', false), readCommandDir(join(user, 'commands'), 'user', false));
    reads.push(readConfigCommands(join(user, 'opencode.json'), 'user'));
  }
  const found = await Promise.all(reads);
  return mergeCommands(OPENCODE_BUILTIN_COMMANDS, found.flat());
}
