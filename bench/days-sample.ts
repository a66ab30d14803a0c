/**
 * One sample of the days soak (bench/days.bench.ts): what the daemon, its tmux server and its
 * `tmux -C` clients hold, read from /proc and from the probe inside the daemon (after a full
 * collection), and what its data dir holds on disk. Linux only, as the benches are.
 *
 * The daemon's anonymous memory is split the way the allocators lay it out, so that growth can
 * be told apart: glibc's main arena (`[heap]`, grown with brk), its thread arenas (64 MiB
 * regions, aligned to their size, that glibc maps for threads other than the main one: libuv's
 * pool, where zlib and file writes run), and the rest (V8's pages, WebAssembly memory, stacks).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { ProbeReading } from './daemon-probe.js';
import type { HostReading } from './loop-floor.js';
import { childPids, procUsage } from './procs.js';
import { pssMb } from './scale-load.js';

const MB = 2 ** 20;
/** glibc's HEAP_MAX_SIZE on 64-bit: a thread arena's region. */
const ARENA_BYTES = 64 * MB;

export interface AnonParts {
  /** glibc's main arena (`[heap]`), resident MB. */
  readonly brkMb: number;
  /** glibc's thread arenas, resident MB, and how many there are. */
  readonly arenasMb: number;
  readonly arenas: number;
  /** Every other anonymous mapping (V8's heap and code, WebAssembly memory, stacks), resident MB. */
  readonly otherMb: number;
}

/** What the world did from the start up to a sample (bench/days.bench.ts counts them). */
export interface SampleEvents {
  readonly turns: number;
  readonly floods: number;
  readonly asks: number;
  /** The sleeping phone's wakes, and its resumes (a wake resumes on several sessions). */
  readonly wakes: number;
  readonly resumes: number;
  readonly uploads: number;
  /** Sessions deleted and made again. */
  readonly churn: number;
}

export interface Sample {
  /** Seconds since the run started. */
  readonly t: number;
  /** What the world did so far (absent in samples written before it was counted). */
  readonly events?: SampleEvents;
  readonly sessions: number;
  readonly daemon: {
    readonly rssMb: number;
    readonly anonMb: number;
    readonly fileMb: number;
    readonly anon: AnonParts;
    /** After a full collection (the probe's reading). */
    readonly heapUsedMb: number;
    readonly heapTotalMb: number;
    readonly externalMb: number;
    readonly arrayBuffersMb: number;
    /**
     * The warm captures the daemon keeps for snapshots (`GET /health` `snapshots.warmBytes`), MB:
     * part of its ArrayBuffers. Each is a pane's whole history as tether sends it, so it grows as
     * a history's lines are replaced by longer ones, with nothing leaking (NaN: not read).
     */
    readonly warmMb: number;
    /** V8's spaces, committed / resident, MB. */
    readonly v8CommittedMb: number;
    readonly v8PhysicalMb: number;
    /** Each of V8's spaces resident (`new_space`, `old_space`, `code_space`, `large_object_space`, ...), MB. */
    readonly v8SpacesMb: Readonly<Record<string, number>>;
    readonly fds: number;
    readonly handles: number;
    readonly resources: Readonly<Record<string, number>>;
    /** Event-loop delay over the window since the last sample, ms. */
    readonly loopP99: number;
    readonly loopMax: number;
    readonly gcMajor: number;
    readonly cpuSeconds: number;
    /** Processes it started over the window, by program (and tmux command). */
    readonly spawned: Readonly<Record<string, number>>;
  };
  readonly tmux: { readonly rssMb: number; readonly pssMb: number; readonly cpuSeconds: number };
  readonly controls: { readonly count: number; readonly rssMb: number; readonly pssMb: number; readonly maxRssMb: number };
  readonly disk: {
    readonly buffersMb: number;
    readonly logsMb: number;
    readonly answersKb: number;
    readonly uploadsMb: number;
    readonly uploads: number;
  };
  /** The machine around the daemon over the same window (bench/loop-floor.ts). */
  readonly host: HostReading;
}

/** The daemon's anonymous memory by allocator (see the module's comment). */
export function anonParts(pid: number): AnonParts {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/smaps`, 'utf8');
  } catch {
    return { brkMb: 0, arenasMb: 0, arenas: 0, otherMb: 0 };
  }
  interface Mapping {
    start: number;
    end: number;
    perms: string;
    name: string;
    rssKb: number;
    anonKb: number;
  }
  const maps: Mapping[] = [];
  let cur: Mapping | null = null;
  for (const line of text.split('\n')) {
    const head = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (head) {
      cur = { start: parseInt(head[1]!, 16), end: parseInt(head[2]!, 16), perms: head[3]!, name: head[4]!, rssKb: 0, anonKb: 0 };
      maps.push(cur);
      continue;
    }
    if (!cur) continue;
    if (line.startsWith('Rss:')) cur.rssKb = Number(/\d+/.exec(line)?.[0] ?? 0);
    else if (line.startsWith('Anonymous:')) cur.anonKb = Number(/\d+/.exec(line)?.[0] ?? 0);
  }
  let brk = 0;
  let arenas = 0;
  let arenaCount = 0;
  let other = 0;
  for (let i = 0; i < maps.length; i++) {
    const m = maps[i]!;
    if (m.anonKb === 0) continue;
    if (m.name === '[heap]') {
      brk += m.anonKb;
      continue;
    }
    // A thread arena: a region aligned to 64 MiB, its used part read-write and the rest reserved.
    const next = maps[i + 1];
    const isArena =
      m.name === '' &&
      m.start % ARENA_BYTES === 0 &&
      (m.end - m.start === ARENA_BYTES ||
        (next !== undefined && next.start === m.end && next.perms.startsWith('---') && next.end - m.start === ARENA_BYTES));
    if (isArena) {
      arenas += m.anonKb;
      arenaCount++;
    } else other += m.anonKb;
  }
  return { brkMb: brk / 1024, arenasMb: arenas / 1024, arenas: arenaCount, otherMb: other / 1024 };
}

/** A process's resident memory by kind, MB (/proc/<pid>/status). */
function statusMb(pid: number): { rssMb: number; anonMb: number; fileMb: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return { rssMb: kb('VmRSS') / 1024, anonMb: kb('RssAnon') / 1024, fileMb: (kb('RssFile') + kb('RssShmem')) / 1024 };
}

/** The daemon's `tmux -C` clients (its children in control mode). */
export function controlClientPids(daemonPid: number): number[] {
  return childPids(daemonPid).filter((pid) => {
    try {
      const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      return argv.includes('-C');
    } catch {
      return false;
    }
  });
}

/** Bytes of the files under `path` (recursively) and how many; a missing path holds none. */
function treeSize(path: string): { bytes: number; files: number } {
  let bytes = 0;
  let files = 0;
  let entries;
  try {
    entries = readdirSync(path, { withFileTypes: true });
  } catch {
    return { bytes: 0, files: 0 };
  }
  for (const e of entries) {
    const p = join(path, e.name);
    if (e.isDirectory()) {
      const sub = treeSize(p);
      bytes += sub.bytes;
      files += sub.files;
    } else {
      try {
        bytes += statSync(p).size;
        files++;
      } catch {
        // gone meanwhile
      }
    }
  }
  return { bytes, files };
}

function fileSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

/** The data dir's disk use: disk buffers, the log and its rotations, the answer log, the uploads. */
export function diskOf(dataDir: string): Sample['disk'] {
  const logs = readdirSync(dataDir)
    .filter((f) => f.startsWith('tether.log'))
    .reduce((n, f) => n + fileSize(join(dataDir, f)), 0);
  const uploads = treeSize(join(dataDir, 'uploads'));
  return {
    buffersMb: treeSize(join(dataDir, 'buffers')).bytes / MB,
    logsMb: logs / MB,
    answersKb: fileSize(join(dataDir, 'answers.log')) / 1024,
    uploadsMb: uploads.bytes / MB,
    uploads: uploads.files,
  };
}

/** One sample, from the probe's reading (taken after a full collection) and /proc. */
export function sampleOf(
  t: number,
  sessions: number,
  pid: number,
  tmuxPid: number,
  dataDir: string,
  probe: ProbeReading,
  host: HostReading,
  warmMb: number,
): Sample {
  const own = statusMb(pid);
  const spaces = Object.values(probe.spaces);
  const controls = controlClientPids(pid);
  let cRss = 0;
  let cPss = 0;
  let cMax = 0;
  for (const c of controls) {
    try {
      const r = procUsage(c).rssMb;
      cRss += r;
      cMax = Math.max(cMax, r);
      cPss += pssMb(c);
    } catch {
      // ended meanwhile
    }
  }
  let fds = 0;
  try {
    fds = readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    // gone
  }
  const tmux = procUsage(tmuxPid);
  return {
    t,
    sessions,
    daemon: {
      ...own,
      anon: anonParts(pid),
      heapUsedMb: probe.memory.heapUsed / MB,
      heapTotalMb: probe.memory.heapTotal / MB,
      externalMb: probe.memory.external / MB,
      arrayBuffersMb: probe.memory.arrayBuffers / MB,
      warmMb,
      v8CommittedMb: spaces.reduce((n, s) => n + s.size, 0) / MB,
      v8PhysicalMb: spaces.reduce((n, s) => n + s.physical, 0) / MB,
      v8SpacesMb: Object.fromEntries(Object.entries(probe.spaces).map(([name, space]) => [name, space.physical / MB])),
      fds,
      handles: probe.handles,
      resources: probe.resources,
      loopP99: probe.loop.p99,
      loopMax: probe.loop.max,
      gcMajor: probe.gc.major,
      cpuSeconds: procUsage(pid).cpuSeconds,
      spawned: probe.spawned,
    },
    tmux: { rssMb: tmux.rssMb, pssMb: pssMb(tmuxPid), cpuSeconds: tmux.cpuSeconds },
    controls: { count: controls.length, rssMb: cRss, pssMb: cPss, maxRssMb: cMax },
    disk: diskOf(dataDir),
    host,
  };
}
