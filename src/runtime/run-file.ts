/**
 * `{data_dir}/run/daemon.json`: where the running daemon can be found (its pid, base URL,
 * port, scheme, certificate fingerprint, id and name, tether version and working directory), for the
 * commands that talk about it (`tether pair`, `tether status`, `tether stop`, `tether restart`).
 * Written once the daemon listens, removed when it stops; a file left by a daemon that died is
 * recognised by its pid and ignored.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isDaemonId } from '../auth/identity.js';
import { writeAtomic } from '../files.js';
import { CliError } from './fail.js';
import { processExists } from '../process.js';
import { RUN_DIR_NAMES } from '../config/data-layout.js';

export interface RunFile {
  readonly pid: number;
  /** The base URL, without a token. */
  readonly url: string;
  readonly scheme: 'http' | 'https';
  readonly host: string;
  readonly port: number;
  readonly fingerprint: string | null;
  /** The daemon's id (auth/identity.ts); null for a daemon from before it was written. */
  readonly id: string | null;
  readonly name: string;
  /** The daemon's tether version; null for a daemon from before it was written. */
  readonly version: string | null;
  /** The directory the daemon was started in (where its default session's agent starts). */
  readonly cwd: string | null;
}

export const RUN_FILE = RUN_DIR_NAMES.daemonFile;

/** Writes the run file (0600, atomically); returns its path. */
export function writeRunFile(
  runDir: string,
  info: Omit<RunFile, 'version' | 'cwd' | 'id'> & { version: string; cwd: string; id?: string },
): string {
  const path = join(runDir, RUN_FILE);
  mkdirSync(runDir, { recursive: true, mode: 0o700 });
  writeAtomic(path, JSON.stringify(info) + '\n', (_code, message) => new CliError(message));
  return path;
}

/** The running daemon's run file, or null when none runs (no file, a stale one, or garbage). */
export function readRunFile(runDir: string): RunFile | null {
  let parsed: Partial<RunFile>;
  try {
    parsed = JSON.parse(readFileSync(join(runDir, RUN_FILE), 'utf8')) as Partial<RunFile>;
  } catch {
    return null;
  }
  if (
    typeof parsed.pid !== 'number' ||
    typeof parsed.url !== 'string' ||
    typeof parsed.port !== 'number' ||
    typeof parsed.host !== 'string'
  )
    return null;
  if (parsed.scheme !== 'http' && parsed.scheme !== 'https') return null;
  if (!processExists(parsed.pid)) return null;
  return {
    pid: parsed.pid,
    url: parsed.url,
    scheme: parsed.scheme,
    host: parsed.host,
    port: parsed.port,
    fingerprint: typeof parsed.fingerprint === 'string' ? parsed.fingerprint : null,
    id: isDaemonId(parsed.id) ? parsed.id : null,
    name: typeof parsed.name === 'string' ? parsed.name : '',
    version: typeof parsed.version === 'string' ? parsed.version : null,
    cwd: typeof parsed.cwd === 'string' ? parsed.cwd : null,
  };
}
