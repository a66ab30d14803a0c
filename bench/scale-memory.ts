/**
 * The scale bench's memory rows and its warm-snapshot row.
 *
 * Memory: the daemon started exactly as a user starts it (`tether serve`, no node flags), by a
 * daemon of its own with the user's defaults (TLS on, its certificate made at this first start),
 * against an empty node process measured in the same run. The target (65 MB at 10 idle
 * sessions) is checked twice: with the sessions made and no client yet, and with a client on
 * each. Idle means nothing asked of the daemon for SETTLE_SECONDS: V8 collects the garbage of a
 * burst of work only once the process has gone quiet (its memory reducer starts 8 s after the
 * last full collection), so a reading taken sooner measures the burst, not the idle daemon;
 * that reading is reported too.
 *
 * Warm snapshots: one busy agent whose pane holds a full history, and what its warm captures
 * cost tmux (at most one per 5 s).
 */
import { spawn } from 'node:child_process';
import { withBenchDaemon, type BenchDaemon } from './harness.js';
import { sleep, waitFor, type Row, ratio } from './figures.js';
import { procUsage, childPids, cpuOf } from './procs.js';
import { RawStream } from './raw-stream.js';

/** The resident size of a node process that does nothing: the floor of any node daemon. */
export async function emptyNodeRssMb(): Promise<number> {
  const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)'], { stdio: 'ignore' });
  try {
    await sleep(1500);
    return procUsage(child.pid!).rssMb;
  } finally {
    child.kill('SIGKILL');
  }
}

/** Resident size at 10 idle sessions, with and without clients (as `tether serve` runs). */
const RSS_TARGET_MB = 65;
/** How long the daemon is left alone before an idle reading. */
const SETTLE_SECONDS = 15;

interface HealthSnapshots {
  readonly warmCaptures: number;
  readonly warmBytes: number;
}

async function snapshotCounts(bd: BenchDaemon): Promise<HealthSnapshots> {
  return (JSON.parse((await bd.request('GET', '/health')).text) as { snapshots: HealthSnapshots }).snapshots;
}

/**
 * The memory rows: a daemon with the user's defaults (TLS, the certificate made at its first
 * start), 10 sessions, read when idle before any client and again with a client on each (and
 * after a `GET /health`, as the ops page and a phone's status read make).
 */
export async function memoryRows(emptyNode: number): Promise<Row[]> {
  return withBenchDaemon(
    'scale-0',
    async (bd) => {
      const clients: RawStream[] = [];
      try {
        for (let i = 1; i < 10; i++) await bd.createSession(`scale-${i}`);
        await sleep(2000);
        const busyNoClient = procUsage(bd.pid).rssMb;
        await sleep((SETTLE_SECONDS - 2) * 1000);
        const noClient = procUsage(bd.pid).rssMb;
        for (let i = 0; i < 10; i++) clients.push(new RawStream(bd, `scale-${i}`, null, true));
        await waitFor('10 bases', () => clients.every((c) => c.snapshots > 0), 60_000, 100);
        await snapshotCounts(bd);
        await sleep(2000);
        const busyClients = procUsage(bd.pid).rssMb;
        await sleep((SETTLE_SECONDS - 2) * 1000);
        const withClients = procUsage(bd.pid).rssMb;
        const row = (name: string, rss: number, busy: number): Row => ({
          name,
          value: `${rss.toFixed(1)} MB`,
          baseline: `empty node process ${emptyNode.toFixed(0)} MB (tether's own: ${(rss - emptyNode).toFixed(0)} MB); 2 s after the work, before V8 collected it: ${busy.toFixed(1)} MB`,
          ratio: ratio(rss, emptyNode),
          target: `< ${RSS_TARGET_MB} MB${rss < RSS_TARGET_MB ? '' : ': missed'}`,
        });
        return [
          row('10 idle sessions, no client yet: daemon RSS (`tether serve`, defaults: TLS on)', noClient, busyNoClient),
          row('10 idle sessions, a client on each (deflate offered): daemon RSS (defaults: TLS on)', withClients, busyClients),
        ];
      } finally {
        for (const c of clients) await c.close();
      }
    },
    '',
    true,
    [],
  );
}

/**
 * An agent at work: a burst of output (a tool's result, a diff), then a pause while it thinks,
 * long enough for the pane to count as quiet, so warm captures are taken (at most one per 5 s).
 */
const AGENT = `i=0; while :; do i=$((i+1)); j=0; while [ $j -lt 40 ]; do j=$((j+1)); printf '\\033[3%dm● step %d.%d\\033[0m a line of a tool result in src/module-%d.ts\\n' $((j%7+1)) $i $j $j; done; sleep 1.5; done`;
/** Fills a pane's history to its 10000-line limit, as a long agent session has. */
const HISTORY = `i=0; while [ $i -lt 10500 ]; do i=$((i+1)); printf '\\033[3%dmhistory line %d of a long session, with some colour\\033[0m\\n' $((i%7+1)) $i; done`;

/** One busy agent whose pane holds a full history, beside the daemon's other sessions: its warm captures. */
export async function warmSnapshotRow(bd: BenchDaemon, seconds = 20): Promise<Row> {
  await bd.createSession('scale-agent');
  const client = new RawStream(bd, 'scale-agent', null, true);
  try {
    await waitFor('the agent base', () => client.snapshots > 0, 60_000, 100);
    await bd.typeLine('=scale-agent:', HISTORY);
    await waitFor(
      'a full history',
      async () => Number((await bd.tmux.tmux('display-message', '-p', '-t', '=scale-agent:', '#{history_size}')).trim()) >= 9000,
      60_000,
      200,
    );
    // The other sessions went quiet just before: each takes its one warm capture first, which
    // the window must not count.
    let last = -1;
    await waitFor(
      'the quiet sessions to have taken their warm captures',
      async () => {
        const now = (await snapshotCounts(bd)).warmCaptures;
        const settled = now === last;
        last = now;
        return settled;
      },
      120_000,
      3000,
    );
    await bd.typeLine('=scale-agent:', AGENT);
    await sleep(2000);
    const tmuxPid = await bd.tmux.serverPid();
    const all = [bd.pid, ...childPids(bd.pid)];
    const w0 = await snapshotCounts(bd);
    const d0 = cpuOf(all);
    const t0 = procUsage(tmuxPid).cpuSeconds;
    const start = performance.now();
    await sleep(seconds * 1000);
    const wall = (performance.now() - start) / 1000;
    const w1 = await snapshotCounts(bd);
    const captures = w1.warmCaptures - w0.warmCaptures;
    await bd.tmux.tmux('send-keys', '-t', '=scale-agent:', 'C-c');
    return {
      name: `warm snapshots, 1 busy agent (10000-line history; 40-line bursts, 1.5 s pauses), ${seconds} s`,
      value: `${captures} captures (${((60 * captures) / seconds).toFixed(0)}/min)`,
      baseline: `tmux server ${((100 * (procUsage(tmuxPid).cpuSeconds - t0)) / wall).toFixed(1)}% core, daemon ${((100 * (cpuOf(all) - d0)) / wall).toFixed(1)}% (every session above still there, quiet); warm captures hold ${(w1.warmBytes / 1024).toFixed(0)} KiB; RSS ${procUsage(bd.pid).rssMb.toFixed(0)} MB`,
      ratio: '-',
      target: '<= 12/min',
    };
  } finally {
    await client.close();
  }
}
