/**
 * Files handed to a session's agent from the phone (docs/api.md "Uploads"): stored for the
 * session by the upload store, and, when asked, the stored path typed on the agent's input line
 * (quoted when it needs to be, no Enter) so the person only adds their words.
 *
 * Invariant: a refused upload changes nothing: the session and the size are checked before a
 * byte is stored, and a file whose path could not be typed is removed again (by the store,
 * which removes only the very file it wrote).
 */
import type { Readable } from 'node:stream';
import { DomainError, isDomainError } from '../../errors.js';
import type { InputMessage } from '../../protocol/input.js';
import { uploadTooLarge, type StoredUpload, type UploadStore } from '../../uploads/upload-store.js';

/** Characters a path may hold and still be typed as it is. */
const PLAIN_PATH = /^[A-Za-z0-9._/+@%:,=~-]+$/;

/** A path as typed on an agent's input line: as it is, or in single quotes (a `'` as `'\''`). */
export function typedPath(path: string): string {
  return PLAIN_PATH.test(path) ? path : `'${path.replaceAll("'", `'\\''`)}'`;
}

export interface UploadsDeps {
  readonly store: UploadStore;
  /** The session runs (its agent may be typed to), has exited, or is unknown. */
  readonly sessionState: (id: string) => Promise<'running' | 'exited' | null>;
  /** Types into the agent's pane, in order with all other input. */
  readonly input: (id: string, message: InputMessage) => Promise<void>;
}

export class UploadsService {
  constructor(private readonly deps: UploadsDeps) {}

  get maxBytes(): number {
    return this.deps.store.maxBytes;
  }

  /**
   * Stores `body` for session `id` under (a safe form of) `name`; with `insert`, types its path
   * on the agent's input line. `declaredBytes` (Content-Length) past the limit is refused
   * before anything is read.
   */
  async upload(id: string, name: string, body: Readable, opts: { insert: boolean; declaredBytes: number | null }): Promise<StoredUpload> {
    const state = await this.deps.sessionState(id);
    if (state === null) throw new DomainError('session-not-found', `no session named "${id}"`);
    if (opts.insert && state === 'exited')
      throw new DomainError('session-exited', `the agent of session ${id} has exited: respawn it before inserting a path`);
    if (opts.declaredBytes !== null && opts.declaredBytes > this.maxBytes) throw uploadTooLarge(this.maxBytes);
    let stored: StoredUpload;
    try {
      stored = await this.deps.store.save(id, name, body);
    } catch (err) {
      // The store names the upload's `name`, which arrives as `?name=`.
      if (isDomainError(err, 'invalid') && err.field === 'name')
        throw new DomainError('invalid', err.reason, { field: 'querystring/name' });
      throw err;
    }
    if (opts.insert) {
      try {
        await this.deps.input(id, { type: 'keys', data: `${typedPath(stored.path)} ` });
      } catch (err) {
        await this.deps.store.discard(stored.path).catch(() => undefined);
        throw err;
      }
    }
    return stored;
  }

  /** Removes the uploads of a deleted session (what tether wrote for it, nothing else); resolves with the files removed. */
  removeSession(id: string): Promise<string[]> {
    return this.deps.store.removeSession(id);
  }
}
