/**
 * The scale bench's figures as the report's rows and as the markdown table docs/benchmarks.md
 * shows ("Scale"): one column per session count, each figure beside its same-run baseline.
 */
import type { ProbeReading } from './daemon-probe.js';
import { median, ms, percentile, ratio, type Row } from './figures.js';
import type { ClientsStats } from './scale-clients.js';

export interface CpuShare {
  /** node, its live `tmux -C` clients and the tmux processes it ran, % of one core. */
  readonly daemonPct: number;
  readonly nodePct: number;
  readonly tmuxServerPct: number;
  /** The bench's live clients' process. */
  readonly clientsPct: number;
}

export interface Memory {
  readonly rssMb: number;
  readonly anonMb: number;
  readonly fileMb: number;
  readonly heapUsedMb: number;
  /** Memory outside V8's heap that node tracks (buffers, zlib): `external`. */
  readonly externalMb: number;
  /** V8's young generation (its new spaces, committed): sized by the allocation rate, not by what is live. */
  readonly youngMb: number;
  /** The daemon's `tmux -C` clients together: resident, and their proportional share (PSS: shared pages split). */
  readonly controlRssMb: number;
  readonly controlPssMb: number;
}

type Loop = ProbeReading['loop'];
type Gc = ProbeReading['gc'];

/** One session count's figures. */
export interface Step {
  /** Busy sessions (the idle one beside them not counted). */
  readonly count: number;
  /** ms per `POST /sessions` of the sessions made for this count. */
  readonly create: readonly number[];
  /** Memory before this count's sessions were made (the previous count's, with its clients). */
  readonly previous: Memory;
  readonly previousCount: number;
  /** Memory with this count's sessions made, before their clients. */
  readonly sessionsOnly: Memory;
  readonly withClients: Memory;
  readonly underLoad: Memory;
  /** Every client connected, nothing printing. */
  readonly idleCpu: CpuShare;
  readonly loadCpu: CpuShare;
  /** Echo on the quiet daemon's idle session, the busy one's, and a bare `tmux -C` client's on the busy tmux server. */
  readonly echo: { readonly quiet: readonly number[]; readonly busy: readonly number[]; readonly bare: readonly number[] };
  readonly loadLoop: Loop;
  /** Garbage collection under load, and how long that window was (ms). */
  readonly loadGc: Gc;
  readonly loadMs: number;
  readonly list: readonly number[];
  readonly listLoop: Loop;
  /** tmux processes the daemon ran per `GET /sessions`. */
  readonly listSpawns: number;
  /** ms for every busy session's thumbnail, fetched at once, per round. */
  readonly thumbnails: readonly number[];
  readonly thumbLoop: Loop;
  /** tmux processes the daemon ran per thumbnail. */
  readonly thumbSpawns: number;
  readonly clients: ClientsStats;
  /** Snapshots beyond the first on the echo client of the idle session. */
  readonly echoResyncs: number;
  /** Warm captures (docs/architecture.md "Warm snapshots") taken in each window. */
  readonly warmCaptures: { readonly load: number; readonly list: number; readonly thumbnails: number };
}

/** The quiet daemon's figures (one idle session, its own tmux server). */
export interface Quiet {
  readonly create: readonly number[];
  readonly list: readonly number[];
  readonly thumbnail: readonly number[];
  /** Its echo, every block of every count together. */
  readonly echo: readonly number[];
}

const LIST_P99_TARGET_MS = 50;
const THUMBNAILS_TARGET_MS = 500;
const ECHO_P99_TARGET_RATIO = 2;

const mb = (v: number): string => `${v.toFixed(1)} MB`;
const pct = (v: number): string => `${v.toFixed(1)}%`;
const worst = (v: readonly number[]): number => percentile(v, 100);
const met = (ok: boolean): string => (ok ? 'met' : '**missed**');
const resyncs = (s: Step): number => s.clients.resyncs + s.echoResyncs;

/** Per session of the sessions a count added: memory `to` minus `from`, divided. */
function perSession(from: Memory, to: Memory, n: number): Memory {
  const d = (k: keyof Memory) => (to[k] - from[k]) / n;
  return {
    rssMb: d('rssMb'),
    anonMb: d('anonMb'),
    fileMb: d('fileMb'),
    heapUsedMb: d('heapUsedMb'),
    externalMb: d('externalMb'),
    youngMb: d('youngMb'),
    controlRssMb: d('controlRssMb'),
    controlPssMb: d('controlPssMb'),
  };
}
const added = (s: Step): number => s.count - s.previousCount;
const sessionCost = (s: Step): Memory => perSession(s.previous, s.sessionsOnly, added(s));
const clientCost = (s: Step): Memory => perSession(s.sessionsOnly, s.withClients, added(s));
const kb = (v: number): string => `${(v * 1024).toFixed(0)} KB`;
const parts = (m: Memory): string =>
  `${kb(m.rssMb)} (anon ${kb(m.anonMb)}, V8 heap ${kb(m.heapUsedMb)}, external ${kb(m.externalMb)}); tmux -C ${kb(m.controlRssMb)} resident, ${kb(m.controlPssMb)} its own (PSS)`;

export function scaleRows(steps: readonly Step[], quiet: Quiet, rate: number): Row[] {
  const rows: Row[] = [];
  const quietListP99 = percentile(quiet.list, 99);
  for (const s of steps) {
    const n = s.count;
    const busyP99 = percentile(s.echo.busy, 99);
    const quietP99 = percentile(s.echo.quiet, 99);
    const listP99 = percentile(s.list, 99);
    rows.push(
      {
        name: `scale ${n} busy (${rate} lines/s) + 1 idle: daemon CPU / per busy session`,
        value: `${pct(s.loadCpu.daemonPct)} / ${pct(s.loadCpu.daemonPct / n)}`,
        baseline: `tmux server ${pct(s.loadCpu.tmuxServerPct)} for the same output; node alone ${pct(s.loadCpu.nodePct)}; idle (clients, no output) ${pct(s.idleCpu.daemonPct)}; the live clients' process ${pct(s.loadCpu.clientsPct)}`,
        ratio: ratio(s.loadCpu.daemonPct, s.loadCpu.tmuxServerPct),
        target: '-',
      },
      {
        name: `scale ${n}: daemon RSS under load; per session; per client`,
        value: `${mb(s.underLoad.rssMb)}; ${kb(sessionCost(s).rssMb)}; ${kb(clientCost(s).rssMb)}`,
        baseline: `per session ${parts(sessionCost(s))}; per client ${parts(clientCost(s))}; tmux -C clients ${mb(s.underLoad.controlRssMb)} resident in all, ${mb(s.underLoad.controlPssMb)} their own (PSS)`,
        ratio: '-',
        target: 'linear',
      },
      {
        name: `scale ${n}: keystroke echo on the idle session p50 / p99 (${s.echo.busy.length} keys)`,
        value: `${ms(median(s.echo.busy))} / ${ms(busyP99)}`,
        baseline: `quiet daemon, alternating blocks: ${ms(median(s.echo.quiet))} / ${ms(quietP99)}; bare tmux -C on the busy tmux server ${ms(median(s.echo.bare))} / ${ms(percentile(s.echo.bare, 99))}`,
        ratio: ratio(busyP99, quietP99),
        target: `p99 <= ${ECHO_P99_TARGET_RATIO}x: ${met(busyP99 <= ECHO_P99_TARGET_RATIO * quietP99)}`,
      },
      {
        name: `scale ${n}: GET /sessions p50 / p99 / max (${s.list.length} requests)`,
        value: `${ms(median(s.list))} / ${ms(listP99)} / ${ms(worst(s.list))}`,
        baseline: `quiet daemon (1 session) p99 ${ms(quietListP99)}; ${s.listSpawns.toFixed(1)} tmux processes a request; event loop p99 ${ms(s.listLoop.p99)}, max ${ms(s.listLoop.max)}`,
        ratio: ratio(listP99, quietListP99),
        target: n >= 100 ? `p99 < ${LIST_P99_TARGET_MS} ms: ${met(listP99 < LIST_P99_TARGET_MS)}` : '-',
      },
      {
        name: `scale ${n}: all ${n} thumbnails at once, median / worst of ${s.thumbnails.length}`,
        value: `${ms(median(s.thumbnails))} / ${ms(worst(s.thumbnails))}`,
        baseline: `quiet daemon, one thumbnail ${ms(median(quiet.thumbnail))}; ${s.thumbSpawns.toFixed(2)} tmux processes a thumbnail; event loop max ${ms(s.thumbLoop.max)}`,
        ratio: ratio(worst(s.thumbnails), median(quiet.thumbnail)),
        target: n >= 100 ? `< ${THUMBNAILS_TARGET_MS} ms: ${met(worst(s.thumbnails) < THUMBNAILS_TARGET_MS)}` : '-',
      },
      {
        name: `scale ${n}: creation per session, median / max (${s.create.length} made)`,
        value: `${ms(median(s.create))} / ${ms(worst(s.create))}`,
        baseline: `quiet daemon ${ms(median(quiet.create))}`,
        ratio: ratio(median(s.create), median(quiet.create)),
        target: '-',
      },
      {
        name: `scale ${n}: resyncs / reconnects of the ${s.clients.clients + 1} live clients`,
        value: `${resyncs(s)} / ${s.clients.reconnects}`,
        baseline: `event loop under load p99 ${ms(s.loadLoop.p99)}, max ${ms(s.loadLoop.max)}; ${(s.clients.dataBytes / 2 ** 20).toFixed(1)} MiB delivered so far`,
        ratio: '-',
        target: `0: ${met(resyncs(s) === 0 && s.clients.reconnects === 0)}`,
      },
    );
  }
  return rows;
}

/** The table for docs/benchmarks.md: one column per count. */
export function scaleMarkdown(steps: readonly Step[], quiet: Quiet, rate: number): string {
  const line = (what: string, cell: (s: Step) => string, target = ''): string => `| ${what} | ${steps.map(cell).join(' | ')} | ${target} |`;
  const out = [
    `| ${rate} lines/s a busy session, a live client on each | ${steps.map((s) => `${s.count} sessions`).join(' | ')} | target |`,
    `| --- | ${steps.map(() => '---').join(' | ')} | --- |`,
    line(
      'daemon CPU (node, its tmux -C clients, the tmux it ran), % of a core',
      (s) => `${pct(s.loadCpu.daemonPct)} (node ${pct(s.loadCpu.nodePct)})`,
    ),
    line('per busy session', (s) => pct(s.loadCpu.daemonPct / s.count)),
    line(
      'tmux server for the same output (baseline)',
      (s) => `${pct(s.loadCpu.tmuxServerPct)} (daemon ${ratio(s.loadCpu.daemonPct, s.loadCpu.tmuxServerPct)})`,
    ),
    line('idle: every client connected, nothing printed', (s) => pct(s.idleCpu.daemonPct)),
    line('daemon RSS under load (node; every RSS here read after a full collection)', (s) => mb(s.underLoad.rssMb)),
    line(
      'RSS per session, no client: node / its tmux -C',
      (s) => `${kb(sessionCost(s).rssMb)} / ${kb(sessionCost(s).controlRssMb)}`,
      'linear',
    ),
    line(
      "of which V8 heap / external / V8's young generation",
      (s) => `${kb(sessionCost(s).heapUsedMb)} / ${kb(sessionCost(s).externalMb)} / ${kb(sessionCost(s).youngMb)}`,
    ),
    line("V8's young generation under load, all sessions (it grows with the allocation rate above 16 sessions)", (s) =>
      mb(s.underLoad.youngMb),
    ),
    line('RSS per client (node)', (s) => `${kb(clientCost(s).rssMb)} (heap ${kb(clientCost(s).heapUsedMb)})`, 'linear'),
    line(
      'echo on the idle session p50 / p99 (quiet daemon, same run)',
      (s) =>
        `${ms(median(s.echo.busy))} / ${ms(percentile(s.echo.busy, 99))} (${ms(median(s.echo.quiet))} / ${ms(percentile(s.echo.quiet, 99))}): **${ratio(percentile(s.echo.busy, 99), percentile(s.echo.quiet, 99))}**`,
      `p99 <= ${ECHO_P99_TARGET_RATIO}x`,
    ),
    line(
      'the same keystroke through a bare tmux -C client of the busy tmux server (its floor)',
      (s) => `${ms(median(s.echo.bare))} / ${ms(percentile(s.echo.bare, 99))}`,
    ),
    line(
      `GET /sessions p50 / p99 / max (quiet daemon: p99 ${ms(percentile(quiet.list, 99))})`,
      (s) => `${ms(median(s.list))} / **${ms(percentile(s.list, 99))}** / ${ms(worst(s.list))}`,
      `p99 < ${LIST_P99_TARGET_MS} ms at 100`,
    ),
    line('tmux processes per list request', (s) => s.listSpawns.toFixed(2)),
    line(
      `every busy session's thumbnail at once, median / worst (one on the quiet daemon: ${ms(median(quiet.thumbnail))})`,
      (s) => `${ms(median(s.thumbnails))} / **${ms(worst(s.thumbnails))}**`,
      `< ${THUMBNAILS_TARGET_MS} ms at 100`,
    ),
    line('tmux processes per thumbnail', (s) => s.thumbSpawns.toFixed(2)),
    line(
      `creation per session, median / max (quiet daemon: ${ms(median(quiet.create))})`,
      (s) => `${ms(median(s.create))} / ${ms(worst(s.create))}`,
    ),
    line(
      'event-loop delay p99 / max: under load; during the list; during thumbnails',
      (s) =>
        `${ms(s.loadLoop.p99)} / ${ms(s.loadLoop.max)}; ${ms(s.listLoop.p99)} / ${ms(s.listLoop.max)}; ${ms(s.thumbLoop.p99)} / ${ms(s.thumbLoop.max)}`,
    ),
    line(
      'garbage collection under load: pauses a second, share of the time, longest; mark-compacts',
      (s) =>
        `${((1000 * s.loadGc.count) / s.loadMs).toFixed(1)}/s, ${pct((100 * s.loadGc.totalMs) / s.loadMs)}, ${ms(s.loadGc.maxMs)}; ${s.loadGc.major} (${ms(s.loadGc.majorMs)} in all)`,
    ),
    line(
      'warm captures taken: under load; during the list; during thumbnails',
      (s) => `${s.warmCaptures.load}; ${s.warmCaptures.list}; ${s.warmCaptures.thumbnails}`,
    ),
    line('resyncs / reconnects (all live clients)', (s) => `**${resyncs(s)}** / ${s.clients.reconnects}`, '0'),
  ];
  return out.join('\n');
}
