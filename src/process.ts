/** Facts about other processes, read without touching them. */

/**
 * Whether a process with this pid exists: signal 0 checks without sending anything. EPERM
 * means it exists but belongs to someone else; only ESRCH means there is none.
 */
export function processExists(pid: number): boolean {
  // 0 and negative pids name process groups, not a process.
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}
