/**
 * The user's own Codex `notify` program, which tether's `-c notify=[...]` replaces on Codex's
 * command line: tether's notify program runs it too, with the same JSON argument, so nothing the
 * user set up stops (docs/agents.md "Codex"). It is the `notify` of a `-c notify=…` among the
 * configured arguments (handed to tether's program as `--then <JSON argv>`), else the top-level
 * `notify` of `$CODEX_HOME/config.toml` (`~/.codex/config.toml`), read when Codex notifies.
 *
 * Invariants: only an array of strings is a program to run; tether's own notify program is never
 * run again from it (no loop); the program is started detached with its output ignored, as Codex
 * starts it, and never waited for; nothing here throws.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'smol-toml';

/** The flag before the user's notify argv (JSON) on tether's notify program's command line. */
export const USER_NOTIFY_FLAG = '--then';
/** Largest config.toml read. */
const MAX_CONFIG_BYTES = 1024 * 1024;

/** `value` as a program's argv (a non-empty array of strings), or null. */
function asArgv(value: unknown): string[] | null {
  if (!Array.isArray(value) || value.length === 0 || !value.every((w) => typeof w === 'string')) return null;
  return value;
}

/** Whether an argv is tether's own notify program (a config that names it must not run it twice). */
function isTethers(argv: readonly string[]): boolean {
  return argv.some((w) => /[\\/]agent[\\/]codex[\\/]notify\.js$/.test(w));
}

/** The user's notify set with `-c notify=<TOML>` (or `--config`) among Codex's configured arguments; the last one wins, as in Codex. */
export function notifyOfArgs(argv: readonly string[]): string[] | null {
  let found: string[] | null = null;
  for (let i = 0; i < argv.length - 1; i++) {
    if (argv[i] !== '-c' && argv[i] !== '--config') continue;
    const m = /^notify\s*=\s*([\s\S]*)$/.exec(argv[i + 1]!);
    if (!m) continue;
    try {
      found = asArgv(parse(`notify = ${m[1]}`).notify);
    } catch {
      found = null;
    }
  }
  return found !== null && !isTethers(found) ? found : null;
}

/** The top-level `notify` of Codex's config file, or null. */
export function notifyOfConfig(env: NodeJS.ProcessEnv): string[] | null {
  const home = env.CODEX_HOME !== undefined && env.CODEX_HOME !== '' ? env.CODEX_HOME : join(env.HOME ?? homedir(), '.codex');
  try {
    const text = readFileSync(join(home, 'config.toml')).subarray(0, MAX_CONFIG_BYTES).toString('utf8');
    if (!text.includes('notify')) return null;
    const argv = asArgv(parse(text).notify);
    return argv !== null && !isTethers(argv) ? argv : null;
  } catch {
    return null;
  }
}

/**
 * The user's program for this call of tether's notify program: `--then <JSON>` when the
 * configured arguments named one, else the config file's.
 */
export function userNotify(args: readonly string[], env: NodeJS.ProcessEnv): string[] | null {
  const at = args.indexOf(USER_NOTIFY_FLAG);
  if (at >= 0) {
    try {
      return asArgv(JSON.parse(args[at + 1] ?? ''));
    } catch {
      return null;
    }
  }
  return notifyOfConfig(env);
}

/** Starts the user's program with Codex's JSON argument appended; never waits, never throws. */
export function runUserNotify(argv: readonly string[], payload: string): void {
  try {
    const child = spawn(argv[0]!, [...argv.slice(1), payload], { detached: true, stdio: 'ignore' });
    child.on('error', () => undefined);
    child.unref();
  } catch {
    // A program that cannot be started is the user's to fix; tether's report still goes out.
  }
}
