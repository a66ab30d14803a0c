/**
 * Where a session's prompts are kept (docs/api.md "Prompts"), in the two places a scheduled
 * continue is kept: the session's tmux option (src/tmux/sessions/prompts-option.ts), which outlives the
 * daemon, and the session's record in the data dir, which outlives the tmux server (a reboot).
 *
 * Invariant: tmux is read first; the record only when tmux holds nothing (the session was made
 * again by a restore); every write goes to both, tmux first.
 */
import { DomainError } from '../../errors.js';
import type { StoredPrompts } from '../../protocol/prompt.schemas.js';
import type { PromptStore } from './prompt-deps.js';
import { INPUT_LINK_WAIT_MS } from '../sessions/sessions.service.js';

/** The two places, as the store reaches them. */
export interface PromptPlaces {
  /** The session's tmux option, read (null: unset or not tether's) and written. */
  readonly tmux: { read(id: string): Promise<StoredPrompts | null>; write(id: string, stored: StoredPrompts): Promise<void> };
  /** The session's record: what it holds, and a new value to keep. */
  readonly record: { read(id: string): StoredPrompts | null; write(id: string, stored: StoredPrompts): void };
}

export function promptStoreOf(places: PromptPlaces): PromptStore {
  return {
    read: async (id) => (await places.tmux.read(id)) ?? places.record.read(id),
    write: async (id, stored) => {
      await places.tmux.write(id, stored);
      places.record.write(id, stored);
    },
  };
}

/** A session's user option set over its control client, waiting for its link as input does; `session-not-found` for an unknown session. */
export async function setSessionOption(
  system: { session(id: string): { setOption(option: string, value: string | null, linkWaitMs: number): Promise<void> } | null },
  id: string,
  option: string,
  value: string | null,
): Promise<void> {
  const session = system.session(id);
  if (!session) throw new DomainError('session-not-found', `no session named "${id}"`);
  await session.setOption(option, value, INPUT_LINK_WAIT_MS);
}
