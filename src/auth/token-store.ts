/**
 * The bearer-token store: `<authDir>/tokens.json`, shared by the daemon and the CLI.
 *
 * Invariants: only SHA-256 hashes of tokens are stored (the one exception, `local-token`, is
 * explained at `ensureLocalToken`); hashes are compared in constant time over fixed-length
 * digests; files are 0600 in a 0700 directory, written atomically (temp file, fsync, rename)
 * under a lock file, so a crash mid-write loses nothing and two writers never lose each
 * other's changes; a corrupt or truncated file is a `DomainError` (`store-corrupt`), never a silent reset
 * (which would lock the user out, or let everyone in). Every `verify` looks at the file (one
 * `stat`, about a microsecond) and re-reads it only when it changed, so a token the CLI revoked is
 * refused by a running daemon from the moment the CLI's write is done, and a token it made
 * works at once. Whoever looks first (a request, the CLI's notice to the daemon, the
 * `watchRevocations` timer) tells the revocation listeners, which close that token's sockets.
 */
import { randomUUID, timingSafeEqual } from 'node:crypto';
import { chmodSync, closeSync, fstatSync, openSync, readFileSync, rmSync, statSync, type Stats } from 'node:fs';
import { join } from 'node:path';
import { DomainError } from '../errors.js';
import { errnoOf } from '../files.js';
import {
  checkName,
  digestOf,
  findToken,
  FORMAT_VERSION,
  LOCAL_TOKEN_FILE,
  locked,
  newToken,
  parseTokensFile,
  TOKENS_FILE,
  writeFile,
  type StoredDevice,
  type StoredLiveActivity,
  type TokenKind,
  type TokenRecord,
} from './token-file.js';
import { LastUsedBatch } from './last-used.js';

/** How often `watchRevocations` looks at the file when no request does. */
export const REVOCATION_CHECK_MS = 250;

interface Entry {
  readonly record: TokenRecord;
  readonly digest: Buffer;
}

/** What tells one version of the file from another: the inode alone is not enough (a freed one is reused at once). */
const identityOf = (st: Stats): string => `${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;

export class TokenStore {
  private entries: Entry[] = [];
  /** inode:size:mtime:ctime of the file last read or written ('' when none). */
  private seen = '';
  /** The identity of a file that could not be parsed, so it is not read again per request. */
  private rejected: string | null = null;
  /** Told of each token that left the file, whoever noticed it first (see `watchRevocations`). */
  private readonly revocationListeners = new Set<(record: TokenRecord) => void>();
  /** Last-used times, written in batches (last-used.ts). */
  private readonly lastUsed: LastUsedBatch;

  private constructor(
    /** The directory holding the token files. */
    readonly dir: string,
    private readonly now: () => number,
  ) {
    this.lastUsed = new LastUsedBatch(now, (batch) =>
      this.mutate((records) => ({
        records: records.map((r) => (batch.has(r.id) ? { ...r, lastUsedAt: batch.get(r.id)! } : r)),
        result: undefined,
      })),
    );
  }

  /**
   * Opens the store in `authDir`; a corrupt file rejects. Opening writes nothing: the directory
   * (0700) is made by the first write, and modes are set only where they are wrong.
   */
  static open(authDir: string, now: () => number = Date.now): Promise<TokenStore> {
    try {
      for (const [path, mode] of [
        [authDir, 0o700],
        [join(authDir, TOKENS_FILE), 0o600],
        [join(authDir, LOCAL_TOKEN_FILE), 0o600],
      ] as const) {
        try {
          if ((statSync(path).mode & 0o777) !== mode) chmodSync(path, mode);
        } catch (err) {
          if (errnoOf(err) !== 'ENOENT') throw err;
        }
      }
      const store = new TokenStore(authDir, now);
      store.load();
      return Promise.resolve(store);
    } catch (err) {
      return Promise.reject(err instanceof DomainError ? err : new DomainError('store-io', `${authDir}: ${(err as Error).message}`));
    }
  }

  private get file(): string {
    return join(this.dir, TOKENS_FILE);
  }

  /** Reads the file if it changed since the last read; throws on a file it cannot trust. */
  private load(): void {
    let fd: number;
    try {
      fd = openSync(this.file, 'r');
    } catch (err) {
      if (errnoOf(err) !== 'ENOENT') throw new DomainError('store-io', `${this.file} cannot be read: ${(err as Error).message}`);
      // No file: no tokens (first start, or the user removed them all).
      this.replaceEntries([]);
      this.seen = '';
      return;
    }
    try {
      // The identity of the very inode read, so a write in between is seen next time. The inode
      // alone is not enough (file systems reuse a freed one at once), so size and times too.
      const identity = identityOf(fstatSync(fd));
      if (identity === this.seen) return;
      const records = parseTokensFile(this.file, readFileSync(fd, 'utf8'));
      this.replaceEntries(records);
      this.seen = identity;
    } finally {
      closeSync(fd);
    }
  }

  /** Takes `records` as the current set; the listeners hear of every token that left it. */
  private replaceEntries(records: readonly TokenRecord[]): void {
    const before = this.entries;
    this.entries = records.map((record) => ({ record, digest: Buffer.from(record.hash, 'hex') }));
    if (this.revocationListeners.size === 0) return;
    const now = new Set(records.map((r) => r.id));
    for (const e of before) {
      if (now.has(e.record.id)) continue;
      for (const listener of this.revocationListeners) {
        try {
          listener(e.record);
        } catch {
          // A listener's failure must not keep the store from taking the new set.
        }
      }
    }
  }

  /**
   * Picks up changes by another process (the CLI): one `stat`, and a read only when the file
   * changed. Never throws.
   */
  private refresh(): void {
    let identity = '';
    try {
      identity = identityOf(statSync(this.file));
    } catch (err) {
      if (errnoOf(err) !== 'ENOENT') return; // Cannot look now: the last good set stands.
    }
    if (identity === this.seen || identity === this.rejected) return;
    try {
      this.load();
    } catch {
      // A file that cannot be parsed (a hand edit gone wrong) keeps the last good set: never
      // let everyone in, never lock everyone out. It is read again once it changes, not per request.
      this.rejected = identity;
    }
  }

  /** Read-modify-write under the lock, from the file's current content; a corrupt file throws. */
  private mutate<T>(change: (records: readonly TokenRecord[]) => { records: readonly TokenRecord[]; result: T }): T {
    return locked(this.dir, () => {
      this.load();
      const { records, result } = change(this.entries.map((e) => e.record));
      this.write(records);
      return result;
    });
  }

  /** Replaces the file (the lock held) and takes its content as the current set. */
  private write(records: readonly TokenRecord[]): void {
    writeFile(this.file, JSON.stringify({ version: FORMAT_VERSION, tokens: records }, null, 2) + '\n');
    this.seen = '';
    this.load();
  }

  private newRecord(name: string, kind: TokenKind, token: string): TokenRecord {
    return {
      id: randomUUID(),
      name,
      hash: digestOf(token).toString('hex'),
      createdAt: new Date(this.now()).toISOString(),
      lastUsedAt: null,
      kind,
    };
  }

  /**
   * The `local` token, the one in the startup URL: created on first start, then the same one
   * on every start until it is revoked.
   *
   * Why a plaintext copy: docs/configuration.md "Start-up" has the daemon print
   * `<url>/?token=<local token>` on every start, and "That token (the local token) is created
   * on first start and stays valid across restarts until revoked". A hash cannot be turned back
   * into the token, so the local token alone is also kept in `<authDir>/local-token` (0600,
   * beside tokens.json, in the 0700 directory). It is trusted only while it matches the stored
   * hash. `token` is null when the local token exists but that copy is gone or stale; revoking
   * `local` makes the next start create a new one.
   */
  ensureLocalToken(): Promise<{ token: string | null; created: boolean }> {
    try {
      return Promise.resolve(this.ensureLocalTokenSync());
    } catch (err) {
      return Promise.reject(err instanceof Error ? err : new DomainError('store-io', String(err)));
    }
  }

  /** The local token as stored, or null when there is no local record (read only: no lock, no write). */
  private storedLocalToken(): { token: string | null; created: false } | null {
    const local = this.entries.find((e) => e.record.kind === 'local');
    if (!local) return null;
    const plainPath = join(this.dir, LOCAL_TOKEN_FILE);
    let plain: string | null = null;
    try {
      plain = readFileSync(plainPath, 'utf8').trim();
    } catch (err) {
      if (errnoOf(err) !== 'ENOENT') throw new DomainError('store-io', `${plainPath} cannot be read: ${(err as Error).message}`);
    }
    const valid = plain !== null && timingSafeEqual(digestOf(plain), local.digest);
    return { token: valid ? plain : null, created: false };
  }

  private ensureLocalTokenSync(): { token: string | null; created: boolean } {
    const plainPath = join(this.dir, LOCAL_TOKEN_FILE);
    // A start that finds its token changes nothing, not even the lock file's directory.
    this.load();
    const stored = this.storedLocalToken();
    if (stored) return stored;
    return locked(this.dir, () => {
      this.load();
      const found = this.storedLocalToken();
      if (found) return found;
      const token = newToken();
      // The plaintext first: a crash between the two writes leaves no local record, so the next
      // start simply creates one again, instead of a record whose plaintext is lost.
      writeFile(plainPath, token + '\n');
      this.write([...this.entries.map((e) => e.record), this.newRecord('local', 'local', token)]);
      return { token, created: true };
    });
  }

  /**
   * The record of a valid token, or null: always against the file as it is now (a token revoked
   * or made by the CLI a moment ago included). Time does not depend on which record matches.
   */
  verify(token: string): TokenRecord | null {
    this.refresh();
    return this.match(digestOf(token));
  }

  private match(digest: Buffer): TokenRecord | null {
    let found: TokenRecord | null = null;
    for (const e of this.entries) {
      // Every record is compared, and the comparison comes first, so there is no early exit.
      if (timingSafeEqual(digest, e.digest) && found === null) found = e.record;
    }
    return found;
  }

  /** Creates a named token; its plaintext is returned this once and never stored. */
  create(name: string, kind: 'device' | 'cli' = 'cli'): { token: string; record: TokenRecord } {
    const checked = checkName(name);
    if ((kind as TokenKind) === 'local') throw new DomainError('token-name-invalid', 'the local token is created by the daemon only');
    const token = newToken();
    const record = this.newRecord(checked, kind, token);
    this.mutate((records) => {
      if (records.some((r) => r.name === checked)) throw new DomainError('token-name-taken', `a token named "${checked}" exists`);
      return { records: [...records, record], result: undefined };
    });
    return { token, record };
  }

  /** Every token, without plaintexts. */
  list(): readonly TokenRecord[] {
    this.refresh();
    return this.entries.map((e) => e.record);
  }

  /** Revokes a token by id or, failing that, by name; returns the revoked record. */
  revoke(nameOrId: string): TokenRecord {
    const revoked = this.mutate((records) => {
      const r = findToken(records, nameOrId);
      return { records: records.filter((x) => x.id !== r.id), result: r };
    });
    if (revoked.kind === 'local') rmSync(join(this.dir, LOCAL_TOKEN_FILE), { force: true });
    this.lastUsed.forget(revoked.id);
    return revoked;
  }

  /** Gives a token (by id or name) a new name; returns the renamed record. */
  rename(nameOrId: string, newName: string): TokenRecord {
    const checked = checkName(newName);
    return this.mutate((records) => {
      const r = findToken(records, nameOrId);
      if (records.some((x) => x.name === checked && x.id !== r.id))
        throw new DomainError('token-name-taken', `a token named "${checked}" exists`);
      const renamed = { ...r, name: checked };
      return { records: records.map((x) => (x.id === r.id ? renamed : x)), result: renamed };
    });
  }

  /** Stores (or with null, clears) the device registration of the token with this id. */
  setDevice(id: string, device: StoredDevice | null): TokenRecord {
    return this.change(id, (r) => ({ ...r, device }));
  }

  /** Stores the Live Activity tokens of a token's device (null: none). */
  setLiveActivity(id: string, liveActivity: StoredLiveActivity | null): TokenRecord {
    return this.change(id, (r) => ({ ...r, liveActivity }));
  }

  private change(id: string, edit: (record: TokenRecord) => TokenRecord): TokenRecord {
    return this.mutate((records) => {
      const r = records.find((x) => x.id === id);
      if (!r) throw new DomainError('token-not-found', `no token has the id "${id}"`);
      const changed = edit(r);
      return { records: records.map((x) => (x.id === id ? changed : x)), result: changed };
    });
  }

  /**
   * Calls `onRevoked` with each token that disappears from the file (revoked here or by the CLI)
   * as soon as the store sees it gone: at the next `verify` or `list` (every request; the CLI's
   * notice after a revocation is one), or at the latest within `everyMs` when nothing asks.
   * Returns the stop function. The timer does not keep the process up.
   */
  watchRevocations(onRevoked: (record: TokenRecord) => void, everyMs = REVOCATION_CHECK_MS): () => void {
    const listener = (record: TokenRecord): void => onRevoked(record);
    this.revocationListeners.add(listener);
    const timer = setInterval(() => this.refresh(), everyMs);
    timer.unref();
    return () => {
      clearInterval(timer);
      this.revocationListeners.delete(listener);
    };
  }

  /** Notes that a token was used now; written within TOUCH_FLUSH_MS, never per request. */
  touch(id: string): void {
    this.lastUsed.note(id);
  }

  /** Writes the batched last-used times now (tokens revoked meanwhile are skipped). */
  flushTouches(): void {
    this.lastUsed.flush();
  }

  /** Flushes the batch and stops the timer: call on shutdown. */
  close(): void {
    this.lastUsed.close();
  }
}
