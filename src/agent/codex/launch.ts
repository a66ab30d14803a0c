/**
 * Codex with tether: its `notify` program set on the command line (`-c notify=[...]`, a TOML
 * array; `~/.codex` is never edited), and a restored session reopening its thread with
 * `codex resume <thread id>`. docs/agents.md "Codex".
 */
import { isConversationId } from '../hook-wire.js';

/** A TOML array of basic strings (JSON's string escapes are TOML's). */
function tomlStringArray(words: readonly string[]): string {
  return `[${words.map((w) => JSON.stringify(w)).join(', ')}]`;
}

/** Codex's argv with tether's notify program, resuming `conversation` when there is one. */
export function codexArgv(argv: readonly string[], notify: readonly string[] | null, conversation: string | null): string[] {
  return [
    ...argv,
    ...(notify !== null ? ['-c', `notify=${tomlStringArray(notify)}`] : []),
    ...(conversation !== null && isConversationId(conversation) ? ['resume', conversation] : []),
  ];
}
