/**
 * A probe the scale bench loads into the daemon it measures (`node --import <probe> tether
 * serve`, compiled to one ES module by esbuild at the bench's start; the daemon runs no
 * TypeScript): the event loop's delay (perf_hooks.monitorEventLoopDelay), the process's memory
 * as V8 and node count it, and every child process the daemon starts, by program and tmux
 * command. The bench sends SIGUSR2; the probe writes what it counted since the last signal to
 * PROBE_FILE_NAME in the daemon's data dir (`TETHER_DATA_DIR`, written aside and renamed into
 * place) and starts counting afresh.
 *
 * It changes nothing the daemon does: the two child-process functions are wrapped to count
 * their calls and then call the originals with the same arguments. A reading asked for with the
 * GC file beside the readings (PROBE_GC_FILE_NAME) runs a full garbage collection first, so
 * that memory per session compares what is live, not what a burst left for later; with the
 * snapshot file beside them (PROBE_SNAPSHOT_FILE_NAME), a heap snapshot is written too. With
 * `TETHER_BENCH_PROBE_PROFILE=<dir>` it also profiles the CPU and samples allocations, one
 * profile of each per window (`window-<serial>.cpuprofile`, `.heapprofile`).
 */
import childProcess from 'node:child_process';
import { appendFileSync, existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { getHeapSpaceStatistics, setFlagsFromString, writeHeapSnapshot } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { join } from 'node:path';
import { Session } from 'node:inspector';
import { constants, monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { PROBE_FILE_NAME, PROBE_GC_FILE_NAME, PROBE_SNAPSHOT_FILE_NAME } from './probe-file.js';

/** What the probe writes on each SIGUSR2. */
export interface ProbeReading {
  /** Which reading this is (1, 2, ...). */
  readonly serial: number;
  /** The window it covers, ms. */
  readonly windowMs: number;
  /** Event-loop delay over the window, ms (beyond the 10 ms sampling interval). */
  readonly loop: { readonly p50: number; readonly p99: number; readonly max: number; readonly mean: number };
  readonly memory: NodeJS.MemoryUsage;
  /** V8's young generation as committed now (its new spaces' physical size), bytes: the part of the heap that grows with the allocation rate, not with what is live. */
  readonly young: number;
  /** V8's heap spaces now: each one's committed size, what is used of it and what is resident, bytes. */
  readonly spaces: Readonly<Record<string, { readonly size: number; readonly used: number; readonly physical: number }>>;
  /** What keeps the event loop alive now, by kind (process.getActiveResourcesInfo()), and libuv's active handles in all. */
  readonly resources: Readonly<Record<string, number>>;
  readonly handles: number;
  /** Child processes started in the window, by `<program> <tmux command>` (e.g. `tmux capture-pane`). */
  readonly spawned: Record<string, number>;
  /** Garbage collections in the window: how many, their pauses together and the longest, ms; `major` the mark-compacts among them. */
  readonly gc: {
    readonly count: number;
    readonly totalMs: number;
    readonly maxMs: number;
    readonly major: number;
    readonly majorMs: number;
  };
}

/** tmux's own flags that take a value, skipped to find the command name. */
const TMUX_FLAGS_WITH_VALUE = new Set(['-S', '-L', '-f', '-T']);

function describe(file: unknown, args: unknown): string {
  const program = typeof file === 'string' ? (file.split('/').pop() ?? file) : '?';
  if (!Array.isArray(args)) return program;
  const argv = args as unknown[];
  if (program !== 'tmux') return program;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (typeof a !== 'string') break;
    if (TMUX_FLAGS_WITH_VALUE.has(a)) i++;
    else if (!a.startsWith('-')) return `tmux ${a}`;
  }
  return 'tmux';
}

/** process.getActiveResourcesInfo() counted by kind (TCPWRAP, Timeout, FSReqCallback, ...). */
function countResources(): Record<string, number> {
  const out: Record<string, number> = {};
  for (const kind of process.getActiveResourcesInfo()) out[kind] = (out[kind] ?? 0) + 1;
  return out;
}

/** The sampling interval: the histogram records whole intervals, so it is taken off each figure. */
const RESOLUTION_MS = 10;

const dataDir = process.env.TETHER_DATA_DIR;
if (dataDir) {
  const out = join(dataDir, PROBE_FILE_NAME);
  const loop = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  loop.enable();
  let spawned: Record<string, number> = {};
  let serial = 0;
  let since = performance.now();
  const count = (file: unknown, args: unknown): void => {
    const key = describe(file, args);
    spawned[key] = (spawned[key] ?? 0) + 1;
  };
  const cp = childProcess as unknown as Record<string, (...a: unknown[]) => unknown>;
  for (const name of ['execFile', 'spawn'] as const) {
    const original = cp[name]!;
    cp[name] = function (this: unknown, ...a: unknown[]) {
      count(a[0], a[1]);
      return original.apply(this, a);
    };
  }
  syncBuiltinESMExports();
  const noGc = () => ({ count: 0, totalMs: 0, maxMs: 0, major: 0, majorMs: 0 });
  let gc = noGc();
  // TETHER_BENCH_PROBE_GC_LOG=<file>: a line per collection of 5 ms or more (kind, flags, heap).
  const gcLog = process.env.TETHER_BENCH_PROBE_GC_LOG;
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const detail = (e as unknown as { detail?: { kind?: number; flags?: number } }).detail;
      if (gcLog && e.duration >= 5) {
        const m = process.memoryUsage();
        appendFileSync(
          gcLog,
          `${new Date().toISOString()} ${e.duration.toFixed(1)} ms kind ${detail?.kind} flags ${detail?.flags} heap ${(m.heapUsed / 2 ** 20).toFixed(1)}/${(m.heapTotal / 2 ** 20).toFixed(1)} MB external ${(m.external / 2 ** 20).toFixed(1)} MB\n`,
        );
      }
      gc.count++;
      gc.totalMs += e.duration;
      gc.maxMs = Math.max(gc.maxMs, e.duration);
      if (detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) {
        gc.major++;
        gc.majorMs += e.duration;
      }
    }
  }).observe({ entryTypes: ['gc'] });
  // TETHER_BENCH_PROBE_PROFILE=<dir>: each window's CPU profile too (window-<serial>.cpuprofile).
  const profileDir = process.env.TETHER_BENCH_PROBE_PROFILE;
  // TETHER_BENCH_PROBE_SURVIVORS=1: the allocation profile leaves out what died young, so it
  // shows what the old generation was given (what lived through a scavenge).
  const sampling = {
    samplingInterval: 16384,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: process.env.TETHER_BENCH_PROBE_SURVIVORS !== '1',
  };
  const inspector = profileDir ? new Session() : null;
  if (inspector) {
    inspector.connect();
    inspector.post('Profiler.enable', () => inspector.post('Profiler.start'));
    inspector.post('HeapProfiler.enable', () => inspector.post('HeapProfiler.startSampling', sampling));
  }
  const ms = (ns: number): number => Math.max(0, ns / 1e6 - RESOLUTION_MS);
  const gcFlag = join(dataDir, PROBE_GC_FILE_NAME);
  const snapshotFlag = join(dataDir, PROBE_SNAPSHOT_FILE_NAME);
  let fullGc: (() => void) | null = null;
  process.on('SIGUSR2', () => {
    if (existsSync(gcFlag)) {
      rmSync(gcFlag, { force: true });
      // The memory that is live, not the garbage a burst left (V8 collects it only later).
      if (!fullGc) {
        setFlagsFromString('--expose-gc');
        fullGc = runInNewContext('gc') as () => void;
      }
      fullGc();
    }
    if (existsSync(snapshotFlag)) {
      // A heap snapshot where the bench asked for one (what holds the memory that is live).
      const path = readFileSync(snapshotFlag, 'utf8').trim();
      rmSync(snapshotFlag, { force: true });
      writeHeapSnapshot(path);
    }
    const now = performance.now();
    const reading: ProbeReading = {
      serial: ++serial,
      windowMs: now - since,
      loop: { p50: ms(loop.percentile(50)), p99: ms(loop.percentile(99)), max: ms(loop.max), mean: ms(loop.mean) },
      memory: process.memoryUsage(),
      young: getHeapSpaceStatistics()
        .filter((space) => space.space_name.startsWith('new_'))
        .reduce((sum, space) => sum + space.physical_space_size, 0),
      spaces: Object.fromEntries(
        getHeapSpaceStatistics().map((space) => [
          space.space_name,
          { size: space.space_size, used: space.space_used_size, physical: space.physical_space_size },
        ]),
      ),
      resources: countResources(),
      handles: (process as unknown as { _getActiveHandles(): unknown[] })._getActiveHandles().length,
      spawned,
      gc,
    };
    const publish = (): void => {
      writeFileSync(`${out}.tmp`, JSON.stringify(reading));
      renameSync(`${out}.tmp`, out);
    };
    loop.reset();
    spawned = {};
    gc = noGc();
    since = now;
    if (!inspector || !profileDir) return publish();
    inspector.post('Profiler.stop', (err, result) => {
      if (!err) writeFileSync(join(profileDir, `window-${reading.serial}.cpuprofile`), JSON.stringify(result.profile));
      inspector.post('HeapProfiler.stopSampling', (err2, sampled) => {
        if (!err2) writeFileSync(join(profileDir, `window-${reading.serial}.heapprofile`), JSON.stringify(sampled.profile));
        inspector.post('HeapProfiler.startSampling', sampling, () => inspector.post('Profiler.start', () => publish()));
      });
    });
  });
}
