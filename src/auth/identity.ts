/**
 * The daemon's identity (docs/pairing.md "Which daemon is which"): an id made once, at random,
 * and kept in `{data_dir}/identity.json`, so that a phone paired with several machines tells
 * them apart and knows one again at another address. The machine's name goes with it, but is not
 * kept here: it is the config's `name` or the host name, read at each start.
 *
 * Invariants: the id never changes once made. The file is 0600 and made with an exclusive link,
 * so the daemon and `tether pair` racing to make it agree on one id; a file that cannot be read
 * or holds no valid id is an error that says what to do, never replaced silently (every paired
 * phone would see a new machine). The certificate is not touched.
 */
import { randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { storeFailure } from '../errors.js';
import { errnoOf, writeAtomic } from '../files.js';
import { DATA_DIR_NAMES } from '../config/data-layout.js';

/** The file in the data dir. */
export const IDENTITY_FILE = DATA_DIR_NAMES.identity;
/** An id: 128 random bits, base64url without padding (22 characters). */
export const DAEMON_ID_PATTERN = '^[A-Za-z0-9_-]{22}$';
const DAEMON_ID_RE = new RegExp(DAEMON_ID_PATTERN);

export interface DaemonIdentity {
  /** Made once, never changed: what a phone knows this daemon by. */
  readonly id: string;
  /** When it was made (ISO 8601). */
  readonly createdAt: string;
}

/** Whether `id` has the form of a daemon id. */
export function isDaemonId(id: unknown): id is string {
  return typeof id === 'string' && DAEMON_ID_RE.test(id);
}

function unusable(path: string, why: string): Error {
  return storeFailure(
    'io',
    `${path} ${why}: it holds this daemon's id, which paired phones know it by. Put the file back, or remove it for a new id (phones then see a new machine)`,
  );
}

/** The identity kept in `dataDir`, or null when there is none yet. */
export function readIdentity(dataDir: string): DaemonIdentity | null {
  const path = join(dataDir, IDENTITY_FILE);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if (errnoOf(err) === 'ENOENT') return null;
    throw unusable(path, `cannot be read (${(err as Error).message})`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw unusable(path, 'is not JSON');
  }
  const { id, createdAt } = (parsed ?? {}) as Partial<Record<keyof DaemonIdentity, unknown>>;
  if (!isDaemonId(id)) throw unusable(path, 'holds no valid id');
  return { id, createdAt: typeof createdAt === 'string' ? createdAt : '' };
}

/** The identity kept in `dataDir`, made (once, 0600) when there is none. */
export function ensureIdentity(dataDir: string, now: () => number = Date.now): DaemonIdentity {
  const kept = readIdentity(dataDir);
  if (kept) return kept;
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const path = join(dataDir, IDENTITY_FILE);
  const made: DaemonIdentity = { id: randomBytes(16).toString('base64url'), createdAt: new Date(now()).toISOString() };
  const draft = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.new`;
  writeAtomic(draft, JSON.stringify(made) + '\n', storeFailure);
  try {
    // A link never replaces a file: whoever made it first wins, and everyone reads that one.
    linkSync(draft, path);
  } catch (err) {
    if (errnoOf(err) !== 'EEXIST') throw storeFailure('io', `${path} cannot be written: ${(err as Error).message}`);
  } finally {
    rmSync(draft, { force: true });
  }
  return readIdentity(dataDir) ?? made;
}
