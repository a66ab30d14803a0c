/**
 * The Gemini CLI home tether gives its sessions (`GEMINI_CLI_HOME=<data dir>/agents/gemini-home`):
 * Gemini CLI 0.61 reads hooks only from settings files (system files, which must be owned by
 * root; the user's `~/.gemini/settings.json`; the project's `.gemini/settings.json`) and
 * extensions installed in `~/.gemini/extensions`, and offers no flag for a settings file. So tether
 * never edits the user's files: it keeps a home of its own whose `.gemini` links each entry of the
 * user's `.gemini` (their chats, commands, extensions, trusted folders, credentials) and holds one
 * file of its own, `settings.json`: the user's settings with tether's hooks added after the user's
 * own (Gemini CLI runs every hook of an event). Written in the data dir when the daemon starts and
 * when `tether attach` makes a Gemini session. docs/agents.md "Gemini CLI".
 *
 * Invariants: the user's `.gemini` is only read, except that its `tmp` folder is made when it is
 * missing (so the chats Gemini writes are the user's, reopened by `gemini --resume` anywhere);
 * a user's settings file that does not parse fails the write (the agent then runs without tether's
 * hooks rather than without the user's settings); hook commands are single-quoted POSIX words.
 */
import { lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { DATA_DIR_NAMES } from '../../config/data-layout.js';
import { writeAtomic } from '../../files.js';
import { GEMINI_HOOK_EVENTS } from './hook-fields.js';

/** Milliseconds Gemini gives a hook before it stops it (the program gives up after about one second). */
const HOOK_TIMEOUT_MS = 5000;
/** Events whose hooks Gemini selects by a matcher (tool name); "*" takes every one. */
const MATCHED_EVENTS = new Set(['BeforeTool', 'AfterTool']);
/** The one file of the home that is tether's (the rest are links to the user's). */
const SETTINGS = 'settings.json';

/** `word` as one POSIX shell word. */
function shellQuote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/** The hook's command line: node running tether's hook program. */
export function geminiHookCommand(node: string, hookProgram: string): string {
  return `${shellQuote(node)} ${shellQuote(hookProgram)}`;
}

/** Where the user's Gemini CLI files are: `$GEMINI_CLI_HOME/.gemini`, else `~/.gemini`. */
export function geminiUserDir(env: NodeJS.ProcessEnv): string | null {
  const home = env.GEMINI_CLI_HOME || env.HOME;
  return home ? join(home, '.gemini') : null;
}

/** Where tether's Gemini home lives in the data dir (the `GEMINI_CLI_HOME` of its sessions). */
export function geminiHomePath(dataDir: string): string {
  return join(dataDir, DATA_DIR_NAMES.agents, 'gemini-home');
}

/** A JSON file that may hold comments (Gemini reads its settings so), as an object; throws when it is not one. */
function readSettings(path: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return {};
  }
  const bare = text.replace(/("(?:[^"\\]|\\.)*")|\/\/[^\n]*|\/\*[\s\S]*?\*\//g, (_m, str: string | undefined) => str ?? '');
  const parsed: unknown = bare.trim() === '' ? {} : JSON.parse(bare);
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error(`${path} is not a JSON object`);
  return parsed as Record<string, unknown>;
}

/** The user's settings with tether's hook added to each event tether reads, after the user's own. */
export function geminiSettings(user: Record<string, unknown>, command: string): Record<string, unknown> {
  const own =
    typeof user.hooks === 'object' && user.hooks !== null && !Array.isArray(user.hooks) ? (user.hooks as Record<string, unknown>) : {};
  const hooks: Record<string, unknown> = { ...own };
  const hook = { type: 'command', name: 'tether', command, timeout: HOOK_TIMEOUT_MS };
  for (const event of GEMINI_HOOK_EVENTS) {
    const theirs = Array.isArray(own[event]) ? (own[event] as unknown[]) : [];
    hooks[event] = [...theirs, { ...(MATCHED_EVENTS.has(event) ? { matcher: '*' } : {}), hooks: [hook] }];
  }
  return { ...user, hooks };
}

/** Links each entry of the user's `.gemini` into `dot` (the old links replaced; what Gemini wrote there itself kept). */
function linkEntries(userDir: string, dot: string): void {
  for (const name of readdirSync(dot)) {
    if (name !== SETTINGS && lstatSync(join(dot, name)).isSymbolicLink()) rmSync(join(dot, name));
  }
  for (const name of readdirSync(userDir)) {
    if (name === SETTINGS) continue;
    try {
      symlinkSync(join(userDir, name), join(dot, name));
    } catch {
      // Gemini made an entry of that name in tether's home itself: it stays.
    }
  }
}

/** Writes tether's Gemini home for the user of `env`; returns its path. Throws on an I/O failure or unreadable user settings. */
export function writeGeminiHome(dataDir: string, command: string, env: NodeJS.ProcessEnv): string {
  const userDir = geminiUserDir(env);
  if (userDir === null) throw new Error('neither GEMINI_CLI_HOME nor HOME is set');
  const settings = geminiSettings(readSettings(join(userDir, SETTINGS)), command);
  const home = geminiHomePath(dataDir);
  const dot = join(home, '.gemini');
  mkdirSync(join(userDir, 'tmp'), { recursive: true, mode: 0o700 });
  mkdirSync(dot, { recursive: true, mode: 0o700 });
  linkEntries(userDir, dot);
  writeAtomic(join(dot, SETTINGS), `${JSON.stringify(settings, null, 2)}\n`, (_code, message) => new Error(message));
  return home;
}
