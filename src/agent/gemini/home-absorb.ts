/**
 * What Gemini CLI wrote into tether's Gemini home itself, moved back to where the user's own
 * `gemini` finds it, before the home is linked again (home.ts). Most of what Gemini writes goes
 * through the home's links into the user's files already; what does not is a file it replaced by
 * a rename (trustedFolders.json of an older tether), and an entry it first made in the home (a
 * `skills` or `policies` folder the user did not have, an extension installed in a session).
 *
 * Invariants: an entry is moved into the user's place only when the user has none there; a
 * folder both have is merged entry by entry; a file both have with other content is never written
 * over the user's: the home's copy is set aside (the `kept/<time>` folder beside `.gemini`, which
 * Gemini never reads), so nothing is deleted unless the user has the same bytes; links, tether's
 * own entries and files Gemini has in flight (`*.lock`, `*.tmp`) are left where they are.
 */
import {
  cpSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmdirSync,
  rmSync,
  statSync,
  type Stats,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { errnoOf, writeAtomic } from '../../files.js';

/** Names of what Gemini has in flight (a lock folder, a temp file it renames into place), never moved. */
const IN_FLIGHT = /\.lock$|\.tmp$|\.tmp\./;

/** `path`'s own entry (a link not followed), or null when there is none. */
export function entryAt(path: string): Stats | null {
  try {
    return lstatSync(path);
  } catch {
    return null;
  }
}

/** What `path` leads to (links followed), or null when nothing is there. */
function targetAt(path: string): Stats | null {
  try {
    return statSync(path);
  } catch {
    return null;
  }
}

/** The names in `dir`, none when it cannot be read. */
export function namesIn(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** Whether Gemini may be writing `name` right now (a lock or a temp file). */
export const inFlight = (name: string): boolean => IN_FLIGHT.test(name);

/** Whether two paths lead to one folder (then nothing is the home's own: nothing moves). */
function sameFolder(a: string, b: string): boolean {
  try {
    return realpathSync(a) === realpathSync(b);
  } catch {
    return false;
  }
}

/** Moves `from` to `to` (made with its parents), copying when they are on two file systems. */
function move(from: string, to: string): void {
  mkdirSync(dirname(to), { recursive: true });
  try {
    renameSync(from, to);
  } catch (err) {
    if (errnoOf(err) !== 'EXDEV') throw err;
    cpSync(from, to, { recursive: true, preserveTimestamps: true, errorOnExist: true, force: false, verbatimSymlinks: true });
    rmSync(from, { recursive: true, force: true });
  }
}

/** Moves `from` into `aside` (made private; `.1`, `.2`, … after its name when taken), where it is kept and never read. */
export function setAside(from: string, aside: string): void {
  mkdirSync(dirname(aside), { recursive: true, mode: 0o700 });
  let to = aside;
  for (let i = 1; entryAt(to) !== null; i++) to = `${aside}.${i}`;
  move(from, to);
}

function sameBytes(a: string, b: string): boolean {
  try {
    return readFileSync(a).equals(readFileSync(b));
  } catch {
    return false;
  }
}

/** Moves the home's entry `from` to the user's `to`, by the rules of the header; `aside` is where a conflict goes. */
function absorb(from: string, to: string, aside: string): void {
  const theirs = targetAt(to);
  if (theirs === null) {
    if (entryAt(to) === null) move(from, to);
    else setAside(from, aside); // the user's own link that leads nowhere: theirs to mend, not ours to replace
    return;
  }
  const ours = lstatSync(from);
  if (ours.isDirectory() && theirs.isDirectory()) {
    for (const name of namesIn(from)) if (!inFlight(name)) absorb(join(from, name), join(to, name), join(aside, name));
    try {
      rmdirSync(from);
    } catch {
      // Something in flight is left in it: the folder stays until the next start.
    }
    return;
  }
  if (ours.isFile() && theirs.isFile() && sameBytes(from, to)) rmSync(from);
  else setAside(from, aside);
}

/** Moves each real entry of `from` that `take` accepts into the user's `to`, as the header says; returns the names that stayed (tried again next start). */
export function absorbEntries(from: string, to: string, take: (name: string) => boolean, aside: string): string[] {
  const stayed: string[] = [];
  if (sameFolder(from, to)) return stayed;
  for (const name of namesIn(from)) {
    if (!take(name) || inFlight(name)) continue;
    const path = join(from, name);
    if (entryAt(path)?.isSymbolicLink() !== false) continue;
    try {
      absorb(path, join(to, name), join(aside, name));
    } catch {
      stayed.push(name);
    }
  }
  return stayed;
}

/** A JSON object file that may hold comments, or null when it is missing or not one. */
function readJsonObject(path: string): Record<string, unknown> | null {
  try {
    const bare = readFileSync(path, 'utf8').replace(
      /("(?:[^"\\]|\\.)*")|\/\/[^\n]*|\/\*[\s\S]*?\*\//g,
      (_m, s: string | undefined) => s ?? '',
    );
    const parsed: unknown = JSON.parse(bare);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** The home's own `trustedFolders.json` (an older tether's) merged into the user's: folders theirs lacks added; then set aside. */
export function mergeTrustedFolders(from: string, to: string, aside: string): void {
  // Written as Gemini writes it (whole, by a rename, 0600); the user's own answers are kept.
  const ours = readJsonObject(from);
  const theirs = entryAt(to) === null ? {} : readJsonObject(to);
  if (ours !== null && theirs !== null) {
    const added = Object.keys(ours).filter((folder) => !Object.hasOwn(theirs, folder));
    if (added.length > 0) {
      const merged = { ...theirs, ...Object.fromEntries(added.map((folder) => [folder, ours[folder]])) };
      writeAtomic(to, JSON.stringify(merged, null, 2), (_code, message) => new Error(message));
    }
  }
  setAside(from, aside);
}
