/**
 * Whether a Codex thread is a saved conversation: Codex keeps each conversation it can resume as
 * `<CODEX_HOME or ~/.codex>/sessions/YYYY/MM/DD/rollout-<local time>-<thread id>.jsonl`. The
 * thread Codex starts to title a new conversation notifies like a turn but is never saved, so
 * this is how the notify program tells the session's own thread from it (docs/agents.md "Codex").
 *
 * Invariant: cheap enough for a program Codex waits on: at most three small directories read.
 * Thread ids are UUIDv7 (their first 48 bits are the creation time in ms), so the day folder is
 * known; the day before and after are looked at too (a conversation saved past midnight, a clock
 * zone at its edge).
 */
import { readdirSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';

const DAY_MS = 86_400_000;
const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Codex's home (`CODEX_HOME`, else `~/.codex`) for an environment. */
export function codexHomeDir(env: NodeJS.ProcessEnv): string {
  return env.CODEX_HOME !== undefined && env.CODEX_HOME !== '' ? env.CODEX_HOME : join(env.HOME ?? homedir(), '.codex');
}

/** Codex's sessions folder for an environment. */
export function codexSessionsDir(env: NodeJS.ProcessEnv): string {
  return join(codexHomeDir(env), 'sessions');
}

/** The day folders (local time, as Codex names them) a thread created at `ms` may be saved in. */
function dayFolders(ms: number): string[] {
  return [ms, ms - DAY_MS, ms + DAY_MS].map((t) => {
    const d = new Date(t);
    const two = (n: number) => String(n).padStart(2, '0');
    return join(String(d.getFullYear()), two(d.getMonth() + 1), two(d.getDate()));
  });
}

/**
 * True when the thread's rollout file exists, false when it does not, null when that cannot be
 * told (an id that is not a UUIDv7: its day is unknown).
 */
export function isSavedThread(sessionsDir: string, thread: string): boolean | null {
  if (!UUID_V7.test(thread)) return null;
  const ms = parseInt(thread.replace(/-/g, '').slice(0, 12), 16);
  const suffix = `-${thread}.jsonl`;
  for (const day of dayFolders(ms)) {
    try {
      if (readdirSync(join(sessionsDir, day)).some((f) => f.startsWith('rollout-') && f.endsWith(suffix))) return true;
    } catch {
      // No such day folder: look at the next.
    }
  }
  return false;
}

/** A rollout file name's thread id (`rollout-<local time>-<thread id>.jsonl`), or null. */
export function rolloutThread(name: string): string | null {
  const m = /^rollout-.*-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$/i.exec(name);
  return m ? m[1]! : null;
}

/** When a UUIDv7 thread id was made (epoch ms), or null for another id. */
export function threadTime(thread: string): number | null {
  return UUID_V7.test(thread) ? parseInt(thread.replace(/-/g, '').slice(0, 12), 16) : null;
}

/** The day folders (relative to the sessions folder) a thread made at `ms` may be saved in. */
export function rolloutDays(ms: number): string[] {
  return dayFolders(ms);
}

/** The path of a thread's rollout file, or null when it has none (yet). Async: the daemon uses it. */
export async function findRolloutFile(sessionsDir: string, thread: string): Promise<string | null> {
  const ms = threadTime(thread);
  if (ms === null) return null;
  const suffix = `-${thread}.jsonl`;
  for (const day of dayFolders(ms)) {
    const names = await readdir(join(sessionsDir, day)).catch(() => [] as string[]);
    const name = names.find((f) => f.startsWith('rollout-') && f.endsWith(suffix));
    if (name !== undefined) return join(sessionsDir, day, name);
  }
  return null;
}
