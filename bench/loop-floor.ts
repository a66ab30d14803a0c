/**
 * The host's own floor for event-loop delay: a bare node process beside the daemon, at the
 * daemon's priority, doing nothing but measuring its loop the way the daemon's probe does
 * (bench/daemon-probe.ts: perf_hooks.monitorEventLoopDelay, 10 ms resolution, taken off). What it
 * sees is what the machine's scheduler does to any process at that moment (the tmux server, the
 * panes' programs, the bench's own checkers on the same two cores); what the daemon sees beyond
 * it is the daemon's own work. Read once per sample, like the daemon's probe.
 *
 * Also the host's CPU, busy share of all cores since the last reading (/proc/stat), and the
 * bench's own process's share of one core: what the measuring side costs the machine.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';
import { createInterface } from 'node:readline';

const RESOLUTION_MS = 10;

/** The floor process: answers each line on stdin with its loop's figures since the last line, then resets. */
const FLOOR_SCRIPT = `
const { monitorEventLoopDelay } = require('node:perf_hooks');
const loop = monitorEventLoopDelay({ resolution: ${RESOLUTION_MS} });
loop.enable();
const ms = (ns) => Math.max(0, ns / 1e6 - ${RESOLUTION_MS});
process.stdin.setEncoding('utf8');
process.stdin.on('data', () => {
  process.stdout.write(JSON.stringify({ p99: ms(loop.percentile(99)), max: ms(loop.max) }) + '\\n');
  loop.reset();
});
process.stdin.on('end', () => process.exit(0));
`;

export interface HostReading {
  /** The bare process's event-loop delay over the window, ms. */
  readonly floorP99: number;
  readonly floorMax: number;
  /** The whole machine's busy share over the window, % of all cores. */
  readonly busyPct: number;
  /** The bench process's CPU over the window, % of one core. */
  readonly benchPct: number;
}

/** Busy and total jiffies of all cores (/proc/stat's first line). */
function cpuTimes(): { busy: number; total: number } {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const total = fields.reduce((n, v) => n + v, 0);
  // idle and iowait are the machine waiting.
  const idle = (fields[3] ?? 0) + (fields[4] ?? 0);
  return { busy: total - idle, total };
}

export class LoopFloor {
  private readonly child: ChildProcess;
  private readonly answers: ((line: string) => void)[] = [];
  private lastCpu = cpuTimes();
  private lastBench = process.cpuUsage();
  private lastAt = performance.now();

  /** Starts the floor process: call before the bench lowers its own priority, so the floor keeps the daemon's. */
  constructor() {
    this.child = spawn(process.execPath, ['-e', FLOOR_SCRIPT], { stdio: ['pipe', 'pipe', 'inherit'] });
    createInterface({ input: this.child.stdout! }).on('line', (line) => this.answers.shift()?.(line));
  }

  /** The figures since the last reading (or the start). */
  async read(): Promise<HostReading> {
    const line = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('the loop floor process did not answer in 10 s')), 10_000);
      this.answers.push((l) => {
        clearTimeout(timer);
        resolve(l);
      });
      this.child.stdin!.write('\n');
    });
    const floor = JSON.parse(line) as { p99: number; max: number };
    const cpu = cpuTimes();
    const bench = process.cpuUsage();
    const now = performance.now();
    const reading: HostReading = {
      floorP99: floor.p99,
      floorMax: floor.max,
      busyPct: (100 * (cpu.busy - this.lastCpu.busy)) / Math.max(1, cpu.total - this.lastCpu.total),
      benchPct: (100 * (bench.user - this.lastBench.user + bench.system - this.lastBench.system)) / 1000 / Math.max(1, now - this.lastAt),
    };
    this.lastCpu = cpu;
    this.lastBench = bench;
    this.lastAt = now;
    return reading;
  }

  stop(): void {
    this.child.stdin!.end();
    this.child.kill();
  }
}

/**
 * Runs `fn` with the host's floor beside it, the bench's own main thread at niceness `nice`
 * meanwhile: the floor starts first, so it keeps the daemon's priority. The niceness is put back
 * after, for the next run's daemon inherits it; a process without the privilege to raise its
 * priority again says so.
 */
export async function withHostFloor<T>(nice: number, fn: (floor: LoopFloor) => Promise<T>): Promise<T> {
  const floor = new LoopFloor();
  const priority = getPriority();
  if (nice !== priority) setPriority(nice);
  try {
    return await fn(floor);
  } finally {
    floor.stop();
    try {
      if (getPriority() !== priority) setPriority(priority);
    } catch (err) {
      process.stderr.write(
        `[days: the bench could not take its priority back (${(err as Error).message}); the next run's daemon starts at nice ${getPriority()}]\n`,
      );
    }
  }
}
