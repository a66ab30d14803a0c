/**
 * What a history or search answer says of the session's disk buffer (docs/api.md "History"):
 * whether it is being written, and in words why not.
 */
import type { DiskBuffers } from '../actors/disk-buffer.actor.js';
import type { BufferNote } from './history.service.js';

/** The note of session `id`'s buffer: the global state first (off for every session), then the session's own. */
export function bufferNote(buffers: Pick<DiskBuffers, 'sessionState' | 'status'>, id: string): BufferNote {
  const own = buffers.sessionState(id);
  const global = buffers.status();
  if (global.state === 'off') return { state: 'off', reason: global.reason };
  if (own === 'stopped') return { state: 'stopped', reason: `the session's disk buffer reached session_cap_mb: later output was not kept` };
  if (own === null) return { state: 'none', reason: 'the session has no live disk buffer: what is answered is what was kept' };
  return { state: 'writing', reason: null };
}
