/**
 * Files a phone hands to a session's agent (docs/api.md "Uploads"): each stored in a folder of
 * its session under the uploads root, so nothing lands in the user's repository unless the
 * config says so.
 *
 * Invariants: a stored name is a safe base name (upload-names.ts) and never replaces an earlier upload (a suffix keeps both); files are
 * 0600 in folders 0700, opened exclusively and never through a symlink; a body past the limit,
 * or one that stops halfway, leaves nothing behind.
 *
 * tether removes only what it wrote (upload-ledger.ts): a file is in the ledger from the moment
 * it is opened, before a byte of its body is written, and is removed (when its session is
 * deleted, when it is older than keep_days, when it is the oldest past MAX_KEPT_UPLOADS) only
 * while it is still that very file (device and inode). A session's folder that tether made is
 * removed with `rmdir`, never recursively, so anything else in it keeps it; a folder that was
 * there before is the user's and is never removed. The uploads root itself is made when
 * missing and never removed. Making, removing and cleaning up run one at a time, so a clean-up
 * never removes a folder an upload is about to use.
 */
import { constants, type BigIntStats } from 'node:fs';
import { lstat, mkdir, open, rmdir, unlink, type FileHandle } from 'node:fs/promises';
import { join, resolve, sep } from 'node:path';
import type { Readable } from 'node:stream';
import { DomainError } from '../errors.js';
import { errnoOf } from '../files.js';
import { isValidSessionName } from '../protocol/session-name.js';
import { MAX_NAME_ATTEMPTS, safeUploadName, suffixed } from './upload-names.js';
import { identityOf, sameIdentity, type LedgerFile, type LedgerFolder, type UploadLedger } from './upload-ledger.js';

const OPEN_NEW = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;

/** An upload past the limit: `too-large`, naming the setting. */
export const uploadTooLarge = (max: number): DomainError =>
  new DomainError('too-large', `an upload may have at most ${max} bytes ([uploads] max_mb)`);
/** An upload whose body ended early (the client went away): `invalid`. */
const aborted = (): DomainError => new DomainError('invalid', 'the upload stopped halfway', { field: 'body' });

/** A stored upload. */
export interface StoredUpload {
  /** Absolute path of the file. */
  readonly path: string;
  readonly bytes: number;
  /** The file name it was stored under. */
  readonly name: string;
}

export interface UploadStoreOptions {
  /** The uploads root: a folder per session is made in it. */
  readonly root: string;
  readonly maxBytes: number;
  /** The record of what tether wrote: the only files and folders it ever removes. */
  readonly ledger: UploadLedger;
  /** When an upload is stored (epoch ms), for the keep-days clean-up. */
  readonly now?: () => number;
  /** How many uploads are kept at most (MAX_KEPT_UPLOADS unless given). */
  readonly maxKept?: number;
}

/** At most this many uploads are kept: past it the oldest go, as if their keep_days had passed. */
export const MAX_KEPT_UPLOADS = 5000;

/** A file just opened for an upload. */
interface OpenedUpload {
  readonly fh: FileHandle;
  readonly path: string;
  readonly name: string;
}

/** What removing one ledger entry found. */
type Removal = 'removed' | 'gone' | 'not-ours' | 'not-empty';

/** lstat with exact identities; null when nothing is there. */
async function statOf(path: string): Promise<BigIntStats | null> {
  try {
    return await lstat(path, { bigint: true });
  } catch (err) {
    if (errnoOf(err) === 'ENOENT' || errnoOf(err) === 'ENOTDIR') return null;
    throw err;
  }
}

/** Whether `st` is still the file `entry` names: the same identity and, once its body was written, unchanged since. */
function isOwnFile(st: BigIntStats, entry: LedgerFile): boolean {
  if (!st.isFile() || !sameIdentity(identityOf(st), entry)) return false;
  return entry.written === undefined || (entry.written.size === st.size.toString() && entry.written.mtime === st.mtimeNs.toString());
}

/** Removes a file the ledger names, only while it is still that file (never a symlink, never one put in its place or changed since). */
async function removeOwnFile(entry: LedgerFile): Promise<Removal> {
  const st = await statOf(entry.path);
  if (st === null) return 'gone';
  if (!isOwnFile(st, entry)) return 'not-ours';
  try {
    await unlink(entry.path);
  } catch (err) {
    if (errnoOf(err) === 'ENOENT') return 'gone';
    throw err;
  }
  return 'removed';
}

/** Removes a folder the ledger names, only while it is that folder and empty (`rmdir`, never recursive). */
async function removeOwnFolder(entry: LedgerFolder): Promise<Removal> {
  const st = await statOf(entry.path);
  if (st === null) return 'gone';
  if (!st.isDirectory() || !sameIdentity(identityOf(st), entry)) return 'not-ours';
  try {
    await rmdir(entry.path);
  } catch (err) {
    const code = errnoOf(err);
    if (code === 'ENOENT') return 'gone';
    if (code === 'ENOTEMPTY' || code === 'EEXIST') return 'not-empty';
    throw err;
  }
  return 'removed';
}

const inside = (folder: string) => (file: LedgerFile) => file.path.startsWith(folder + sep);

/** The uploads of every session, under one root. */
export class UploadStore {
  private tail: Promise<unknown> = Promise.resolve();

  constructor(private readonly opts: UploadStoreOptions) {}

  get maxBytes(): number {
    return this.opts.maxBytes;
  }

  /** The folder of a session's uploads; throws for an id that is not a session name. */
  folder(id: string): string {
    if (!isValidSessionName(id)) throw new Error(`not a session id: ${JSON.stringify(id).slice(0, 80)}`);
    const root = resolve(this.opts.root);
    const dir = resolve(root, id);
    if (!dir.startsWith(root + sep)) throw new Error(`an upload folder must stay in ${root}`);
    return dir;
  }

  /** Runs `fn` after every earlier making or removing has finished. */
  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.tail.then(fn);
    this.tail = run.catch(() => undefined);
    return run;
  }

  /**
   * The session's folder, made when missing (and then recorded as tether's); one that is there
   * already is used as it is. A symlink or a file there is refused.
   */
  private async ensureFolder(id: string, dir: string): Promise<void> {
    await mkdir(resolve(this.opts.root), { recursive: true, mode: 0o700 });
    let made = false;
    try {
      await mkdir(dir, { mode: 0o700 });
      made = true;
    } catch (err) {
      if (errnoOf(err) !== 'EEXIST') throw err;
    }
    const st = await lstat(dir, { bigint: true });
    if (!st.isDirectory()) throw new Error(`${dir} is not a folder`);
    const identity = identityOf(st);
    const ledger = this.opts.ledger;
    const known = ledger.entries().folders.find((f) => f.path === dir);
    if (!made) {
      // A folder tether made and the user replaced since is the user's now.
      if (known && !sameIdentity(known, identity)) ledger.change((c) => ({ ...c, folders: c.folders.filter((f) => f !== known) }));
      return;
    }
    try {
      ledger.change((c) => ({ ...c, folders: [...c.folders.filter((f) => f.path !== dir), { session: id, path: dir, ...identity }] }));
    } catch (err) {
      await rmdir(dir).catch(() => undefined);
      throw err;
    }
  }

  /** Opens a new file for `name` in the session's folder, never over an existing one, and records it. */
  private async create(id: string, name: string): Promise<OpenedUpload> {
    const dir = this.folder(id);
    await this.ensureFolder(id, dir);
    for (let n = 0; n < MAX_NAME_ATTEMPTS; n++) {
      const candidate = suffixed(name, n);
      const path = join(dir, candidate);
      let fh: FileHandle;
      try {
        fh = await open(path, OPEN_NEW, 0o600);
      } catch (err) {
        if (errnoOf(err) !== 'EEXIST') throw err;
        continue;
      }
      try {
        const entry: LedgerFile = { session: id, path, ...identityOf(await fh.stat({ bigint: true })), at: (this.opts.now ?? Date.now)() };
        this.opts.ledger.change((c) => ({ ...c, files: [...c.files.filter((f) => f.path !== path), entry] }));
      } catch (err) {
        await fh.close().catch(() => undefined);
        await unlink(path).catch(() => undefined);
        throw err;
      }
      await this.keepAtMost(this.opts.maxKept ?? MAX_KEPT_UPLOADS);
      return { fh, path, name: candidate };
    }
    throw new Error(`no free name for ${name} in ${dir}`);
  }

  /**
   * Stores `body` as an upload of session `id`. A body longer than the limit, or one that ends
   * with an error (the client went away), is refused and its partial file removed.
   */
  async save(id: string, requestedName: string, body: Readable): Promise<StoredUpload> {
    const name = safeUploadName(requestedName);
    if (name === '')
      throw new DomainError('invalid', `the name ${JSON.stringify(requestedName.slice(0, 80))} leaves no usable file name`, {
        field: 'name',
      });
    const file = await this.exclusive(() => this.create(id, name));
    let bytes = 0;
    try {
      // A body refused halfway is left as it is, not destroyed: destroying a request's body
      // resets its connection before the refusal is answered (the transport closes it after).
      for await (const chunk of body.iterator({ destroyOnReturn: false })) {
        const data = chunk as Buffer;
        bytes += data.length;
        if (bytes > this.opts.maxBytes) {
          throw uploadTooLarge(this.opts.maxBytes);
        }
        await file.fh.write(data);
      }
      if (body.readableAborted || (body as { aborted?: boolean }).aborted === true) throw aborted();
      // Noted while the file is still open, so its inode cannot have gone to another file.
      const st = await file.fh.stat({ bigint: true });
      await this.exclusive(() => Promise.resolve(this.written(file.path, st)));
      await file.fh.close();
    } catch (err) {
      await file.fh.close().catch(() => undefined);
      await this.discard(file.path).catch(() => undefined);
      if (err instanceof DomainError) throw err;
      if (errnoOf(err) === 'ECONNRESET' || (err as Error).message === 'aborted') throw aborted();
      throw err;
    }
    return { path: file.path, bytes, name: file.name };
  }

  /**
   * Notes that an upload's body is written (`st` is its open file's): from now on a change to
   * the file makes it the user's. Its identity is taken again too: where a system gives no birth
   * time and node reports the change time in its place, writing the body changed it.
   */
  private written(path: string, st: BigIntStats): void {
    this.opts.ledger.change((c) => {
      const i = c.files.findIndex((f) => f.path === path && f.dev === st.dev.toString() && f.ino === st.ino.toString());
      if (i < 0) return c; // removed meanwhile (its session was deleted)
      const files = [...c.files];
      files[i] = { ...files[i]!, ...identityOf(st), written: { size: st.size.toString(), mtime: st.mtimeNs.toString() } };
      return { ...c, files };
    });
  }

  /** Removes one stored upload (its path could not be typed), if it is still the file tether wrote. */
  discard(path: string): Promise<void> {
    return this.exclusive(async () => {
      const entry = this.opts.ledger.entries().files.find((f) => f.path === path);
      if (!entry) return;
      await removeOwnFile(entry);
      this.forget([entry], []);
    });
  }

  /** Removes a session's uploads and the folders tether made for it, when nothing else is in them; resolves with the files removed. */
  removeSession(id: string): Promise<string[]> {
    return this.exclusive(async () => {
      const { files, folders } = this.opts.ledger.entries();
      const { removed, settled } = await this.removeFiles(files.filter((f) => f.session === id));
      const left = files.filter((f) => !settled.includes(f));
      const gone = await this.removeFolders(folders.filter((d) => d.session === id && !left.some(inside(d.path))));
      this.forget(settled, gone);
      return removed;
    });
  }

  /**
   * Removes the uploads stored before `olderThanMs` (epoch ms), forgets the entries whose file
   * is gone or replaced, and removes the folders tether made that hold none of its files any
   * more (when nothing else is in them). Works from the ledger alone, never from a listing.
   * Resolves with the files removed.
   */
  cleanup(olderThanMs: number): Promise<string[]> {
    return this.exclusive(async () => {
      const { files, folders } = this.opts.ledger.entries();
      const { removed, settled } = await this.removeFiles(files.filter((f) => f.at < olderThanMs));
      const stale: LedgerFile[] = [...settled];
      for (const f of files) {
        if (f.at < olderThanMs) continue;
        const st = await statOf(f.path);
        if (st === null || !isOwnFile(st, f)) stale.push(f);
      }
      const left = files.filter((f) => !stale.includes(f));
      const gone = await this.removeFolders(folders.filter((d) => !left.some(inside(d.path))));
      this.forget(stale, gone);
      return removed;
    });
  }

  /** Past `max` uploads, the oldest go. */
  private async keepAtMost(max: number): Promise<void> {
    const files = this.opts.ledger.entries().files;
    if (files.length <= max) return;
    const oldest = [...files].sort((a, b) => a.at - b.at).slice(0, files.length - max);
    const { settled } = await this.removeFiles(oldest);
    this.forget(settled, []);
  }

  /** Removes what it can of `entries`; resolves with the files removed and the entries to forget (removed, gone, or not tether's any more). */
  private async removeFiles(entries: readonly LedgerFile[]): Promise<{ removed: string[]; settled: LedgerFile[] }> {
    const removed: string[] = [];
    const settled: LedgerFile[] = [];
    for (const f of entries) {
      const outcome = await removeOwnFile(f).catch(() => 'failed');
      if (outcome === 'removed') removed.push(f.path);
      if (outcome !== 'failed') settled.push(f);
    }
    return { removed, settled };
  }

  /** Removes what it can of `folders`; resolves with the entries to forget (removed, gone or not tether's any more). */
  private async removeFolders(folders: readonly LedgerFolder[]): Promise<LedgerFolder[]> {
    const gone: LedgerFolder[] = [];
    for (const d of folders) {
      const outcome = await removeOwnFolder(d).catch(() => 'failed');
      if (outcome === 'removed' || outcome === 'gone' || outcome === 'not-ours') gone.push(d);
    }
    return gone;
  }

  private forget(files: readonly LedgerFile[], folders: readonly LedgerFolder[]): void {
    if (files.length === 0 && folders.length === 0) return;
    this.opts.ledger.change((c) => ({
      files: c.files.filter((f) => !files.includes(f)),
      folders: c.folders.filter((d) => !folders.includes(d)),
    }));
  }
}
