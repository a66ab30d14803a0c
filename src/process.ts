/** Facts about other processes, read without touching them. */
import { readFileSync } from 'node:fs';

/**
 * Whether a process with this pid exists and has not exited: signal 0 checks without sending
 * anything. EPERM means it exists but belongs to someone else; only ESRCH means there is none.
 *
 * A process that has exited stays in the table as a zombie until its parent reaps it, and
 * signal 0 still finds it. A daemonized tmux server or a detached daemon has init for a parent,
 * and an init that reaps late (some container and VM inits take seconds) would make one look
 * alive long after it ended. So on Linux a zombie counts as gone: its state in
 * `/proc/<pid>/stat` is `Z` (the field after the command name, which may hold spaces and
 * parentheses, so it is read after the last `)`). Elsewhere signal 0 is all there is.
 */
export function processExists(pid: number): boolean {
  // 0 and negative pids name process groups, not a process.
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== 'ESRCH';
  }
  return !isZombie(pid);
}

/**
 * Whether `/proc` says the process has exited: a zombie, or reaped since signal 0 found it.
 * False where there is no `/proc` to ask.
 */
function isZombie(pid: number): boolean {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT' && procMounted();
  }
  const end = stat.lastIndexOf(')');
  return stat.charAt(end + 2) === 'Z';
}

let proc: boolean | undefined;
function procMounted(): boolean {
  if (proc === undefined) {
    try {
      readFileSync('/proc/self/stat');
      proc = true;
    } catch {
      proc = false;
    }
  }
  return proc;
}
