/**
 * Scale (docs/benchmarks.md "Scale"): 10, 50 and 100 busy sessions beside one idle session, on a
 * daemon started as a user starts it (`tether serve`, no node flags but the bench's probe).
 * Each busy session runs an agent-like printer (bench/scale-load.ts: ~20 coloured lines a
 * second over a redrawn spinner) and has a live reference client (bench/scale-clients.ts, a
 * process of its own). At each count the bench measures: creation time per session, RSS per
 * session and per client (and what it is made of), the daemon's CPU share (node, its `tmux -C`
 * clients and the tmux processes it ran), keystroke echo on the idle session, `GET /sessions`,
 * every busy session's thumbnail fetched at once, the daemon's event-loop delay, the tmux
 * processes it ran per request, and resyncs.
 *
 * Baselines, measured in the same run: a second, quiet daemon (one idle session, nothing else)
 * on its own tmux server; its echo is sampled in blocks alternating with the busy daemon's, so
 * both see the same host; its list, thumbnail and creation are timed at the start. The tmux
 * server's own CPU for the same output is the CPU baseline.
 *
 * `TETHER_BENCH_SCALE` ("10,50,100"), `TETHER_BENCH_SCALE_LINES` (20 a second),
 * `TETHER_BENCH_SCALE_ECHO_KEYS` (400 a daemon per count: a p99 that is not one outlier) change it. The memory rows at 10
 * idle sessions (the 65 MB target) come first, from a daemon of their own (scale-memory.ts;
 * `TETHER_BENCH_SCALE_MEMORY=0` leaves them out).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bareKeystroke, ECHO_KEYS, startEchoPane, tetherKeystroke } from './echo.bench.js';
import { withBenchDaemon, type BenchDaemon } from './harness.js';
import { envNumber, percentile, sleep, type Row } from './figures.js';
import { childPids, procUsage } from './procs.js';
import { streamWithBase, type RawStream } from './raw-stream.js';
import { BareControlReader, baselineSession } from './bare-tmux.js';
import { scaleMarkdown, scaleRows, type CpuShare, type Memory, type Quiet, type Step } from './scale-report.js';
import type { ProbeReading } from './daemon-probe.js';
import { DAEMON_NODE_ARGS } from '../src/config/daemon-process.js';
import { AgentLoad, compileProbe, LoadClients, pssMb, readProbe, rssParts, timedRepeat, tmuxSpawns } from './scale-load.js';
import { emptyNodeRssMb, memoryRows, warmSnapshotRow } from './scale-memory.js';

/** How long the daemon is left alone before a memory reading. */
const SETTLE_MS = 8000;
/** Keystrokes per block; the two daemons' blocks alternate, the order flipping every block. */
const ECHO_BLOCK = 25;
const ECHO_GAP_MS = 20;
/** Sequential `GET /sessions` per count (100: a p99 that is not the single worst), and rounds of every thumbnail at once. */
const LIST_REQUESTS = 100;
const THUMBNAIL_ROUNDS = 5;

/** CPU seconds of a process and of its children it has reaped (/proc/<pid>/stat utime, stime, cutime, cstime). */
function cpuWithReaped(pid: number): number {
  const stat = readFileSyncSafe(`/proc/${pid}/stat`);
  if (stat === null) return 0;
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) / 100;
}

function readFileSyncSafe(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

/**
 * Starts counting CPU; the returned function ends the window and answers the shares. The
 * daemon's share counts its `tmux -C` clients and the tmux commands it ran and reaped.
 */
async function cpuWindow(bd: BenchDaemon, clientsPid: number): Promise<() => CpuShare> {
  const tmuxPid = await bd.tmux.serverPid();
  const children = childPids(bd.pid);
  const daemon = () => cpuWithReaped(bd.pid) + children.reduce((n, p) => n + cpuWithReaped(p), 0);
  const node = () => procUsage(bd.pid).cpuSeconds;
  const d0 = daemon();
  const n0 = node();
  const t0 = procUsage(tmuxPid).cpuSeconds;
  const c0 = cpuWithReaped(clientsPid);
  const start = performance.now();
  return () => {
    const wall = (performance.now() - start) / 1000;
    const pct = (v: number) => (100 * v) / wall;
    return {
      daemonPct: pct(daemon() - d0),
      nodePct: pct(node() - n0),
      tmuxServerPct: pct(procUsage(tmuxPid).cpuSeconds - t0),
      clientsPct: pct(cpuWithReaped(clientsPid) - c0),
    };
  };
}

/** The daemon's live memory now (after a full collection): /proc's figures, the probe's V8 figures, its `tmux -C` clients. */
async function memoryOf(bd: BenchDaemon): Promise<Memory> {
  const probe = await readProbe(bd, true);
  await sleep(500);
  const { anonMb, fileMb } = rssParts(bd.pid);
  let controlRssMb = 0;
  let controlPssMb = 0;
  for (const p of childPids(bd.pid)) {
    try {
      controlRssMb += procUsage(p).rssMb;
      controlPssMb += pssMb(p);
    } catch {
      // gone
    }
  }
  return {
    rssMb: procUsage(bd.pid).rssMb,
    anonMb,
    fileMb,
    heapUsedMb: probe.memory.heapUsed / 2 ** 20,
    externalMb: probe.memory.external / 2 ** 20,
    youngMb: probe.young / 2 ** 20,
    controlRssMb,
    controlPssMb,
  };
}

type EchoSide = 'quiet' | 'busy' | 'bare';
const ECHO_SIDES: readonly EchoSide[] = ['quiet', 'busy', 'bare'];

/**
 * Keystrokes on both daemons' idle sessions and, as the floor the busy tmux server sets, through
 * a bare `tmux -C` client on an idle session of that server that tether does not know; in blocks
 * whose order rotates.
 */
async function echoAll(quiet: RawStream, busy: RawStream, bare: BareControlReader, keys: number): Promise<Record<EchoSide, number[]>> {
  const out: Record<EchoSide, number[]> = { quiet: [], busy: [], bare: [] };
  for (let block = 0; block * ECHO_BLOCK < keys; block++) {
    const rotated = ECHO_SIDES.map((_, i) => ECHO_SIDES[(i + block) % ECHO_SIDES.length]!);
    for (const side of block % 2 === 0 ? rotated : rotated.reverse()) {
      for (let i = 0; i < ECHO_BLOCK; i++) {
        const key = ECHO_KEYS[(block * ECHO_BLOCK + i) % ECHO_KEYS.length]!;
        out[side].push(
          side === 'bare' ? await bareKeystroke(bare, BARE_SESSION, key) : await tetherKeystroke(side === 'quiet' ? quiet : busy, key),
        );
        await sleep(ECHO_GAP_MS);
      }
    }
  }
  return out;
}

/** The busy tmux server's idle session that tether does not know: the bare echo's. */
const BARE_SESSION = 'bare-echo';

/** Warm captures the daemon has taken so far (`GET /health`). */
async function warmCaptures(bd: BenchDaemon): Promise<number> {
  return (JSON.parse((await bd.request('GET', '/health')).text) as { snapshots: { warmCaptures: number } }).snapshots.warmCaptures;
}

async function get(bd: BenchDaemon, path: string): Promise<void> {
  const res = await bd.request('GET', path);
  if (res.status !== 200) throw new Error(`GET ${path}: HTTP ${res.status} ${res.text.slice(0, 200)}`);
}

async function timedCreate(bd: BenchDaemon, name: string): Promise<number> {
  const start = performance.now();
  await bd.createSession(name);
  return performance.now() - start;
}

/** The quiet daemon's figures: creation, list and thumbnail with one session. */
async function quietBaseline(quiet: BenchDaemon): Promise<Omit<Quiet, 'echo'>> {
  const create: number[] = [];
  for (let i = 1; i <= 3; i++) {
    create.push(await timedCreate(quiet, `q-${i}`));
    const res = await quiet.request('DELETE', `/sessions/q-${i}`);
    if (res.status !== 204) throw new Error(`DELETE q-${i}: HTTP ${res.status}`);
  }
  // Once each first: the first request of a daemon's life loads what it needs.
  await get(quiet, '/sessions');
  await get(quiet, '/sessions/quiet/thumbnail');
  const list = await timedRepeat(() => get(quiet, '/sessions'), LIST_REQUESTS, 50, 60_000);
  const thumbnail = await timedRepeat(() => get(quiet, '/sessions/quiet/thumbnail'), 10, 50, 30_000);
  return { create, list, thumbnail };
}

export async function runScaleBench(): Promise<{ rows: Row[]; markdown: string }> {
  const counts = (process.env.TETHER_BENCH_SCALE ?? '10,50,100')
    .split(',')
    .map(Number)
    .filter((n) => n > 0)
    .sort((a, b) => a - b);
  const rate = envNumber('TETHER_BENCH_SCALE_LINES', 20);
  const keys = envNumber('TETHER_BENCH_SCALE_ECHO_KEYS', 400);
  // TETHER_BENCH_SCALE_MEMORY=0 leaves out the memory rows' own daemon (about 40 s).
  const memory = process.env.TETHER_BENCH_SCALE_MEMORY === '0' ? [] : await memoryRows(await emptyNodeRssMb());
  const work = mkdtempSync(join(tmpdir(), 'tether-scale-'));
  // TETHER_BENCH_SCALE_LAUNCHED=1: both daemons as tether's launchers start them (their node
  // flags, a 2 MB young generation at most), not as `tether serve` run by hand.
  const launched = process.env.TETHER_BENCH_SCALE_LAUNCHED === '1' ? DAEMON_NODE_ARGS : [];
  const probe = [...launched, '--import', compileProbe(work)];
  try {
    const { steps, quiet, warm } = await withBenchDaemon(
      'quiet',
      (q) => withBenchDaemon('idle', (busy) => scaleRun(q, busy, counts, rate, keys), '', undefined, probe),
      '',
      undefined,
      probe,
    );
    return { rows: [...memory, ...scaleRows(steps, quiet, rate), warm], markdown: scaleMarkdown(steps, quiet, rate) };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

async function scaleRun(
  quietBd: BenchDaemon,
  busy: BenchDaemon,
  counts: readonly number[],
  rate: number,
  keys: number,
): Promise<{ steps: Step[]; quiet: Quiet; warm: Row }> {
  await startEchoPane(quietBd, '=quiet:');
  await startEchoPane(busy, '=idle:');
  await baselineSession(busy.tmux, BARE_SESSION);
  await startEchoPane(busy, `=${BARE_SESSION}:`);
  const quietEcho = await streamWithBase(quietBd, 'quiet');
  const busyEcho = await streamWithBase(busy, 'idle');
  const bareEcho = new BareControlReader(busy.tmux, BARE_SESSION);
  const load = new AgentLoad(busy.tmux.dir, rate);
  const clients = new LoadClients();
  const steps: Step[] = [];
  const quietEchoAll: number[] = [];
  try {
    const base = await quietBaseline(quietBd);
    // The first thumbnail of a daemon's life loads its grapheme segmenters: not what a count costs.
    await get(busy, '/sessions/idle/thumbnail');
    for (let i = 0; i < 20; i++) {
      await tetherKeystroke(quietEcho, ECHO_KEYS[i % ECHO_KEYS.length]!);
      await tetherKeystroke(busyEcho, ECHO_KEYS[i % ECHO_KEYS.length]!);
      await bareKeystroke(bareEcho, BARE_SESSION, ECHO_KEYS[i % ECHO_KEYS.length]!);
    }
    let made = 0;
    let before = await memoryOf(busy);
    for (const count of counts) {
      load.pause();
      const fresh: string[] = [];
      const create: number[] = [];
      await readProbe(busy);
      for (; made < count; made++) {
        const name = `s-${made}`;
        create.push(await timedCreate(busy, name));
        fresh.push(name);
      }
      const createProbe = await readProbe(busy);
      await load.start(busy, fresh);
      await sleep(SETTLE_MS);
      const sessionsOnly = await memoryOf(busy);
      await clients.connect(busy, fresh);
      await clients.based();
      const idleEnd = await cpuWindow(busy, clients.pid);
      await sleep(SETTLE_MS);
      const idleCpu = idleEnd();
      const connectProbe = await readProbe(busy);
      const withClients = await memoryOf(busy);
      load.resume();
      await sleep(2000);
      // Window A: the load alone, with the echo probe.
      await readProbe(busy);
      const warm0 = await warmCaptures(busy);
      const loadEnd = await cpuWindow(busy, clients.pid);
      const echo = await echoAll(quietEcho, busyEcho, bareEcho, keys);
      const loadCpu = loadEnd();
      const loadProbe = await readProbe(busy);
      const warm1 = await warmCaptures(busy);
      const underLoad = await memoryOf(busy);
      quietEchoAll.push(...echo.quiet);
      // Window B: the list, then every busy session's thumbnail at once.
      await readProbe(busy);
      const list = await timedRepeat(() => get(busy, '/sessions'), LIST_REQUESTS, 50, 90_000);
      const listProbe = await readProbe(busy);
      const warm2 = await warmCaptures(busy);
      const names = Array.from({ length: count }, (_, i) => `s-${i}`);
      const thumbnails = await timedRepeat(
        () => Promise.all(names.map((s) => get(busy, `/sessions/${s}/thumbnail`))),
        THUMBNAIL_ROUNDS,
        200,
        90_000,
      );
      const thumbProbe = await readProbe(busy);
      const warm3 = await warmCaptures(busy);
      const stats = await clients.stats();
      steps.push({
        count,
        create,
        sessionsOnly,
        withClients,
        underLoad,
        previous: before,
        previousCount: made - fresh.length,
        idleCpu,
        loadCpu,
        echo,
        loadLoop: loadProbe.loop,
        loadGc: loadProbe.gc,
        loadMs: loadProbe.windowMs,
        list,
        listLoop: listProbe.loop,
        listSpawns: tmuxSpawns(listProbe) / Math.max(1, list.length),
        thumbnails,
        thumbLoop: thumbProbe.loop,
        thumbSpawns: tmuxSpawns(thumbProbe) / Math.max(1, thumbnails.length * count),
        clients: stats,
        echoResyncs: Math.max(0, busyEcho.snapshots - 1),
        warmCaptures: { load: warm1 - warm0, list: warm2 - warm1, thumbnails: warm3 - warm2 },
      });
      before = withClients;
      const per = (r: ProbeReading, n: number) =>
        Object.entries(r.spawned)
          .map(([k, v]) => `${k} ${(v / n).toFixed(2)}`)
          .join(', ');
      process.stderr.write(
        `[scale ${count}: processes per session created: ${per(createProbe, fresh.length)}; per client connected and idle settle: ${per(connectProbe, fresh.length)}; per second under load: ${per(loadProbe, loadProbe.windowMs / 1000)}; per list: ${per(listProbe, list.length)}]\n`,
      );
      process.stderr.write(
        `[scale ${count}: list p99 ${percentile(list, 99).toFixed(0)} ms, thumbnails ${percentile(thumbnails, 100).toFixed(0)} ms, echo p99 ${percentile(echo.busy, 99).toFixed(1)} / ${percentile(echo.quiet, 99).toFixed(1)} ms]\n`,
      );
    }
    load.pause();
    const warm = await warmSnapshotRow(busy);
    return { steps, quiet: { ...base, echo: quietEchoAll }, warm };
  } finally {
    load.pause();
    await clients.close();
    await quietEcho.close();
    await busyEcho.close();
    await bareEcho.close();
  }
}
