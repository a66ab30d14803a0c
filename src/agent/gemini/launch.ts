/**
 * Gemini CLI with tether: its home is tether's (`GEMINI_CLI_HOME`, home.ts: the user's files
 * linked, their settings with tether's hooks added), and a restored session reopens its
 * conversation with `--resume <session id>`. docs/agents.md "Gemini CLI".
 */
import { isConversationId } from '../wire/hook-wire.js';

/** Gemini CLI's argv, resuming `conversation` when there is one. */
export function geminiArgv(argv: readonly string[], conversation: string | null): string[] {
  // Checked again here: an id that could read as an option never reaches the argv.
  return [...argv, ...(conversation !== null && isConversationId(conversation) ? ['--resume', conversation] : [])];
}

/** The pane's variables: tether's home for Gemini, when it was written. */
export function geminiEnv(home: string | null): Record<string, string> {
  return home !== null ? { GEMINI_CLI_HOME: home } : {};
}
