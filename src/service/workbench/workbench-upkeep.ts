/**
 * The phone's workbench kept in order (docs/api.md "Uploads", "History"): the uploads older than
 * `[uploads] keep_days` removed at start and every UPLOAD_CLEANUP_INTERVAL_MS after, a deleted
 * session's uploads removed with it; what a history answer says of the session's disk buffer;
 * which sessions the workbench serves (one tmux holds but discovery has not adopted yet is
 * adopted now, not refused; an unrestorable one keeps its history).
 *
 * Invariant: constructing touches no file; the clean-up runs only from `start`, which the daemon
 * calls once it holds its port (a refused daemon removes nothing).
 */
import type { DiskBuffers } from '../../actors/disk-buffer.actor.js';
import type { SidecarSystem } from '../../actors/system.js';
import type { Logger } from '../../log.js';
import type { UploadStore } from '../../uploads/upload-store.js';
import type { BufferNote } from './history.service.js';
import type { UploadsService } from './uploads.service.js';

/** How often uploads older than `[uploads] keep_days` are looked for (and once at `start`). */
export const UPLOAD_CLEANUP_INTERVAL_MS = 6 * 3600 * 1000;
const DAY_MS = 24 * 3600 * 1000;

export class UploadsUpkeep {
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly deps: {
      readonly store: Pick<UploadStore, 'cleanup'>;
      readonly uploads: Pick<UploadsService, 'removeSession'>;
      readonly keepDays: number;
      readonly now: () => number;
      readonly log: Logger;
    },
  ) {}

  /** Runs the clean-up now and every UPLOAD_CLEANUP_INTERVAL_MS; a second call does nothing. */
  start(): void {
    if (this.timer) return;
    this.cleanup();
    this.timer = setInterval(() => this.cleanup(), UPLOAD_CLEANUP_INTERVAL_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** The session was deleted: its uploads go with it. */
  sessionDeleted(id: string): void {
    const { log } = this.deps;
    void this.deps.uploads.removeSession(id).then(
      (removed) => {
        if (removed.length > 0) log.info({ session: id, removed: removed.length }, "the deleted session's uploads were removed");
      },
      (err: Error) => log.warn({ session: id, err: err.message }, 'the uploads of a deleted session could not be removed'),
    );
  }

  private cleanup(): void {
    const { log } = this.deps;
    void this.deps.store.cleanup(this.deps.now() - this.deps.keepDays * DAY_MS).then(
      (removed) => {
        if (removed.length > 0) log.info({ removed: removed.length }, 'uploads older than keep_days removed');
      },
      (err: Error) => log.warn({ err: err.message }, 'the uploads clean-up failed'),
    );
  }
}

/** What a history answer says of the session's disk buffer: writing, stopped at its cap, none, or off. */
export function bufferNote(buffers: Pick<DiskBuffers, 'sessionState' | 'status'>, id: string): BufferNote {
  const own = buffers.sessionState(id);
  const global = buffers.status();
  if (global.state === 'off') return { state: 'off', reason: global.reason };
  if (own === 'stopped') return { state: 'stopped', reason: `the session's disk buffer reached session_cap_mb: later output was not kept` };
  if (own === null) return { state: 'none', reason: 'the session has no live disk buffer: what is answered is what was kept' };
  return { state: 'writing', reason: null };
}

/** Whether an upload's session runs its agent (`running`), has it exited, or is unknown (null). */
export async function uploadTargetState(
  system: Pick<SidecarSystem, 'knows' | 'session'>,
  id: string,
): Promise<'running' | 'exited' | null> {
  const s = (await system.knows(id)) ? system.session(id) : null;
  return s ? (s.exited ? 'exited' : 'running') : null;
}

/** Whether a session has a history to read: one the daemon knows, or one kept as unrestorable. */
export async function hasHistory(
  system: Pick<SidecarSystem, 'knows'>,
  isUnrestorable: (id: string) => boolean,
  id: string,
): Promise<boolean> {
  return isUnrestorable(id) || (await system.knows(id));
}
