/**
 * What a process costs, read from /proc: its CPU seconds and resident memory, its children (and
 * a tmux pane's whole tree), and sums over a set of processes (a daemon with its tmux clients).
 * Linux only, as the benches are.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** A process's CPU seconds (user + system) and resident memory, from /proc. */
export function procUsage(pid: number): { cpuSeconds: number; rssMb: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces) start after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]); // utime, stime (fields 14, 15)
  const rss = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return { cpuSeconds: ticks / CLOCK_TICKS, rssMb: Number(rss ?? 0) / 1024 };
}
/** USER_HZ: 100 on every Linux this runs on (getconf CLK_TCK). */
const CLOCK_TICKS = 100;

/** The direct children of a process (every thread's `children` list). */
export function childPids(pid: number): number[] {
  const out: number[] = [];
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      out.push(...readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number));
    } catch {
      // thread gone
    }
  }
  return out;
}

/** The processes of a tmux target's panes and all their descendants (none once its panes are gone). */
export async function paneTree(server: { tmux(...args: string[]): Promise<string> }, target: string): Promise<number[]> {
  const out = await server.tmux('list-panes', '-t', target, '-F', '#{pane_pid}').catch(() => '');
  const pids = out.split('\n').filter(Boolean).map(Number);
  for (let i = 0; i < pids.length; i++) {
    try {
      pids.push(...childPids(pids[i]!));
    } catch {
      // exited
    }
  }
  return pids;
}

/** One of `procUsage`'s figures summed over a set of processes (gone ones count 0). */
export function sumOfProcs(pids: readonly number[], figure: 'cpuSeconds' | 'rssMb'): number {
  let total = 0;
  for (const pid of pids) {
    try {
      total += procUsage(pid)[figure];
    } catch {
      // exited
    }
  }
  return total;
}

/** CPU seconds of a set of processes (gone ones count 0). */
export const cpuOf = (pids: readonly number[]): number => sumOfProcs(pids, 'cpuSeconds');
