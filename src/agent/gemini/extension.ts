/**
 * tether's hooks as a Gemini CLI extension of tether's own, `tether`, in tether's Gemini home
 * (`.gemini/extensions/tether/`: a `gemini-extension.json` and its `hooks/hooks.json`). Gemini CLI
 * 0.61 runs an extension's hooks beside the settings' hooks, in an untrusted folder too, and
 * asks for no consent for an extension it finds installed (measured: docs/agents.md "Gemini CLI").
 * So the user's `settings.json` needs nothing of tether's and is linked, not copied (home.ts).
 *
 * Invariants: the extension's two files are the only ones written here, each whole or not at all;
 * a hook command is two single-quoted POSIX words (node, the hook program), never built from
 * anything else.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { writeAtomic } from '../../files.js';
import { GEMINI_HOOK_EVENTS } from './hook-fields.js';

/** The extension's name (and its folder's); `gemini --extensions tether` keeps it on. */
export const TETHER_EXTENSION = 'tether';
/** Milliseconds Gemini gives a hook before it stops it (the program gives up after about one second). */
const HOOK_TIMEOUT_MS = 5000;
/** Events whose hooks Gemini selects by a matcher (tool name); "*" takes every one. */
const MATCHED_EVENTS = new Set(['BeforeTool', 'AfterTool']);

/** `word` as one POSIX shell word. */
function shellQuote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/** The hook's command line: node running tether's hook program. */
export function geminiHookCommand(node: string, hookProgram: string): string {
  return `${shellQuote(node)} ${shellQuote(hookProgram)}`;
}

/** The extension's `hooks/hooks.json`: tether's hook on each event tether reads. */
export function geminiExtensionHooks(command: string): { hooks: Record<string, unknown[]> } {
  const hook = { type: 'command', name: 'tether', command, timeout: HOOK_TIMEOUT_MS };
  const hooks: Record<string, unknown[]> = {};
  for (const event of GEMINI_HOOK_EVENTS) hooks[event] = [{ ...(MATCHED_EVENTS.has(event) ? { matcher: '*' } : {}), hooks: [hook] }];
  return { hooks };
}

/** Writes the extension into `dir` (`<home>/.gemini/extensions/tether`). Throws on an I/O failure. */
export function writeGeminiExtension(dir: string, command: string): void {
  const fail = (_code: string, message: string) => new Error(message);
  const manifest = { name: TETHER_EXTENSION, version: '1.0.0', description: "tether's hooks: this session's state to the tether daemon" };
  mkdirSync(join(dir, 'hooks'), { recursive: true, mode: 0o700 });
  writeAtomic(join(dir, 'gemini-extension.json'), `${JSON.stringify(manifest, null, 2)}\n`, fail);
  writeAtomic(join(dir, 'hooks', 'hooks.json'), `${JSON.stringify(geminiExtensionHooks(command), null, 2)}\n`, fail);
}
