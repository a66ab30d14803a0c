/**
 * The bearer-token store: `<authDir>/tokens.json`, shared by the daemon and the CLI.
 *
 * Invariants: only SHA-256 hashes of tokens are stored (the one exception, `local-token`, is
 * explained at `ensureLocalToken`); hashes are compared in constant time over fixed-length
 * digests; files are 0600 in a 0700 directory, written atomically (temp file, fsync, rename)
 * under a lock file, so a crash mid-write loses nothing and two writers never lose each
 * other's changes; a corrupt or truncated file is a `TokenStoreError`, never a silent reset
 * (which would lock the user out, or let everyone in). `verify` does no disk I/O per good request:
 * records live in memory and the file is re-read only when it changed, looked at once a second
 * at most (a miss looks again after 20 ms, so a token just made by the CLI works at once), so
 * a revocation made by the CLI reaches a running daemon.
 */
import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { chmodSync, closeSync, fstatSync, mkdirSync, openSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { errnoOf, withLock, writeAtomic } from '../files.js';

export type TokenKind = 'local' | 'device' | 'cli';

export interface TokenRecord {
  readonly id: string;
  readonly name: string;
  /** SHA-256 of the token, 64 lowercase hex digits. */
  readonly hash: string;
  /** ISO 8601. */
  readonly createdAt: string;
  /** ISO 8601, or null when never used; written in batches, so up to a minute late. */
  readonly lastUsedAt: string | null;
  readonly kind: TokenKind;
  /** The device registered with this token (docs/contract.md "Device registration"); absent or null: none. */
  readonly device?: StoredDevice | null;
}

/** A device registration as stored with its token; `removed` keeps the fields for the record. */
export interface StoredDevice {
  readonly deviceToken: string;
  readonly environment: 'sandbox' | 'production';
  readonly deviceName: string;
  readonly state: 'registered' | 'removed';
  /** ISO 8601: when it entered `state`. */
  readonly at: string;
}

export type TokenStoreErrorCode = 'corrupt' | 'io' | 'locked' | 'name-taken' | 'no-such-token' | 'bad-name';

/** The store refuses: a file it cannot trust, a lock it cannot take, a name it cannot use. */
export class TokenStoreError extends Error {
  readonly code: TokenStoreErrorCode;
  constructor(code: TokenStoreErrorCode, message: string) {
    super(message);
    this.name = 'TokenStoreError';
    this.code = code;
  }
}

/** How often `verify` looks at the file, at most. */
export const RELOAD_CHECK_MS = 1000;
/** How often a failed `verify` looks at the file again, at most. */
export const MISS_RECHECK_MS = 20;
/** How long `touch` batches last-used times before writing them. */
export const TOUCH_FLUSH_MS = 60_000;
/** Longest token name, in characters. */
export const MAX_TOKEN_NAME_CHARS = 64;
const TOKENS_FILE = 'tokens.json';
const LOCAL_TOKEN_FILE = 'local-token';
const LOCK_FILE = 'tokens.json.lock';
const FORMAT_VERSION = 1;
const HASH_PATTERN = /^[0-9a-f]{64}$/;
// eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
const CONTROL_CHARS = /[\u0000-\u001f\u007f]/;

/** A new token: 32 random bytes, base64url (43 characters). */
export const newToken = (): string => randomBytes(32).toString('base64url');
const digestOf = (token: string): Buffer => createHash('sha256').update(token, 'utf8').digest();

const fail = (code: 'io' | 'locked', message: string): TokenStoreError => new TokenStoreError(code, message);
const writeFile = (path: string, text: string): void => writeAtomic(path, text, fail);
/** Runs `fn` holding `<dir>/tokens.json.lock`, so that the daemon and the CLI never interleave writes. */
const locked = <T>(dir: string, fn: () => T): T => withLock(join(dir, LOCK_FILE), fn, fail);

function isDevice(v: unknown): v is StoredDevice {
  if (typeof v !== 'object' || v === null) return false;
  const d = v as Record<string, unknown>;
  return (
    typeof d.deviceToken === 'string' &&
    (d.environment === 'sandbox' || d.environment === 'production') &&
    typeof d.deviceName === 'string' &&
    (d.state === 'registered' || d.state === 'removed') &&
    typeof d.at === 'string'
  );
}

function isRecord(v: unknown): v is TokenRecord {
  if (typeof v !== 'object' || v === null) return false;
  const r = v as Record<string, unknown>;
  return (
    typeof r.id === 'string' &&
    typeof r.name === 'string' &&
    typeof r.hash === 'string' &&
    HASH_PATTERN.test(r.hash) &&
    typeof r.createdAt === 'string' &&
    (r.lastUsedAt === null || typeof r.lastUsedAt === 'string') &&
    (r.kind === 'local' || r.kind === 'device' || r.kind === 'cli') &&
    (r.device === undefined || r.device === null || isDevice(r.device))
  );
}

/** Parses the file's text; anything unexpected is `corrupt`, with the path and how to recover. */
function parseTokensFile(path: string, text: string): TokenRecord[] {
  const corrupt = (why: string) =>
    new TokenStoreError('corrupt', `${path} is corrupt (${why}); fix it, or remove it and create the tokens again`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw corrupt(text.trim() === '' ? 'empty' : 'not JSON, perhaps truncated');
  }
  const file = parsed as { version?: unknown; tokens?: unknown } | null;
  if (typeof file !== 'object' || file === null || file.version !== FORMAT_VERSION)
    throw corrupt(`not a version ${FORMAT_VERSION} token file`);
  if (!Array.isArray(file.tokens) || !file.tokens.every(isRecord)) throw corrupt('a token record is malformed');
  const records = file.tokens;
  if (new Set(records.map((r) => r.id)).size !== records.length) throw corrupt('two tokens share an id');
  return records;
}

function checkName(name: string): string {
  const trimmed = name.trim();
  if (trimmed === '' || trimmed.length > MAX_TOKEN_NAME_CHARS || CONTROL_CHARS.test(trimmed)) {
    throw new TokenStoreError('bad-name', `a token name has 1 to ${MAX_TOKEN_NAME_CHARS} printable characters`);
  }
  return trimmed;
}

interface Entry {
  readonly record: TokenRecord;
  readonly digest: Buffer;
}

export class TokenStore {
  private entries: Entry[] = [];
  /** inode:size:mtime:ctime of the file last read or written ('' when none). */
  private seen = '';
  private lastCheck = Number.NEGATIVE_INFINITY;
  private lastMissCheck = Number.NEGATIVE_INFINITY;
  private readonly touched = new Map<string, string>();
  private touchTimer: NodeJS.Timeout | null = null;

  private constructor(
    /** The directory holding the token files. */
    readonly dir: string,
    private readonly now: () => number,
  ) {}

  /** Opens the store in `authDir`, creating the directory (0700); a corrupt file rejects. */
  static open(authDir: string, now: () => number = Date.now): Promise<TokenStore> {
    try {
      mkdirSync(authDir, { recursive: true, mode: 0o700 });
      chmodSync(authDir, 0o700);
      for (const f of [TOKENS_FILE, LOCAL_TOKEN_FILE]) {
        try {
          chmodSync(join(authDir, f), 0o600);
        } catch (err) {
          if (errnoOf(err) !== 'ENOENT') throw err;
        }
      }
      const store = new TokenStore(authDir, now);
      store.load();
      return Promise.resolve(store);
    } catch (err) {
      return Promise.reject(err instanceof TokenStoreError ? err : new TokenStoreError('io', `${authDir}: ${(err as Error).message}`));
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
      if (errnoOf(err) !== 'ENOENT') throw new TokenStoreError('io', `${this.file} cannot be read: ${(err as Error).message}`);
      // No file: no tokens (first start, or the user removed them all).
      this.entries = [];
      this.seen = '';
      return;
    }
    try {
      // The identity of the very inode read, so a write in between is seen next time. The inode
      // alone is not enough (file systems reuse a freed one at once), so size and times too.
      const st = fstatSync(fd);
      const identity = `${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
      if (identity === this.seen) return;
      const records = parseTokensFile(this.file, readFileSync(fd, 'utf8'));
      this.entries = records.map((record) => ({ record, digest: Buffer.from(record.hash, 'hex') }));
      this.seen = identity;
    } finally {
      closeSync(fd);
    }
  }

  /** Picks up changes by another process (the CLI), at most once a second; never throws. */
  private refresh(): void {
    const t = this.now();
    if (t - this.lastCheck < RELOAD_CHECK_MS) return;
    this.lastCheck = t;
    try {
      this.load();
    } catch {
      // A file that cannot be parsed (a hand edit gone wrong) keeps the last good set: never
      // let everyone in, never lock everyone out. It is read again once it changes.
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
      return Promise.reject(err instanceof Error ? err : new TokenStoreError('io', String(err)));
    }
  }

  private ensureLocalTokenSync(): { token: string | null; created: boolean } {
    const plainPath = join(this.dir, LOCAL_TOKEN_FILE);
    return locked(this.dir, () => {
      this.load();
      const local = this.entries.find((e) => e.record.kind === 'local');
      if (local) {
        let plain: string | null = null;
        try {
          plain = readFileSync(plainPath, 'utf8').trim();
        } catch (err) {
          if (errnoOf(err) !== 'ENOENT') throw new TokenStoreError('io', `${plainPath} cannot be read: ${(err as Error).message}`);
        }
        const valid = plain !== null && timingSafeEqual(digestOf(plain), local.digest);
        return { token: valid ? plain : null, created: false };
      }
      const token = newToken();
      // The plaintext first: a crash between the two writes leaves no local record, so the next
      // start simply creates one again, instead of a record whose plaintext is lost.
      writeFile(plainPath, token + '\n');
      this.write([...this.entries.map((e) => e.record), this.newRecord('local', 'local', token)]);
      return { token, created: true };
    });
  }

  /** The record of a valid token, or null. Time does not depend on which record matches. */
  verify(token: string): TokenRecord | null {
    this.refresh();
    const digest = digestOf(token);
    const found = this.match(digest);
    if (found !== null) return found;
    // A token made a moment ago by `tether auth create` must work at once: a miss looks at the
    // file again (a stat; read only when it changed), at most every MISS_RECHECK_MS.
    const t = this.now();
    if (t - this.lastMissCheck < MISS_RECHECK_MS) return null;
    this.lastMissCheck = t;
    try {
      this.load();
    } catch {
      return null;
    }
    return this.match(digest);
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
    if ((kind as TokenKind) === 'local') throw new TokenStoreError('bad-name', 'the local token is created by the daemon only');
    const token = newToken();
    const record = this.newRecord(checked, kind, token);
    this.mutate((records) => {
      if (records.some((r) => r.name === checked)) throw new TokenStoreError('name-taken', `a token named "${checked}" exists`);
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
    this.touched.delete(revoked.id);
    return revoked;
  }

  /** Gives a token (by id or name) a new name; returns the renamed record. */
  rename(nameOrId: string, newName: string): TokenRecord {
    const checked = checkName(newName);
    return this.mutate((records) => {
      const r = findToken(records, nameOrId);
      if (records.some((x) => x.name === checked && x.id !== r.id))
        throw new TokenStoreError('name-taken', `a token named "${checked}" exists`);
      const renamed = { ...r, name: checked };
      return { records: records.map((x) => (x.id === r.id ? renamed : x)), result: renamed };
    });
  }

  /** Stores (or with null, clears) the device registration of the token with this id. */
  setDevice(id: string, device: StoredDevice | null): TokenRecord {
    return this.mutate((records) => {
      const r = records.find((x) => x.id === id);
      if (!r) throw new TokenStoreError('no-such-token', `no token has the id "${id}"`);
      const changed: TokenRecord = { ...r, device };
      return { records: records.map((x) => (x.id === id ? changed : x)), result: changed };
    });
  }

  /**
   * Calls `onRevoked` with each token that disappears from the file (revoked here or by the CLI),
   * looking every `everyMs`; returns the stop function. The timer does not keep the process up.
   */
  watchRevocations(onRevoked: (record: TokenRecord) => void, everyMs = 250): () => void {
    let known = new Map(this.entries.map((e) => [e.record.id, e.record]));
    const timer = setInterval(() => {
      try {
        this.load();
      } catch {
        return; // A file that cannot be parsed keeps the last good set (see refresh).
      }
      const now = new Map(this.entries.map((e) => [e.record.id, e.record]));
      for (const [id, record] of known) if (!now.has(id)) onRevoked(record);
      known = now;
    }, everyMs);
    timer.unref();
    return () => clearInterval(timer);
  }

  /** Notes that a token was used now; written within TOUCH_FLUSH_MS, never per request. */
  touch(id: string): void {
    this.touched.set(id, new Date(this.now()).toISOString());
    if (this.touchTimer) return;
    this.touchTimer = setTimeout(() => {
      this.touchTimer = null;
      try {
        this.flushTouches();
      } catch {
        // Last-used times are a convenience: a failed write is retried with the next batch.
      }
    }, TOUCH_FLUSH_MS);
    this.touchTimer.unref();
  }

  /** Writes the batched last-used times now (tokens revoked meanwhile are skipped). */
  flushTouches(): void {
    if (this.touched.size === 0) return;
    const batch = new Map(this.touched);
    this.mutate((records) => ({
      records: records.map((r) => (batch.has(r.id) ? { ...r, lastUsedAt: batch.get(r.id)! } : r)),
      result: undefined,
    }));
    for (const [id, at] of batch) if (this.touched.get(id) === at) this.touched.delete(id);
  }

  /** Flushes the batch and stops the timer: call on shutdown. */
  close(): void {
    if (this.touchTimer) clearTimeout(this.touchTimer);
    this.touchTimer = null;
    this.flushTouches();
  }
}

function findToken(records: readonly TokenRecord[], nameOrId: string): TokenRecord {
  const r = records.find((x) => x.id === nameOrId) ?? records.find((x) => x.name === nameOrId);
  if (!r) throw new TokenStoreError('no-such-token', `no token has the name or id "${nameOrId}"`);
  return r;
}
