/**
 * What the scale bench (bench/scale.bench.ts) puts on a daemon and how it looks inside it: the
 * agent-like output each busy session prints, the live clients (bench/scale-clients.ts, a
 * process of their own), and the probe loaded into the daemon (bench/daemon-probe.ts).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { buildSync } from 'esbuild';
import type { ProbeReading } from './daemon-probe.js';
import { PROBE_FILE_NAME, PROBE_GC_FILE_NAME } from './probe-file.js';
import type { BenchDaemon } from './harness.js';
import { sleep, waitFor } from './figures.js';
import type { ClientsRequest, ClientsStats } from './scale-clients.js';

export type { ProbeReading };

/**
 * An agent at work, as its terminal sees it: coloured tool-result lines at `rate` a second,
 * each written over a spinner line that is cleared and redrawn (carriage return, erase line),
 * every fifth an update in place of the line above it (cursor up). Perl, so that the pace
 * costs no process per line (a shell's `sleep` would fork 20 times a second per session).
 * Nothing is printed while the pause file exists; it ends when the bench's dir is gone, its
 * shell is gone or its terminal refuses a write (a bench stopped half way leaves nothing running).
 */
const AGENT_PL = String.raw`use strict; use warnings; use utf8;
binmode STDOUT, ':utf8'; $| = 1;
my ($pause, $rate, $dir) = @ARGV;
my @spin = ('⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏');
my $i = 0;
my $parent = getppid();
while (1) {
  select(undef, undef, undef, 1 / $rate);
  # The bench gone (its dir removed) or the pane's shell gone: stop.
  exit 0 if getppid() != $parent || !-d $dir;
  next if -e $pause;
  $i++;
  my $up = $i % 5 == 0 ? "\e[1A" : '';
  printf("\r\e[2K%s\r\e[2K\e[3%dm●\e[0m \e[1mEdit\e[0m(src/module-%d.ts) \e[2m+%d -%d lines, step %d\e[0m\n",
    $up, $i % 7 + 1, $i % 40, $i % 97, $i % 13, $i) or exit 0;
  printf("\e[36m%s\e[0m Working… \e[2m(%ds · esc to interrupt)\e[0m", $spin[$i % 10], int($i / $rate)) or exit 0;
}
`;

/** Busy sessions' output: the script in the bench tmux's dir, and its pause switch. */
export class AgentLoad {
  private readonly script: string;
  private readonly pauseFile: string;

  constructor(
    private readonly dir: string,
    private readonly linesPerSecond: number,
  ) {
    this.script = join(dir, 'agent.pl');
    this.pauseFile = join(dir, 'agent.paused');
    writeFileSync(this.script, AGENT_PL);
  }

  /** Starts the agent in each session's pane (paused or not, as the switch is). */
  async start(bd: BenchDaemon, sessions: readonly string[]): Promise<void> {
    for (const s of sessions) await bd.typeLine(`=${s}:`, `perl ${this.script} ${this.pauseFile} ${this.linesPerSecond} ${this.dir}`);
  }

  pause(): void {
    writeFileSync(this.pauseFile, '');
  }

  resume(): void {
    rmSync(this.pauseFile, { force: true });
  }
}

/** The live clients' process: one reference client per busy session. */
export class LoadClients {
  private readonly child: ChildProcess;
  private readonly exited: Promise<void>;
  private waiting: ((s: ClientsStats) => void)[] = [];

  constructor() {
    const file = fileURLToPath(new URL('./scale-clients.ts', import.meta.url));
    this.child = fork(file, [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    this.child.on('message', (m: ClientsStats) => this.waiting.shift()?.(m));
    this.exited = new Promise((r) => this.child.once('exit', () => r()));
  }

  get pid(): number {
    return this.child.pid!;
  }

  private ask(req: ClientsRequest): Promise<ClientsStats> {
    return new Promise((resolve) => {
      this.waiting.push(resolve);
      this.child.send(req);
    });
  }

  connect(bd: BenchDaemon, sessions: readonly string[]): Promise<ClientsStats> {
    return this.ask({ type: 'connect', base: bd.base, token: bd.token, sessions });
  }

  stats(): Promise<ClientsStats> {
    return this.ask({ type: 'stats' });
  }

  /** Resolves once every client holds a screen. */
  async based(timeoutMs = 120_000): Promise<ClientsStats> {
    return waitFor(
      'every live client to get its first snapshot',
      async () => {
        const s = await this.stats();
        return s.based === s.clients ? s : null;
      },
      timeoutMs,
      200,
    );
  }

  async close(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    if (this.child.connected) this.child.send({ type: 'close' } satisfies ClientsRequest);
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 5000);
    await this.exited;
    clearTimeout(timer);
  }
}

/** Compiles the probe to one ES module in `dir`; answers the `--import` argument that loads it. */
export function compileProbe(dir: string): string {
  const outfile = join(dir, 'daemon-probe.mjs');
  buildSync({
    entryPoints: [fileURLToPath(new URL('./daemon-probe.ts', import.meta.url))],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    logLevel: 'silent',
  });
  return pathToFileURL(outfile).href;
}

/** Where a daemon's probe writes. */
export const probeFile = (bd: BenchDaemon): string => join(bd.dataDir, PROBE_FILE_NAME);

/**
 * Asks the daemon's probe for what it counted since the last reading (and starts a new window);
 * with `collect`, after a full garbage collection.
 */
export async function readProbe(bd: BenchDaemon, collect = false): Promise<ProbeReading> {
  const file = probeFile(bd);
  if (collect) writeFileSync(join(bd.dataDir, PROBE_GC_FILE_NAME), '');
  const before = existsSync(file) ? statSync(file).mtimeMs : 0;
  const previous = before > 0 ? (JSON.parse(readFileSync(file, 'utf8')) as ProbeReading).serial : 0;
  process.kill(bd.pid, 'SIGUSR2');
  return waitFor(
    'the daemon probe to answer',
    () => {
      if (!existsSync(file)) return null;
      const r = JSON.parse(readFileSync(file, 'utf8')) as ProbeReading;
      return r.serial > previous ? r : null;
    },
    10_000,
    20,
  );
}

/** tmux processes a reading counts, all commands together. */
export const tmuxSpawns = (r: ProbeReading): number =>
  Object.entries(r.spawned)
    .filter(([k]) => k === 'tmux' || k.startsWith('tmux '))
    .reduce((n, [, v]) => n + v, 0);

/**
 * A process's proportional set size, MB (/proc/<pid>/smaps_rollup): its private pages and its
 * share of those it shares (a hundred `tmux -C` clients share one tmux binary and libc). 0 once gone.
 */
export function pssMb(pid: number): number {
  try {
    return Number(/^Pss:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))?.[1] ?? 0) / 1024;
  } catch {
    return 0;
  }
}

/** Anonymous and file-backed resident memory of a process, MB (/proc/<pid>/status). */
export function rssParts(pid: number): { anonMb: number; fileMb: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return { anonMb: kb('RssAnon') / 1024, fileMb: (kb('RssFile') + kb('RssShmem')) / 1024 };
}

/** Calls `fn` `times` times, `everyMs` apart, within `budgetMs`; answers each call's duration, ms. */
export async function timedRepeat(fn: () => Promise<unknown>, times: number, everyMs: number, budgetMs: number): Promise<number[]> {
  const out: number[] = [];
  const end = performance.now() + budgetMs;
  for (let i = 0; i < times && performance.now() < end; i++) {
    const start = performance.now();
    await fn();
    out.push(performance.now() - start);
    await sleep(everyMs);
  }
  return out;
}
