/**
 * Scale: 10 and then 50 sessions, each with one stream client (permessage-deflate offered) and
 * modest output (a short coloured line every 200 ms), then the same with nothing happening.
 * Daemon CPU (node and its tmux control clients) and RSS from /proc; the baseline is the tmux
 * server's CPU over the same window (the work tmux itself does for the same output).
 * `TETHER_BENCH_SCALE` ("10,50") and `TETHER_BENCH_SCALE_SECONDS` (10) change it.
 */
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
  readonly daemonPct: number;
  readonly nodePct: number;
  readonly tmuxPct: number;
  readonly rssMb: number;
  readonly controlRssMb: number;
}

const rssOf = (pids: readonly number[]): number => sumOfProcs(pids, 'rssMb');

async function measure(bd: BenchDaemon, seconds: number): Promise<Window> {
  const tmuxPid = await bd.tmux.serverPid();
  const children = childPids(bd.pid);
  const all = [bd.pid, ...children];
  const d0 = cpuOf(all);
  const n0 = cpuOf([bd.pid]);
  const t0 = procUsage(tmuxPid).cpuSeconds;
  const start = performance.now();
  await sleep(seconds * 1000);
  const wall = (performance.now() - start) / 1000;
  return {
    daemonPct: (100 * (cpuOf(all) - d0)) / wall,
    nodePct: (100 * (cpuOf([bd.pid]) - n0)) / wall,
    tmuxPct: (100 * (procUsage(tmuxPid).cpuSeconds - t0)) / wall,
    rssMb: procUsage(bd.pid).rssMb,
    controlRssMb: rssOf(children),
  };
}

const LOOP = `i=0; while :; do i=$((i+1)); printf '\\033[3%dm● step %d\\033[0m working on src/module-%d.ts, a line of modest output\\n' $((i%7+1)) $i $i; sleep 0.2; done`;

export async function runScaleBench(): Promise<Row[]> {
  const counts = (process.env.TETHER_BENCH_SCALE ?? '10,50')
    .split(',')
    .map(Number)
    .filter((n) => n > 0);
  const seconds = envNumber('TETHER_BENCH_SCALE_SECONDS', 10);
  return withBenchDaemon('scale-0', async (bd) => {
    const rows: Row[] = [];
    const clients: RawStream[] = [];
    let sessions = 1;
    await sleep(2000);
    const atStart = procUsage(bd.pid).rssMb;
    try {
      for (const count of counts) {
        for (; sessions < count; sessions++) await bd.createSession(`scale-${sessions}`);
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
            name: `scale ${count} sessions idle: daemon CPU / RSS`,
            value: `${idle.daemonPct.toFixed(1)}% / ${idle.rssMb.toFixed(0)} MB`,
            baseline: `tmux server ${idle.tmuxPct.toFixed(1)}% core; node alone ${idle.nodePct.toFixed(1)}%; RSS at start (1 session, no client) ${atStart.toFixed(0)} MB; ${count} tmux -C clients ${idle.controlRssMb.toFixed(0)} MB RSS`,
            ratio: idle.tmuxPct > 0 ? ratio(idle.daemonPct, idle.tmuxPct) : '-',
            target: count <= 10 ? '~0%, < 100 MB' : '-',
          },
          {
            name: `scale ${count} sessions, 5 lines/s each: daemon CPU / RSS`,
            value: `${busy.daemonPct.toFixed(1)}% / ${busy.rssMb.toFixed(0)} MB`,
            baseline: `tmux server ${busy.tmuxPct.toFixed(1)}% core; node alone ${busy.nodePct.toFixed(1)}%; ${(received / 1024).toFixed(0)} KiB delivered so far`,
            ratio: ratio(busy.daemonPct, busy.tmuxPct),
            target: count <= 10 ? '< 100 MB' : '-',
          },
        );
        await sleep(1000);
      }
    } finally {
      for (const c of clients) await c.close();
    }
    return rows;
  });
}
