/**
 * The Gemini CLI home tether gives its sessions (`GEMINI_CLI_HOME=<data dir>/agents/gemini-home`).
 * Gemini CLI 0.61 reads hooks from settings files and from extensions in `~/.gemini/extensions`,
 * and has no flag for either; its system settings layers are read only when the file and every
 * folder above it are owned by root. So tether's hooks are an extension of tether's own
 * (extension.ts) in a home whose `.gemini` links the user's: each entry of the user's `.gemini`
 * (`$GEMINI_CLI_HOME/.gemini`, else `~/.gemini`), and `settings.json` and the other files Gemini
 * writes in place even when the user has none yet (a link that leads nowhere until Gemini writes
 * through it). Gemini writes its settings in place, through the link: a change made in a session
 * is in the user's own file at once. Its `extensions` folder is tether's: tether's extension and
 * a link to each of the user's. Its `projects.json` is its own (Gemini replaces that file by a
 * rename; it is a cache Gemini rebuilds from the markers in the shared `tmp` and `history`).
 * Trusted folders are the user's file itself (`GEMINI_CLI_TRUSTED_FOLDERS_PATH`, launch.ts).
 * Written in the data dir when the daemon starts and when `tether attach` makes a Gemini session;
 * what Gemini made in the home itself is first moved to the user's (home-absorb.ts).
 * docs/agents.md "Gemini CLI".
 *
 * Invariants: the user's files are never written by tether, except that what Gemini wrote into
 * tether's home is moved to the user's place when the user has none (a trusted folder merged in
 * when they have), and that their `.gemini/tmp` and `.gemini/history` are made when missing (Gemini
 * makes both at each start); tether's hooks are never in the user's files; nothing is deleted
 * that the user does not have the same bytes of; a link is replaced by a rename, never missing
 * for a running Gemini.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readlinkSync, renameSync, rmSync, symlinkSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { DATA_DIR_NAMES } from '../../config/data-layout.js';
import { TETHER_EXTENSION, writeGeminiExtension } from './extension.js';
import { absorbEntries, entryAt, inFlight, mergeTrustedFolders, namesIn, setAside } from './home-absorb.js';

/** Gemini's folder in a home. */
const DOT = '.gemini';
/** The user's agent skills beside `.gemini` (Gemini reads `~/.agents/skills`). */
const AGENTS = '.agents';
const EXTENSIONS = 'extensions';
const SETTINGS = 'settings.json';
/** The user's trusted folders file in their `.gemini` (launch.ts names it to Gemini). */
export const TRUSTED_FOLDERS = 'trustedFolders.json';
/** Entries of the home's `.gemini` that are tether's, never linked or moved. */
const OWN = new Set([EXTENSIONS, 'projects.json']);
/**
 * Files Gemini CLI 0.61 writes in place (an open with truncation, which follows a link), linked
 * even when the user has none: Gemini's first write makes the user's file. Measured with strace
 * for settings.json, state.json, installation_id and google_accounts.json; the others by its code
 * (`fs.writeFile`).
 */
const WRITTEN_IN_PLACE = [
  SETTINGS,
  'state.json',
  'installation_id',
  'google_accounts.json',
  'oauth_creds.json',
  'gemini-credentials.json',
  'trusted_hooks.json',
  'GEMINI.md',
];
/** The same in the extensions folder, linked when the user has that folder. */
const ENABLEMENT = 'extension-enablement.json';

/** Where the user's Gemini CLI files are: `$GEMINI_CLI_HOME/.gemini`, else `~/.gemini`. */
export function geminiUserDir(env: NodeJS.ProcessEnv): string | null {
  const home = env.GEMINI_CLI_HOME || env.HOME;
  return home ? join(home, DOT) : null;
}

/** Where tether's Gemini home lives in the data dir (the `GEMINI_CLI_HOME` of its sessions). */
export function geminiHomePath(dataDir: string): string {
  return join(dataDir, DATA_DIR_NAMES.agents, 'gemini-home');
}

/** Makes `dir/name` a link to `target` unless it is one already; a real entry there is left. */
function linkTo(dir: string, name: string, target: string): void {
  const path = join(dir, name);
  const there = entryAt(path);
  if (there !== null && !there.isSymbolicLink()) return;
  if (there !== null && readlinkSync(path) === target) return;
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  symlinkSync(target, tmp);
  try {
    renameSync(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
}

/** Links in `dir` each entry of `from` that `take` accepts, and each of `always` too; other links in `dir` are removed. */
function linkEntries(dir: string, from: string, take: (name: string) => boolean, always: readonly string[]): void {
  const wanted = new Set([...namesIn(from).filter((name) => take(name) && !inFlight(name)), ...always]);
  for (const name of namesIn(dir)) {
    if (!wanted.has(name) && !inFlight(name) && entryAt(join(dir, name))?.isSymbolicLink()) rmSync(join(dir, name));
  }
  for (const name of wanted) linkTo(dir, name, join(from, name));
}

/** The user's entries and the files Gemini writes in place, linked in `dot`; tether's own entries left. */
function linkDot(dot: string, userDir: string): void {
  linkEntries(dot, userDir, (name) => !OWN.has(name), WRITTEN_IN_PLACE);
}

/** The user's extensions linked in tether's extensions folder (one named like tether's is left out). */
function linkExtensions(ext: string, userExt: string): void {
  const theirs = entryAt(userExt) !== null;
  linkEntries(ext, userExt, (name) => name !== TETHER_EXTENSION, theirs ? [ENABLEMENT] : []);
}

/** What Gemini wrote into the home itself, moved to the user's (home-absorb.ts); `kept` is where conflicts go. */
function absorbHome(home: string, userHome: string, kept: string): void {
  const dot = join(home, DOT);
  const userDir = join(userHome, DOT);
  const settings = entryAt(join(dot, SETTINGS));
  // An older tether's copy of the user's settings, with its hooks: never the user's.
  if (settings !== null && !settings.isSymbolicLink()) setAside(join(dot, SETTINGS), join(kept, DOT, SETTINGS));
  const trusted = entryAt(join(dot, TRUSTED_FOLDERS));
  if (trusted?.isFile()) mergeTrustedFolders(join(dot, TRUSTED_FOLDERS), join(userDir, TRUSTED_FOLDERS), join(kept, DOT, TRUSTED_FOLDERS));
  absorbEntries(dot, userDir, (name) => !OWN.has(name), join(kept, DOT));
  const ext = join(dot, EXTENSIONS);
  // A link here is an older tether's to the user's own folder: nothing in it is the home's.
  if (entryAt(ext)?.isDirectory()) {
    absorbEntries(ext, join(userDir, EXTENSIONS), (name) => name !== TETHER_EXTENSION, join(kept, DOT, EXTENSIONS));
  }
  absorbEntries(home, userHome, (name) => name === AGENTS, kept);
}

/** Writes tether's Gemini home for the user of `env`; returns its path. Throws on an I/O failure. */
export function writeGeminiHome(dataDir: string, command: string, env: NodeJS.ProcessEnv): string {
  const userHome = env.GEMINI_CLI_HOME || env.HOME;
  if (!userHome) throw new Error('neither GEMINI_CLI_HOME nor HOME is set');
  const home = geminiHomePath(dataDir);
  if (resolve(userHome) === resolve(home)) throw new Error(`${home} is the user's own Gemini home`);
  const userDir = join(userHome, DOT);
  const dot = join(home, DOT);
  const ext = join(dot, EXTENSIONS);
  mkdirSync(join(userDir, 'tmp'), { recursive: true, mode: 0o700 });
  mkdirSync(join(userDir, 'history'), { recursive: true, mode: 0o700 });
  if (entryAt(home)?.isSymbolicLink() || entryAt(dot)?.isSymbolicLink())
    throw new Error(`${dot} is a link: tether's Gemini home must be its own`);
  mkdirSync(dot, { recursive: true, mode: 0o700 });
  absorbHome(home, userHome, join(home, 'kept', new Date().toISOString().replaceAll(':', '-')));
  // An older tether linked the user's whole extensions folder: tether's extension never goes in there.
  if (entryAt(ext)?.isSymbolicLink()) rmSync(ext);
  mkdirSync(ext, { recursive: true, mode: 0o700 });
  linkDot(dot, userDir);
  linkExtensions(ext, join(userDir, EXTENSIONS));
  linkEntries(home, userHome, (name) => name === AGENTS, []);
  writeGeminiExtension(join(ext, TETHER_EXTENSION), command);
  return home;
}
