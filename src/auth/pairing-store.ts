/**
 * Pairing tokens (docs/pairing.md): made by `tether pair`, exchanged once by
 * `POST /pair` for a permanent token, valid 5 minutes. They live in `<authDir>/pairing.json`
 * because the CLI makes them and the daemon takes them: two processes, one file.
 *
 * Invariants: only SHA-256 hashes are stored (0600, written atomically under a lock, like
 * tokens.json); a pairing token is taken at most once, because taking it removes it under the
 * lock; an expired one is refused and removed; comparisons are constant-time over fixed-length
 * digests and look at every record. A pairing token is never a bearer token: the two stores
 * are apart, so a pairing token on any other route is a 401. A corrupt file refuses every
 * pairing (and says so) rather than guessing.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DomainError, storeFailure } from '../errors.js';
import { errnoOf, withLock, writeAtomic } from '../files.js';

/** How long a pairing token is valid (docs/contract.md "Limits": 5 minutes). */
export const PAIRING_TTL_MS = 5 * 60_000;
/** At most this many pairing tokens wait at once; making one more drops the oldest. */
export const MAX_PENDING_PAIRINGS = 16;

const FILE = 'pairing.json';
const LOCK = 'pairing.json.lock';
const FORMAT_VERSION = 1;
const HASH_PATTERN = /^[0-9a-f]{64}$/;

interface PairingRecord {
  readonly hash: string;
  /** Epoch ms. */
  readonly createdAt: number;
  readonly expiresAt: number;
}

/** Why a pairing token was not taken. */
export type PairingRefusal = 'unknown' | 'expired';

const digestOf = (token: string): Buffer => createHash('sha256').update(token, 'utf8').digest();

function isPairing(v: unknown): v is PairingRecord {
  if (typeof v !== 'object' || v === null) return false;
  const r = v as Record<string, unknown>;
  return typeof r.hash === 'string' && HASH_PATTERN.test(r.hash) && Number.isFinite(r.createdAt) && Number.isFinite(r.expiresAt);
}

export class PairingStore {
  constructor(
    /** The auth directory (shared with the token store). */
    readonly dir: string,
    private readonly now: () => number = Date.now,
  ) {}

  private get file(): string {
    return join(this.dir, FILE);
  }

  private read(): PairingRecord[] {
    let text: string;
    try {
      text = readFileSync(this.file, 'utf8');
    } catch (err) {
      if (errnoOf(err) === 'ENOENT') return [];
      throw new DomainError('store-io', `${this.file} cannot be read: ${(err as Error).message}`);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = null;
    }
    const file = parsed as { version?: unknown; pairings?: unknown } | null;
    if (
      typeof file !== 'object' ||
      file === null ||
      file.version !== FORMAT_VERSION ||
      !Array.isArray(file.pairings) ||
      !file.pairings.every(isPairing)
    ) {
      throw new DomainError('store-corrupt', `${this.file} is corrupt; remove it and run "tether pair" again`);
    }
    return file.pairings;
  }

  private write(records: readonly PairingRecord[]): void {
    writeAtomic(this.file, JSON.stringify({ version: FORMAT_VERSION, pairings: records }) + '\n', storeFailure);
    chmodSync(this.file, 0o600);
  }

  /** Runs `fn` under the lock; the directory is made here, by the first use, never when the store is made. */
  private locked<T>(fn: () => T): T {
    try {
      mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    } catch (err) {
      throw storeFailure('io', `${this.dir} cannot be created: ${(err as Error).message}`);
    }
    return withLock(join(this.dir, LOCK), fn, storeFailure);
  }

  /** Makes a pairing token; its plaintext is returned this once. */
  create(): { token: string; expiresAt: number } {
    const token = randomBytes(32).toString('base64url');
    const t = this.now();
    const record: PairingRecord = { hash: digestOf(token).toString('hex'), createdAt: t, expiresAt: t + PAIRING_TTL_MS };
    this.locked(() => {
      const live = this.read().filter((r) => r.expiresAt > t);
      this.write([...live, record].slice(-MAX_PENDING_PAIRINGS));
    });
    return { token, expiresAt: record.expiresAt };
  }

  /** Takes a pairing token: true once for a valid one, then never again; else why not. */
  take(token: string): true | PairingRefusal {
    const digest = digestOf(token);
    const t = this.now();
    return this.locked(() => {
      const records = this.read();
      let hit: PairingRecord | null = null;
      for (const r of records) {
        // Every record is compared; the comparison comes first, so there is no early exit.
        if (timingSafeEqual(digest, Buffer.from(r.hash, 'hex')) && hit === null) hit = r;
      }
      const rest = records.filter((r) => r !== hit && r.expiresAt > t);
      if (rest.length !== records.length) this.write(rest);
      if (hit === null) return 'unknown';
      return hit.expiresAt > t ? true : 'expired';
    });
  }
}
