/**
 * Claude Code with tether: `--settings <file>` names the settings file tether writes in its
 * data dir with its hooks (settings given this way merge with the user's own, whose hooks keep
 * firing; `~/.claude` is never edited), and a restored session reopens its conversation with
 * `--resume <session id>`. docs/agents.md "Claude Code".
 */
import { isConversationId } from '../wire/hook-wire.js';

/** Claude Code's argv with tether's hooks, resuming `conversation` when there is one. */
export function claudeArgv(argv: readonly string[], settingsFile: string | null, conversation: string | null): string[] {
  return [
    ...argv,
    ...(settingsFile !== null ? ['--settings', settingsFile] : []),
    // Checked again here: an id that could read as an option never reaches the argv.
    ...(conversation !== null && isConversationId(conversation) ? ['--resume', conversation] : []),
  ];
}
