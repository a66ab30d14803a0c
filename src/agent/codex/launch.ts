/**
 * Codex with tether: its `notify` program set on the command line (`-c notify=[...]`, a TOML
 * array; `~/.codex` is never edited; the user's own notify is run by it too, user-notify.ts), and
 * a restored session reopening its thread with `codex resume <thread id>`. docs/agents.md "Codex".
 * Whether the configured arguments turn Codex's rate-limit dialog off or on is handed to the
 * notify program, which reports it (rate-limit-nudge.ts).
 */
import { isConversationId } from '../wire/hook-wire.js';
import { NUDGE_HIDDEN_FLAG } from './notify-fields.js';
import { nudgeHiddenOfArgs } from './nudge-config.js';
import { notifyOfArgs, USER_NOTIFY_FLAG } from './user-notify.js';

/** A TOML array of basic strings (JSON's string escapes are TOML's). */
function tomlStringArray(words: readonly string[]): string {
  return `[${words.map((w) => JSON.stringify(w)).join(', ')}]`;
}

/**
 * Codex's argv with tether's notify program, resuming `conversation` when there is one. A notify
 * the configured arguments set is handed to tether's program (`--then <JSON argv>`), which runs
 * it; so is their setting of the rate-limit dialog (`--nudge-hidden true|false`).
 */
export function codexArgv(argv: readonly string[], notify: readonly string[] | null, conversation: string | null): string[] {
  const user = notifyOfArgs(argv);
  const hidden = nudgeHiddenOfArgs(argv);
  const program =
    notify === null
      ? null
      : [
          ...notify,
          ...(hidden !== null ? [NUDGE_HIDDEN_FLAG, String(hidden)] : []),
          ...(user !== null ? [USER_NOTIFY_FLAG, JSON.stringify(user)] : []),
        ];
  return [
    ...argv,
    ...(program !== null ? ['-c', `notify=${tomlStringArray(program)}`] : []),
    ...(conversation !== null && isConversationId(conversation) ? ['resume', conversation] : []),
  ];
}
