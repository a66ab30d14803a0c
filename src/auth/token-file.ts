/**
 * The token file's shape: `<authDir>/tokens.json` and its records, how it is parsed and
 * checked (anything unexpected is `store-corrupt`, never a silent reset), token names, and how
 * it is written (atomically, under its lock). The store (token-store.ts) keeps it live.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { DomainError, storeFailure } from '../errors.js';
import { withLock, writeAtomic } from '../files.js';
import { hasControlChar } from '../protocol/text.js';
import { AUTH_DIR_NAMES } from '../config/data-layout.js';

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
  /** The device's Live Activity tokens (docs/push.md "Live Activity"); absent or null: none. */
  readonly liveActivity?: StoredLiveActivity | null;
}

/** The Live Activity tokens of a device, the newest of each kind (hex, as APNs gives them). */
export interface StoredLiveActivity {
  readonly pushToStartToken: string | null;
  readonly updateToken: string | null;
  /** ISO 8601: when either last changed. */
  readonly at: string;
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

/** Longest token name, in characters. */
export const MAX_TOKEN_NAME_CHARS = 64;
export const TOKENS_FILE = AUTH_DIR_NAMES.tokens;
export const LOCAL_TOKEN_FILE = AUTH_DIR_NAMES.localToken;
const LOCK_FILE = AUTH_DIR_NAMES.tokensLock;
export const FORMAT_VERSION = 1;
const HASH_PATTERN = /^[0-9a-f]{64}$/;

/** A new token: 32 random bytes, base64url (43 characters). */
export const newToken = (): string => randomBytes(32).toString('base64url');
export const digestOf = (token: string): Buffer => createHash('sha256').update(token, 'utf8').digest();

export const writeFile = (path: string, text: string): void => writeAtomic(path, text, storeFailure);
/**
 * Runs `fn` holding `<dir>/tokens.json.lock`, so that the daemon and the CLI never interleave
 * writes; makes the directory (0700) first when there is none (a store only read never makes it).
 */
export const locked = <T>(dir: string, fn: () => T): T => {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (err) {
    throw storeFailure('io', `${dir} cannot be created: ${(err as Error).message}`);
  }
  return withLock(join(dir, LOCK_FILE), fn, storeFailure);
};

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

const isTokenOrNull = (v: unknown): boolean => v === null || (typeof v === 'string' && /^[0-9a-f]{8,512}$/.test(v));

function isLiveActivity(v: unknown): v is StoredLiveActivity {
  if (typeof v !== 'object' || v === null) return false;
  const a = v as Record<string, unknown>;
  return isTokenOrNull(a.pushToStartToken) && isTokenOrNull(a.updateToken) && typeof a.at === 'string';
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
    (r.device === undefined || r.device === null || isDevice(r.device)) &&
    (r.liveActivity === undefined || r.liveActivity === null || isLiveActivity(r.liveActivity))
  );
}

/** Parses the file's text; anything unexpected is `corrupt`, with the path and how to recover. */
export function parseTokensFile(path: string, text: string): TokenRecord[] {
  const corrupt = (why: string) =>
    new DomainError('store-corrupt', `${path} is corrupt (${why}); fix it, or remove it and create the tokens again`);
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

export function checkName(name: string): string {
  const trimmed = name.trim();
  // Characters are code points, as a device name's schema counts them (an emoji is one, not two).
  if (trimmed === '' || [...trimmed].length > MAX_TOKEN_NAME_CHARS || hasControlChar(trimmed)) {
    throw new DomainError('token-name-invalid', `a token name has 1 to ${MAX_TOKEN_NAME_CHARS} printable characters`);
  }
  return trimmed;
}

export function findToken(records: readonly TokenRecord[], nameOrId: string): TokenRecord {
  const r = records.find((x) => x.id === nameOrId) ?? records.find((x) => x.name === nameOrId);
  if (!r) throw new DomainError('token-not-found', `no token has the name or id "${nameOrId}"`);
  return r;
}
