/**
 * Scale: 10 and then 50 sessions, each with one stream client (permessage-deflate offered) and
 * modest output (a short coloured line every 200 ms), then the same with nothing happening.
 * Daemon CPU (node and its tmux control clients) and RSS from /proc; the baseline is the tmux
 * server's CPU over the same window (the work tmux itself does for the same output).
 * `TETHER_BENCH_SCALE` ("10,50") and `TETHER_BENCH_SCALE_SECONDS` (10) change it.
 *
 * The daemon starts exactly as a user starts it: `tether serve`, no node flags. Its memory is
 * measured first, by a daemon of its own with the user's defaults (TLS on, its certificate made
 * at this first start), against an empty node process measured in the same run. The target (65 MB
 * at 10 idle sessions) is checked twice: with the sessions made and no client yet, and with a
 * client on each. Idle means nothing asked of the daemon for SETTLE_SECONDS: V8 collects the
 * garbage of a burst of work only once the process has gone quiet (its memory reducer starts
 * 8 s after the last full collection), so a reading taken sooner measures the burst, not the
 * idle daemon; that reading is reported too.
 */
import { spawn } from 'node:child_process';
import {
  childPids,
  cpuOf,
  envNumber,
  procUsage,
  ratio,
  RawStream,
  sleep,
  sumOfProcs,
  waitFor,
  withBenchDaemon,
  type BenchDaemon,
  type Row,
} from './harness.js';

interface Window {
  /** Warm captures taken during the window, and the bytes warm captures held at its end. */
  readonly warmCaptures: number;
  readonly warmBytes: number;
  readonly daemonPct: number;
  readonly nodePct: number;
  readonly tmuxPct: number;
  readonly rssMb: number;
  readonly controlRssMb: number;
}

const rssOf = (pids: readonly number[]): number => sumOfProcs(pids, 'rssMb');

interface HealthSnapshots {
  readonly warmCaptures: number;
  readonly warmBytes: number;
}

async function snapshotCounts(bd: BenchDaemon): Promise<HealthSnapshots> {
  return (JSON.parse((await bd.request('GET', '/health')).text) as { snapshots: HealthSnapshots }).snapshots;
}

async function measure(bd: BenchDaemon, seconds: number): Promise<Window> {
  const tmuxPid = await bd.tmux.serverPid();
  const w0 = await snapshotCounts(bd);
  const children = childPids(bd.pid);
  const all = [bd.pid, ...children];
  const d0 = cpuOf(all);
  const n0 = cpuOf([bd.pid]);
  const t0 = procUsage(tmuxPid).cpuSeconds;
  const start = performance.now();
  await sleep(seconds * 1000);
  const wall = (performance.now() - start) / 1000;
  const w1 = await snapshotCounts(bd);
  return {
    warmCaptures: w1.warmCaptures - w0.warmCaptures,
    warmBytes: w1.warmBytes,
    daemonPct: (100 * (cpuOf(all) - d0)) / wall,
    nodePct: (100 * (cpuOf([bd.pid]) - n0)) / wall,
    tmuxPct: (100 * (procUsage(tmuxPid).cpuSeconds - t0)) / wall,
    rssMb: procUsage(bd.pid).rssMb,
    controlRssMb: rssOf(children),
  };
}

/**
 * An agent at work: a burst of output (a tool's result, a diff), then a pause while it thinks,
 * long enough for the pane to count as quiet, so warm captures are taken (at most one per 5 s).
 */
const AGENT = `i=0; while :; do i=$((i+1)); j=0; while [ $j -lt 40 ]; do j=$((j+1)); printf '\\033[3%dm● step %d.%d\\033[0m a line of a tool result in src/module-%d.ts\\n' $((j%7+1)) $i $j $j; done; sleep 1.5; done`;
/** Fills a pane's history to its 10000-line limit, as a long agent session has. */
const HISTORY = `i=0; while [ $i -lt 10500 ]; do i=$((i+1)); printf '\\033[3%dmhistory line %d of a long session, with some colour\\033[0m\\n' $((i%7+1)) $i; done`;

const LOOP = `i=0; while :; do i=$((i+1)); printf '\\033[3%dm● step %d\\033[0m working on src/module-%d.ts, a line of modest output\\n' $((i%7+1)) $i $i; sleep 0.2; done`;

/** The resident size of a node process that does nothing: the floor of any node daemon. */
async function emptyNodeRssMb(): Promise<number> {
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

/**
 * The memory rows: a daemon with the user's defaults (TLS, the certificate made at its first
 * start), 10 sessions, read when idle before any client and again with a client on each (and
 * after a `GET /health`, as the ops page and a phone's status read make).
 */
async function memoryRows(emptyNode: number): Promise<Row[]> {
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

export async function runScaleBench(): Promise<Row[]> {
  const counts = (process.env.TETHER_BENCH_SCALE ?? '10,50')
    .split(',')
    .map(Number)
    .filter((n) => n > 0);
  const seconds = envNumber('TETHER_BENCH_SCALE_SECONDS', 10);
  const emptyNode = await emptyNodeRssMb();
  const memory = await memoryRows(emptyNode);
  const scale = await withBenchDaemon(
    'scale-0',
    async (bd) => {
      const rows: Row[] = [];
      const clients: RawStream[] = [];
      let sessions = 1;
      await sleep(2000);
      const atStart = procUsage(bd.pid).rssMb;
      try {
        for (const count of counts) {
          for (; sessions < count; sessions++) await bd.createSession(`scale-${sessions}`);
          await sleep(2000);
          for (let i = clients.length; i < count; i++) {
            const c = new RawStream(bd, `scale-${i}`, null, true);
            clients.push(c);
          }
          await waitFor(`${count} bases`, () => clients.every((c) => c.snapshots > 0), 60_000, 100);
          // Idle first: every client connected, nothing printed.
          await sleep(2000);
          const idle = await measure(bd, seconds);
          for (let i = 0; i < count; i++) await bd.typeLine(`=scale-${i}:`, LOOP);
          await sleep(2000);
          const busy = await measure(bd, seconds);
          for (let i = 0; i < count; i++) await bd.tmux.tmux('send-keys', '-t', `=scale-${i}:`, 'C-c');
          const received = clients.reduce((n, c) => n + c.dataBytes, 0);
          rows.push(
            {
              name: `scale ${count} sessions idle, a client on each: daemon CPU / RSS`,
              value: `${idle.daemonPct.toFixed(1)}% / ${idle.rssMb.toFixed(0)} MB`,
              baseline: `empty node process ${emptyNode.toFixed(0)} MB; tmux server ${idle.tmuxPct.toFixed(1)}% core; node alone ${idle.nodePct.toFixed(1)}%; RSS at start (1 session, no client) ${atStart.toFixed(0)} MB; ${count} tmux -C clients ${idle.controlRssMb.toFixed(0)} MB RSS; warm captures in the window ${idle.warmCaptures}, holding ${(idle.warmBytes / 1024).toFixed(0)} KiB`,
              ratio: idle.tmuxPct > 0 ? ratio(idle.daemonPct, idle.tmuxPct) : '-',
              target: count <= 10 ? '~0% (RSS: the memory rows)' : '-',
            },
            {
              name: `scale ${count} sessions, 5 lines/s each: daemon CPU / RSS`,
              value: `${busy.daemonPct.toFixed(1)}% / ${busy.rssMb.toFixed(0)} MB`,
              baseline: `tmux server ${busy.tmuxPct.toFixed(1)}% core; node alone ${busy.nodePct.toFixed(1)}%; ${(received / 1024).toFixed(0)} KiB delivered so far; warm captures ${busy.warmCaptures}`,
              ratio: ratio(busy.daemonPct, busy.tmuxPct),
              target: '-',
            },
          );
          await sleep(1000);
        }
        // One busy agent whose pane holds a full history: what warm captures cost tmux.
        await bd.createSession('scale-agent');
        const agentClient = new RawStream(bd, 'scale-agent', null, true);
        clients.push(agentClient);
        await waitFor('the agent base', () => agentClient.snapshots > 0, 60_000, 100);
        await bd.typeLine('=scale-agent:', HISTORY);
        await waitFor(
          'a full history',
          async () => Number((await bd.tmux.tmux('display-message', '-p', '-t', '=scale-agent:', '#{history_size}')).trim()) >= 9000,
          60_000,
          200,
        );
        await bd.typeLine('=scale-agent:', AGENT);
        await sleep(2000);
        const agentSeconds = Math.max(seconds, 20);
        const agent = await measure(bd, agentSeconds);
        await bd.tmux.tmux('send-keys', '-t', '=scale-agent:', 'C-c');
        rows.push({
          name: `warm snapshots, 1 busy agent (10000-line history; 40-line bursts, 1.5 s pauses), ${agentSeconds} s`,
          value: `${agent.warmCaptures} captures (${((60 * agent.warmCaptures) / agentSeconds).toFixed(0)}/min)`,
          baseline: `tmux server ${agent.tmuxPct.toFixed(1)}% core, daemon ${agent.daemonPct.toFixed(1)}% (all sessions above still running idle); warm captures hold ${(agent.warmBytes / 1024).toFixed(0)} KiB; RSS ${agent.rssMb.toFixed(0)} MB`,
          ratio: '-',
          target: '<= 12/min',
        });
      } finally {
        for (const c of clients) await c.close();
      }
      return rows;
    },
    '',
    undefined,
    [],
  );
  return [...memory, ...scale];
}
