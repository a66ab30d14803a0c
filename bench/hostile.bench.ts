/**
 * The phone while hostile peers try to hold the daemon's sockets (docs/reliability.md "Peers
 * that hold sockets"): a TLS daemon with its documented limits; 5000 hostile connections
 * (`TETHER_BENCH_HOSTILE`) from eight loopback addresses, one of them sending 40 %, opened at
 * 200 a second by a process of their own (bench/hostile-peers.ts), a third each half-open
 * requests that dribble a byte a second after their TLS handshake, silent TCP, and ClientHellos
 * sent a byte at a time. The hostile process runs at `nice 19` (`TETHER_BENCH_HOSTILE_NICE`, 0
 * for none): a peer on the network uses another machine's CPU, and on this one's two cores its
 * CPU would otherwise be measured as the daemon's slowness.
 *
 * The phone is the reference client pinned to the daemon's certificate, waking as a phone does
 * (a new connection carrying its position, its TLS ticket offered), then typing into a pane that
 * echoes each key (`cat` on a raw tty). Each round measures connect (to the upgrade's answer),
 * resume (to the session's frames and a position) and five keystroke echoes. The baseline is
 * the same rounds on the same daemon while it is quiet, just before the flood and again once
 * every hostile connection is gone. Beside them: how long each
 * hostile kind stayed open against its documented limit, what the daemon's limits did (its log),
 * and the daemon's RSS and descriptors before, at the peak of, and after the flood.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { join } from 'node:path';
import { DAEMON_NODE_ARGS } from '../src/config/daemon-process.js';
import { createInterface } from 'node:readline';
import { SessionStream, pinnedTlsOptions } from '../src/reference-client/index.js';
import { REPORT_EVERY_MS } from '../src/transport/peer-guard.js';
import { PEER_LIMITS } from '../src/transport/peer-limits.js';
import { ECHO_KEYS, startEchoPane, tetherKeystroke } from './echo.bench.js';
import { withBenchDaemon, type BenchDaemon } from './harness.js';
import { envNumber, ms, percentile, ratio, sleep, waitFor, type Row } from './figures.js';
import { procUsage } from './procs.js';
import { compileProbe, readProbe } from './scale-load.js';
import { HOSTILE_KINDS, type HostileKind, type HostileOptions, type HostileSummary, type KindSummary } from './hostile-peers.js';

const SESSION = 'hostile';
const ECHOES_PER_ROUND = 5;
/** Between two rounds, quiet or not: the same idle time before each wake-up. */
const GAP_MS = 1000;

interface Round {
  readonly connect: number;
  readonly resume: number;
  readonly echo: number[];
  /** The daemon's longest event-loop delay and garbage collection during the round (its probe), ms. */
  loopMax?: number;
  gcMax?: number;
  /** The phone's own (this process's) longest event-loop delay during the round, ms. */
  readonly phoneLoopMax: number;
}

/** The resolution of the phone's event-loop sampling, taken off its figures (as the daemon's probe does). */
const LOOP_RESOLUTION_MS = 10;

/** The phone: one reference client, woken again and again. */
class Phone {
  readonly stream: SessionStream;
  private metas = 0;
  private keys = 0;
  /** This process's event loop: a round slow on the phone's side shows here. */
  private readonly loop = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS });
  private readonly keystrokes = {
    onData: null as ((bytes: Buffer, seq: number) => void) | null,
    send: (frame: object) => this.stream.sendKeys((frame as { data: string }).data),
  };

  constructor(base: string, token: string, tls: Awaited<ReturnType<typeof pinnedTlsOptions>>) {
    this.stream = new SessionStream({ baseUrl: base, token, session: SESSION, tls });
    this.stream.on('meta', () => this.metas++);
    this.stream.on('data', (bytes, seq) => this.keystrokes.onData?.(bytes, seq));
    this.loop.enable();
  }

  /** Wakes (a new connection with the position held), then types. */
  async round(): Promise<Round> {
    if (this.stream.status !== 'closed') this.stream.close();
    const metas = this.metas;
    this.loop.reset();
    const start = performance.now();
    this.stream.connect();
    const connect = await waitFor('the phone to connect', () => (this.stream.status === 'open' ? performance.now() - start : 0), 60_000, 1);
    const resume = await waitFor(
      'the phone to resume',
      () => (this.metas > metas && this.stream.lastSeq !== null ? performance.now() - start : 0),
      60_000,
      1,
    );
    const echo: number[] = [];
    for (let i = 0; i < ECHOES_PER_ROUND; i++)
      echo.push(await tetherKeystroke(this.keystrokes, ECHO_KEYS[this.keys++ % ECHO_KEYS.length]!, 30_000));
    return { connect, resume, echo, phoneLoopMax: Math.max(0, this.loop.max / 1e6 - LOOP_RESOLUTION_MS) };
  }

  close(): void {
    this.loop.disable();
    this.stream.close();
  }
}

/** Samples the daemon's RSS and open descriptors until stopped; before, peak and last. */
class DaemonWatch {
  readonly rss: number[] = [];
  readonly fds: number[] = [];
  private readonly timer: NodeJS.Timeout;
  constructor(private readonly pid: number) {
    this.sample();
    this.timer = setInterval(() => this.sample(), 250);
  }
  sample(): void {
    this.rss.push(procUsage(this.pid).rssMb);
    this.fds.push(readdirSync(`/proc/${this.pid}/fd`).length);
  }
  stop(): void {
    clearInterval(this.timer);
  }
}

/** The kernel's count of connections dropped because a listen queue was full (this network namespace, every socket). */
function listenOverflows(): number {
  const [keys, values] = readFileSync('/proc/net/netstat', 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('TcpExt:'))
    .map((l) => l.split(/\s+/));
  const i = keys?.indexOf('ListenOverflows') ?? -1;
  return i < 0 ? 0 : Number(values?.[i] ?? 0);
}

/** What the daemon's connection limits said in its log (each line counts since the one before). */
function limitsLog(dataDir: string): Record<string, number> {
  const sums: Record<string, number> = {};
  for (const line of readFileSync(join(dataDir, 'tether.log'), 'utf8').split('\n')) {
    if (!line.includes('connection limits')) continue;
    const entry = JSON.parse(line) as Record<string, unknown>;
    for (const k of ['refused', 'evicted', 'expired', 'slowBodies', 'unansweredUpgrades']) sums[k] = (sums[k] ?? 0) + Number(entry[k] ?? 0);
    sums.longestMs = Math.max(sums.longestMs ?? 0, Number(entry.longestUnauthenticatedMs ?? 0));
  }
  return sums;
}

const p = (samples: readonly number[], q: number) => percentile(samples, q);
const s1 = (v: number) => `${v.toFixed(1)} s`;

function phoneRows(quiet: Round[], flood: Round[]): Row[] {
  const rows: Row[] = [];
  const pick: Record<'connect' | 'resume' | 'echo', (r: Round[]) => number[]> = {
    connect: (r) => r.map((x) => x.connect),
    resume: (r) => r.map((x) => x.resume),
    echo: (r) => r.flatMap((x) => x.echo),
  };
  const label = {
    connect: 'phone connect (TCP, TLS resumed, upgrade)',
    resume: 'phone resume (connect to frames and position)',
    echo: 'phone keystroke echo',
  };
  for (const what of ['connect', 'resume', 'echo'] as const) {
    const q = pick[what](quiet);
    const f = pick[what](flood);
    rows.push({
      name: `hostile: ${label[what]}, during the flood (${f.length})`,
      value: `p50 ${ms(p(f, 50))}, p90 ${ms(p(f, 90))}`,
      ratio: `${ratio(p(f, 50), p(q, 50))} / ${ratio(p(f, 90), p(q, 90))}`,
      target: 'p90 <= quiet max',
      baseline: `quiet (before and after) p50 ${ms(p(q, 50))}, p90 ${ms(p(q, 90))}, max ${ms(Math.max(...q))} (ratios p50 / p90)`,
    });
  }
  return rows;
}

/** A kind's documented bound, from its TCP connect (docs/reliability.md). */
function limitOf(kind: HostileKind): number {
  const l = PEER_LIMITS;
  // Silent and slow TLS: the handshake's bound (node's own timer). Half-open: its headers'
  // bound after the handshake, and in any case the unauthenticated life, checked each interval.
  return (kind === 'half-open' ? l.unauthenticatedMs : l.handshakeMs) / 1000;
}

function kindRow(kind: HostileKind, k: KindSummary): Row {
  const limit = limitOf(kind);
  const max = Math.max(0, ...k.openSeconds);
  return {
    name: `hostile: ${kind} connections (${k.n}), open from TCP connect`,
    value: `max ${s1(max)}, p50 ${s1(p(k.openSeconds, 50))}`,
    ratio: `${(max / limit).toFixed(2)}x`,
    // Each bound is kept within a check interval of it (a loaded machine's timers run late too).
    target: `max <= ${limit} + ${PEER_LIMITS.checkIntervalMs / 1000} s`,
    baseline: `limit ${limit} s; ${k.atOnce} closed within 0.2 s (refused or made room), ${k.got408} got a 408, ${k.stillOpen} still open at the end, ${k.failed} reset before their connect completed (${
      Object.entries(k.errors)
        .map(([e, n]) => `${e} ${n}`)
        .join(', ') || 'none'
    })`,
  };
}

async function attack(opts: HostileOptions, onEvent: (event: string) => void): Promise<HostileSummary> {
  const niceness = envNiceness();
  const argv = [process.execPath, '--import', 'tsx', join(import.meta.dirname, 'hostile-peers.ts'), JSON.stringify(opts)];
  const [program, ...args] = niceness > 0 ? ['nice', '-n', String(niceness), ...argv] : argv;
  const child = spawn(program!, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  let done: HostileSummary | null = null;
  for await (const line of createInterface({ input: child.stdout })) {
    const msg = JSON.parse(line) as { event: string };
    onEvent(msg.event);
    if (msg.event === 'done') done = msg as HostileSummary;
  }
  if (!done) throw new Error('the hostile peers ended without their summary');
  return done;
}

/** The hostile process's niceness: `TETHER_BENCH_HOSTILE_NICE` (0 for none), 19 by default. */
function envNiceness(): number {
  const raw = process.env.TETHER_BENCH_HOSTILE_NICE;
  if (raw === undefined || raw === '') return 19;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > 19) throw new Error(`TETHER_BENCH_HOSTILE_NICE must be an integer from 0 to 19, not "${raw}"`);
  return n;
}

/** The phone's own event loop, sampled as the daemon's probe samples the daemon's. */

/** Rounds one a `gapMs`; with `bd`, each with what the daemon's probe saw during it. */
async function rounds(phone: Phone, n: number, gapMs: number, until?: () => boolean, bd?: BenchDaemon): Promise<Round[]> {
  const out: Round[] = [];
  for (let i = 0; i < n && (until === undefined || !until()); i++) {
    if (bd) await readProbe(bd);
    const round = await phone.round();
    if (bd) {
      const seen = await readProbe(bd);
      round.loopMax = seen.loop.max;
      round.gcMax = seen.gc.maxMs;
    }
    out.push(round);
    await sleep(gapMs);
  }
  return out;
}

/**
 * The daemon during the phone's slowest rounds: its longest event-loop delay and collection in
 * each of the two slowest connects and resumes, against the longest of any quiet round. A round
 * slow while the daemon's loop was not held was slow outside it (the host, the phone's side).
 */
function slowRoundsRow(quiet: Round[], flood: Round[]): Row {
  const worst = (rs: Round[], key: 'connect' | 'resume') => [...rs].sort((a, b) => b[key] - a[key]).slice(0, 2);
  const said = (r: Round, key: 'connect' | 'resume') =>
    `${ms(r[key])} (daemon loop ${ms(r.loopMax ?? 0)}, gc ${ms(r.gcMax ?? 0)}; phone loop ${ms(r.phoneLoopMax)})`;
  const quietLoop = Math.max(0, ...quiet.map((r) => r.loopMax ?? 0));
  return {
    name: "hostile: the daemon in the flood's slowest rounds (its probe)",
    value: `connect ${worst(flood, 'connect')
      .map((r) => said(r, 'connect'))
      .join(', ')}; resume ${worst(flood, 'resume')
      .map((r) => said(r, 'resume'))
      .join(', ')}`,
    ratio: '-',
    target: '-',
    baseline: `longest loop delay in any quiet round ${ms(quietLoop)}, in any flood round ${ms(Math.max(0, ...flood.map((r) => r.loopMax ?? 0)))}; longest collection quiet ${ms(Math.max(0, ...quiet.map((r) => r.gcMax ?? 0)))}, flood ${ms(Math.max(0, ...flood.map((r) => r.gcMax ?? 0)))}`,
  };
}

export async function runHostileBench(): Promise<Row[]> {
  const total = envNumber('TETHER_BENCH_HOSTILE', 5000);
  const n = envNumber('TETHER_BENCH_HOSTILE_ROUNDS', 15);
  const work = mkdtempSync(join(tmpdir(), 'tether-hostile-'));
  const probe = ['--import', compileProbe(work)];
  return withBenchDaemon(
    SESSION,
    async (bd: BenchDaemon) => {
      const run = JSON.parse(readFileSync(join(bd.dataDir, 'run', 'daemon.json'), 'utf8')) as { port: number; fingerprint: string };
      const tls = await pinnedTlsOptions('127.0.0.1', run.port, run.fingerprint);
      await startEchoPane(bd, `=${SESSION}:`);
      const phone = new Phone(`https://127.0.0.1:${run.port}`, bd.token, tls);
      try {
        await rounds(phone, 3, 100); // warm-up: the JIT, the TLS ticket
        const quiet = await rounds(phone, n, GAP_MS, undefined, bd);
        const watch = new DaemonWatch(bd.pid);
        const cpu0 = procUsage(bd.pid).cpuSeconds;
        const overflows0 = listenOverflows();
        let ramped!: () => void;
        const rampedP = new Promise<void>((r) => (ramped = r));
        let opened = false;
        const addresses = Array.from({ length: 8 }, (_, i) => `127.0.0.${i + 2}`);
        const attacked = attack({ port: run.port, addresses, heavyShare: 0.4, total, perSecond: 200 }, (event) => {
          if (event === 'ramped') ramped();
          if (event === 'opened') opened = true;
        });
        await Promise.race([rampedP, attacked]);
        // One round a second while the hostile connections keep coming.
        const flood = await rounds(phone, n, GAP_MS, () => opened, bd);
        const summary = await attacked;
        process.stderr.write(
          `[hostile: flood rounds, connect ms (daemon loop max / phone loop max): ${flood
            .map((r) => `${r.connect.toFixed(1)} (${(r.loopMax ?? 0).toFixed(1)}/${r.phoneLoopMax.toFixed(1)})`)
            .join(', ')}]\n`,
        );
        const floodCpu = procUsage(bd.pid).cpuSeconds - cpu0;
        const overflows = listenOverflows() - overflows0;
        // The log line of the last closes comes within a report interval of them.
        await sleep(REPORT_EVERY_MS + 2 * PEER_LIMITS.checkIntervalMs);
        watch.sample();
        watch.stop();
        const said = limitsLog(bd.dataDir);
        // The quiet baseline again, now that every hostile connection is gone: before and after
        // together, so a machine that got busier or quieter meanwhile shows in the baseline too.
        quiet.push(...(await rounds(phone, n, GAP_MS, undefined, bd)));
        const rows = [...phoneRows(quiet, flood), slowRoundsRow(quiet, flood), ...HOSTILE_KINDS.map((k) => kindRow(k, summary.kinds[k]))];
        rows.push({
          name: `hostile: daemon RSS before / peak / after (${total} hostile)`,
          value: `${watch.rss[0]!.toFixed(0)} / ${Math.max(...watch.rss).toFixed(0)} / ${watch.rss.at(-1)!.toFixed(0)} MB`,
          ratio: ratio(Math.max(...watch.rss), watch.rss[0]!),
          target: '-',
          baseline: `descriptors ${watch.fds[0]} / ${Math.max(...watch.fds)} / ${watch.fds.at(-1)}; daemon CPU ${floodCpu.toFixed(1)} s during the flood, the peers' ${summary.cpuSeconds.toFixed(1)} s; opened over ${s1(summary.openingSeconds)}; listen queue overflows ${overflows}`,
        });
        rows.push({
          name: "hostile: what the daemon's limits did (its log)",
          value: `refused ${said.refused ?? 0}, made room ${said.evicted ?? 0}`,
          ratio: '-',
          target: '-',
          baseline: `longest life of an unauthenticated connection, accept to close: ${((said.longestMs ?? 0) / 1000).toFixed(1)} s (bound ${PEER_LIMITS.unauthenticatedMs / 1000} s); closed at that bound: ${said.expired ?? 0}, the rest by node's handshake and headers bounds`,
        });
        return rows;
      } finally {
        phone.close();
      }
    },
    '',
    true,
    [...DAEMON_NODE_ARGS, ...probe],
  ).finally(() => rmSync(work, { recursive: true, force: true }));
}
