/**
 * Files a phone hands to a session's agent (docs/api.md "Uploads"): each stored in a folder of
 * its session under the uploads root, so nothing lands in the user's repository unless the
 * config says so.
 *
 * Invariants: a stored name is a safe base name (no folder, no `..`, no control characters,
 * at most MAX_NAME_BYTES) and never replaces an earlier upload (a suffix keeps both); files are
 * 0600 in folders 0700, opened exclusively and never through a symlink; a body past the limit,
 * or one that stops halfway, leaves nothing behind.
 */
import { constants } from 'node:fs';
import { lstat, mkdir, open, readdir, rm, unlink, type FileHandle } from 'node:fs/promises';
import { extname, join, resolve, sep } from 'node:path';
import type { Readable } from 'node:stream';
import { DomainError } from '../errors.js';
import { isValidSessionName } from '../protocol/session-name.js';

/** Longest stored file name, in UTF-8 bytes (file systems allow 255). */
export const MAX_NAME_BYTES = 120;
/** How many names a store tries (`name-1.png`, `name-2.png`, …) before it gives up. */
const MAX_NAME_ATTEMPTS = 1000;

// eslint-disable-next-line no-control-regex -- control characters are exactly what is removed
const CONTROL_CHARS = /[\u0000-\u001f\u007f-\u009f]/g;

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

/** Cuts a string to at most `max` UTF-8 bytes without splitting a character. */
function cutToBytes(s: string, max: number): string {
  let out = '';
  let bytes = 0;
  for (const ch of s) {
    const n = Buffer.byteLength(ch);
    if (bytes + n > max) break;
    out += ch;
    bytes += n;
  }
  return out;
}

/**
 * The safe base name of a name a client sent: its last path part, control characters and
 * characters a file name or a shell line would trip on removed, leading dots and spaces gone,
 * cut to MAX_NAME_BYTES with its extension kept. Empty when nothing is left.
 */
export function safeUploadName(name: string): string {
  const last = name.split(/[/\\]/).pop() ?? '';
  let clean = last
    .normalize('NFC')
    .replace(CONTROL_CHARS, '')
    .replace(/[<>:"|?*`$'!;&(){}[\]#~^%\s]+/gu, '-')
    .replace(/-{2,}/g, '-')
    .replace(/^[.-]+/, '')
    .replace(/[.-]+$/, '');
  if (Buffer.byteLength(clean) > MAX_NAME_BYTES) {
    const ext = extname(clean);
    const keepExt = Buffer.byteLength(ext) <= 16 ? ext : '';
    clean = cutToBytes(clean.slice(0, clean.length - keepExt.length), MAX_NAME_BYTES - Buffer.byteLength(keepExt)) + keepExt;
  }
  return clean === '.' || clean === '..' ? '' : clean;
}

/** `name-<n>.ext` for the n-th name tried after `name.ext`. */
function suffixed(name: string, n: number): string {
  if (n === 0) return name;
  const ext = extname(name);
  const stem = ext && ext !== name ? name.slice(0, -ext.length) : name;
  return `${stem}-${n}${ext && ext !== name ? ext : ''}`;
}

export interface UploadStoreOptions {
  /** The uploads root: a folder per session is made in it. */
  readonly root: string;
  readonly maxBytes: number;
}

/** The uploads of every session, under one root. */
export class UploadStore {
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

  /** Opens a new file for `name` in the session's folder, never over an existing one. */
  private async create(id: string, name: string): Promise<{ fh: FileHandle; path: string; name: string }> {
    const dir = this.folder(id);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const info = await lstat(dir);
    if (!info.isDirectory() || info.isSymbolicLink()) throw new Error(`${dir} is not a folder`);
    for (let n = 0; n < MAX_NAME_ATTEMPTS; n++) {
      const candidate = suffixed(name, n);
      const path = join(dir, candidate);
      try {
        return { fh: await open(path, OPEN_NEW, 0o600), path, name: candidate };
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
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
    const file = await this.create(id, name);
    let bytes = 0;
    try {
      for await (const chunk of body) {
        const data = chunk as Buffer;
        bytes += data.length;
        if (bytes > this.opts.maxBytes) {
          throw uploadTooLarge(this.opts.maxBytes);
        }
        await file.fh.write(data);
      }
      if (body.readableAborted || (body as { aborted?: boolean }).aborted === true) throw aborted();
      await file.fh.close();
    } catch (err) {
      await file.fh.close().catch(() => undefined);
      await unlink(file.path).catch(() => undefined);
      if (err instanceof DomainError) throw err;
      if ((err as NodeJS.ErrnoException).code === 'ECONNRESET' || (err as Error).message === 'aborted') throw aborted();
      throw err;
    }
    return { path: file.path, bytes, name: file.name };
  }

  /** Removes a session's uploads (the session was deleted). */
  async removeSession(id: string): Promise<void> {
    await rm(this.folder(id), { recursive: true, force: true });
  }

  /** Removes uploads last changed before `olderThanMs` (epoch ms), and folders left empty. */
  async cleanup(olderThanMs: number): Promise<string[]> {
    const removed: string[] = [];
    const root = resolve(this.opts.root);
    const folders = await readdir(root, { withFileTypes: true }).catch(() => []);
    for (const folder of folders) {
      if (!folder.isDirectory() || !isValidSessionName(folder.name)) continue;
      const dir = join(root, folder.name);
      const files = await readdir(dir, { withFileTypes: true }).catch(() => []);
      let left = files.length;
      for (const f of files) {
        if (!f.isFile()) continue;
        const path = join(dir, f.name);
        const info = await lstat(path).catch(() => null);
        if (info && info.mtimeMs < olderThanMs) {
          await rm(path, { force: true });
          removed.push(path);
          left--;
        }
      }
      if (left === 0) await rm(dir, { recursive: true, force: true }).catch(() => undefined);
    }
    return removed;
  }
}
