/**
 * The bearer-token store: `<authDir>/tokens.json`, read by the daemon and the CLI.
 *
 * Invariants: only SHA-256 hashes of tokens are stored; comparisons are constant-time over
 * fixed-length digests; files are 0600 in a 0700 directory and written atomically (temp file,
 * fsync, rename), so a crash mid-write loses nothing; a corrupt or truncated file is an error,
 * never a silent reset that would lock the user out or let everyone in. `verify` does no disk
 * I/O per request: it re-reads the file only when the file changed, checked at most once a
 * second, so a revocation by the CLI reaches a running daemon.
 */
import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, statSync, writeSync, chmodSync } from 'node:fs';
import { join } from 'node:path';

export type TokenKind = 'local' | 'device' | 'cli';

export interface TokenRecord {
  readonly id: string;
  readonly name: string;
  /** SHA-256 of the token, hex. */
  readonly hash: string;
  readonly createdAt: string;
  readonly lastUsedAt: string | null;
  readonly kind: TokenKind;
}

/** The token file is unreadable or inconsistent: refuse to start rather than guess. */
export class TokenStoreError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TokenStoreError';
  }
}

/** How often `verify` looks at the file's mtime, at most. */
const RELOAD_CHECK_MS = 1000;
/** How long `touch` batches last-used times before writing them. */
const TOUCH_FLUSH_MS = 60_000;
const FILE = 'tokens.json';
const LOCAL_PLAINTEXT = 'local-token';

const hashOf = (token: string): string => createHash('sha256').update(token, 'utf8').digest('hex');
/** A new token: 32 random bytes, base64url. */
export const newToken = (): string => randomBytes(32).toString('base64url');

function writeAtomic(path: string, text: string): void {
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  const fd = openSync(tmp, 'w', 0o600);
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
}

/** inode, size and mtime: file times alone are too coarse to see two quick writes. */
function identity(path: string): string {
  const st = statSync(path);
  return `${st.ino}:${st.size}:${st.mtimeMs}`;
}

function isRecord(v: unknown): v is TokenRecord {
  if (typeof v !== 'object' || v === null) return false;
  const r = v as Record<string, unknown>;
  return (
    typeof r.id === 'string' &&
    typeof r.name === 'string' &&
    typeof r.hash === 'string' &&
    /^[0-9a-f]{64}$/.test(r.hash) &&
    typeof r.createdAt === 'string' &&
    (r.lastUsedAt === null || typeof r.lastUsedAt === 'string') &&
    (r.kind === 'local' || r.kind === 'device' || r.kind === 'cli')
  );
}

export class TokenStore {
  private records: TokenRecord[] = [];
  /** Identity of the file last read: every atomic write renames a new inode into place. */
  private seen = '';
  private lastCheck = 0;
  private touched = new Map<string, string>();
  private touchTimer: NodeJS.Timeout | null = null;

  private constructor(
    readonly dir: string,
    private readonly now: () => number,
  ) {}

  /** Opens (and creates) the store in `authDir`. */
  static open(authDir: string, now: () => number = Date.now): Promise<TokenStore> {
    try {
      mkdirSync(authDir, { recursive: true, mode: 0o700 });
      chmodSync(authDir, 0o700);
      const store = new TokenStore(authDir, now);
      store.load();
      return Promise.resolve(store);
    } catch (err) {
      return Promise.reject(err instanceof TokenStoreError ? err : new TokenStoreError(`${authDir}: ${(err as Error).message}`));
    }
  }

  private get file(): string {
    return join(this.dir, FILE);
  }

  private load(): void {
    let text: string;
    try {
      text = readFileSync(this.file, 'utf8');
      this.seen = identity(this.file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
        this.records = [];
        return;
      }
      throw new TokenStoreError(`${this.file} cannot be read: ${(err as Error).message}`);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new TokenStoreError(`${this.file} is corrupt (not JSON); fix or remove it and create tokens again`);
    }
    const list = (parsed as { tokens?: unknown }).tokens;
    if (!Array.isArray(list) || !list.every(isRecord)) {
      throw new TokenStoreError(`${this.file} is corrupt (unexpected content); fix or remove it and create tokens again`);
    }
    this.records = list;
  }

  private save(): void {
    writeAtomic(this.file, JSON.stringify({ version: 1, tokens: this.records }, null, 2) + '\n');
    this.seen = identity(this.file);
  }

  /** Re-reads the file when another process (the CLI) changed it; at most once a second. */
  private refresh(): void {
    const t = this.now();
    if (t - this.lastCheck < RELOAD_CHECK_MS) return;
    this.lastCheck = t;
    try {
      if (identity(this.file) !== this.seen) this.load();
    } catch (err) {
      // A file that vanished means no tokens are valid any more; one that cannot be parsed keeps
      // the last good set (never let everyone in, never lock out on a half-written file).
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') this.records = [];
    }
  }

  /** The `local` token: created on first start, its plaintext kept for the startup URL. */
  ensureLocalToken(): Promise<{ token: string | null; created: boolean }> {
    const plainPath = join(this.dir, LOCAL_PLAINTEXT);
    const local = this.records.find((r) => r.kind === 'local');
    if (local) {
      // The startup URL must show the token across restarts, so its plaintext is kept (0600)
      // beside the hashes; it is only trusted if it still matches the stored hash.
      let plain: string | null;
      try {
        plain = readFileSync(plainPath, 'utf8').trim();
      } catch {
        plain = null;
      }
      return Promise.resolve({ token: plain !== null && this.matches(plain, local.hash) ? plain : null, created: false });
    }
    const token = newToken();
    this.records = [...this.records, this.record('local', 'local', token)];
    this.save();
    writeAtomic(plainPath, token + '\n');
    return Promise.resolve({ token, created: true });
  }

  private record(name: string, kind: TokenKind, token: string): TokenRecord {
    return { id: randomUUID(), name, hash: hashOf(token), createdAt: new Date(this.now()).toISOString(), lastUsedAt: null, kind };
  }

  private matches(token: string, hash: string): boolean {
    return timingSafeEqual(Buffer.from(hashOf(token), 'hex'), Buffer.from(hash, 'hex'));
  }

  /** The record of a valid token, or null. Constant-time in the token's content. */
  verify(token: string): TokenRecord | null {
    this.refresh();
    const digest = createHash('sha256').update(token, 'utf8').digest();
    let found: TokenRecord | null = null;
    for (const r of this.records) {
      // Compare against every record, so the time does not tell which one matched.
      if (timingSafeEqual(digest, Buffer.from(r.hash, 'hex')) && !found) found = r;
    }
    return found;
  }

  /** Creates a named token; the plaintext is returned once and never stored. */
  create(name: string, kind: TokenKind = 'cli'): { token: string; record: TokenRecord } {
    this.refresh();
    if (this.records.some((r) => r.name === name)) throw new TokenStoreError(`a token named "${name}" exists`);
    const token = newToken();
    const record = this.record(name, kind, token);
    this.records = [...this.records, record];
    this.save();
    return { token, record };
  }

  list(): readonly TokenRecord[] {
    this.refresh();
    return this.records;
  }

  private find(nameOrId: string): TokenRecord {
    const r = this.records.find((x) => x.id === nameOrId) ?? this.records.find((x) => x.name === nameOrId);
    if (!r) throw new TokenStoreError(`no token named or with id "${nameOrId}"`);
    return r;
  }

  /** Revokes a token by name or id; returns the revoked record. */
  revoke(nameOrId: string): TokenRecord {
    this.refresh();
    const r = this.find(nameOrId);
    this.records = this.records.filter((x) => x.id !== r.id);
    this.save();
    return r;
  }

  rename(nameOrId: string, newName: string): TokenRecord {
    this.refresh();
    const r = this.find(nameOrId);
    if (this.records.some((x) => x.name === newName && x.id !== r.id)) throw new TokenStoreError(`a token named "${newName}" exists`);
    const renamed = { ...r, name: newName };
    this.records = this.records.map((x) => (x.id === r.id ? renamed : x));
    this.save();
    return renamed;
  }

  /** Notes a use; written in batches, never per request. */
  touch(id: string): void {
    this.touched.set(id, new Date(this.now()).toISOString());
    if (this.touchTimer) return;
    this.touchTimer = setTimeout(() => this.flushTouches(), TOUCH_FLUSH_MS);
    this.touchTimer.unref();
  }

  /** Writes the batched last-used times now. */
  flushTouches(): void {
    if (this.touchTimer) clearTimeout(this.touchTimer);
    this.touchTimer = null;
    if (this.touched.size === 0) return;
    this.refresh();
    this.records = this.records.map((r) => (this.touched.has(r.id) ? { ...r, lastUsedAt: this.touched.get(r.id)! } : r));
    this.touched.clear();
    this.save();
  }
}
