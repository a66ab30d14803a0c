/**
 * Codex with tether: its `notify` program set on the command line (`-c notify=[...]`, a TOML
 * array; `~/.codex` is never edited; the user's own notify is run by it too, user-notify.ts), and
 * a restored session reopening its thread with `codex resume <thread id>`. docs/agents.md "Codex".
 */
import { isConversationId } from '../wire/hook-wire.js';
import { notifyOfArgs, USER_NOTIFY_FLAG } from './user-notify.js';

/** A TOML array of basic strings (JSON's string escapes are TOML's). */
function tomlStringArray(words: readonly string[]): string {
  return `[${words.map((w) => JSON.stringify(w)).join(', ')}]`;
}

/**
 * Codex's argv with tether's notify program, resuming `conversation` when there is one. A notify
 * the configured arguments set is handed to tether's program (`--then <JSON argv>`), which runs it.
 */
export function codexArgv(argv: readonly string[], notify: readonly string[] | null, conversation: string | null): string[] {
  const user = notifyOfArgs(argv);
  const program = notify !== null && user !== null ? [...notify, USER_NOTIFY_FLAG, JSON.stringify(user)] : notify;
  return [
    ...argv,
    ...(program !== null ? ['-c', `notify=${tomlStringArray(program)}`] : []),
    ...(conversation !== null && isConversationId(conversation) ? ['resume', conversation] : []),
  ];
}
