/**
 * Gemini CLI with tether: its home is tether's (`GEMINI_CLI_HOME`, home.ts: the user's files
 * linked, tether's hooks an extension of its own), its trusted folders the user's own file, and a
 * restored session reopens its conversation with `--resume <session id>`. docs/agents.md "Gemini CLI".
 *
 * Invariant: the configured words come first and unchanged; tether only adds words after them.
 */
import { join } from 'node:path';
import { isConversationId } from '../wire/hook-wire.js';
import { TETHER_EXTENSION } from './extension.js';
import { geminiUserDir, TRUSTED_FOLDERS } from './home.js';

/** Whether the words choose Gemini's extensions (`-e`, `--extensions`): tether's must then be named too. */
function choosesExtensions(argv: readonly string[]): boolean {
  return argv.some((w) => w === '-e' || w === '--extensions' || w.startsWith('--extensions=') || w.startsWith('-e='));
}

/** Gemini CLI's argv, tether's extension kept on, resuming `conversation` when there is one. */
export function geminiArgv(argv: readonly string[], conversation: string | null): string[] {
  const extension = choosesExtensions(argv) ? ['--extensions', TETHER_EXTENSION] : [];
  // Checked again here: an id that could read as an option never reaches the argv.
  const resume = conversation !== null && isConversationId(conversation) ? ['--resume', conversation] : [];
  return [...argv, ...extension, ...resume];
}

/** The pane's variables: tether's home, when written, and the user's trusted folders file (the daemon's `env` may name it). */
export function geminiEnv(home: string | null, env: NodeJS.ProcessEnv): Record<string, string> {
  if (home === null) return {};
  // Gemini replaces that file by a rename, which a link in tether's home would not survive.
  const userDir = geminiUserDir(env);
  const trusted = env.GEMINI_CLI_TRUSTED_FOLDERS_PATH || (userDir === null ? null : join(userDir, TRUSTED_FOLDERS));
  return { GEMINI_CLI_HOME: home, ...(trusted === null ? {} : { GEMINI_CLI_TRUSTED_FOLDERS_PATH: trusted }) };
}
