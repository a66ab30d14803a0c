/**
 * A session's prompts as tmux holds them (docs/api.md "Prompts"): the session's user option
 * `SESSION_OPTIONS.prompts`, one line of JSON (`StoredPrompts`). tmux keeps it as long as the
 * session, across a daemon's restart; the session's record keeps the same for a restore after a
 * reboot.
 *
 * Invariants: the value is written over the session's control client (PaneLink.setOption: one
 * quoted argument, never a format or a command list, and no length limit, where a tmux process's
 * command line holds at most 16 KiB); it is read back with `show-options` and checked against
 * its schema: a value set by hand in another shape, or cut, reads as none.
 */
import { CHECKS, StoredPrompts as StoredPromptsSchema } from '../../protocol/prompt.checks.js';
import type { StoredPrompts } from '../../protocol/prompt.schemas.js';
import { checkOf } from '../../protocol/schema-check.js';
import type { TmuxCli } from '../exec.js';
import { decodeJsonOption, SESSION_OPTIONS } from '../layout.js';
import { readUserOption } from './sessions.js';

export type { StoredPrompts } from '../../protocol/prompt.schemas.js';

const storedCheck = checkOf(CHECKS, StoredPromptsSchema);

/** `value` as a session's prompts, or null when it is not (unset, set by hand, cut). */
export function decodePromptsOption(value: string | null): StoredPrompts | null {
  return decodeJsonOption(value, (v) => storedCheck.Check(v));
}

/** The option's value for `stored`. */
export const encodePromptsOption = (stored: StoredPrompts): string => JSON.stringify(stored);

/** Reads session `name`'s prompts; null when none (or not tether's shape); `session-not-found` when the session is gone. */
export async function readPromptsOption(cli: TmuxCli, name: string): Promise<StoredPrompts | null> {
  return decodePromptsOption(await readUserOption(cli, name, SESSION_OPTIONS.prompts));
}
