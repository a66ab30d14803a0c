/**
 * Flood: a file of printable lines with SGR codes (100 MB, `TETHER_BENCH_FLOOD_MB`) `cat`ed in
 * a 120x40 pane, timed from the keystroke that starts it until a marker printed after it
 * reaches the client. Tether (a WebSocket stream client, permessage-deflate offered as the
 * reference client does) against a bare `tmux -C` reader of an identical pane on the same tmux
 * server, runs alternating, `TETHER_BENCH_FLOOD_RUNS` (3) of each; medians.
 */
import { floodFile } from './tmux-baseline.js';
import { withBenchDaemon, type BenchDaemon } from './harness.js';
import { envNumber, median, ratio, sleep, type Row } from './figures.js';
import { childPids, cpuOf, procUsage } from './procs.js';
import { MarkerScan, streamWithBase } from './raw-stream.js';
import { BareControlReader, baselineSession } from './bare-tmux.js';

interface FloodRun {
  readonly seconds: number;
  /** CPU seconds: the daemon (node plus its tmux control client), node alone, the tmux server, this process (the measuring client). */
  readonly daemonCpu: number;
  readonly nodeCpu: number;
  readonly tmuxCpu: number;
  readonly benchCpu: number;
}

async function timed(bd: BenchDaemon, target: string, line: string, arrived: Promise<void>): Promise<FloodRun> {
  const tmuxPid = await bd.tmux.serverPid();
  const daemonPids = [bd.pid, ...childPidsSafe(bd.pid)];
  const cpu0 = cpuOf(daemonPids);
  const node0 = cpuOf([bd.pid]);
  const tmux0 = procUsage(tmuxPid).cpuSeconds;
  const bench0 = process.cpuUsage();
  const start = performance.now();
  await bd.typeLine(target, line);
  await arrived;
  const seconds = (performance.now() - start) / 1000;
  const bench = process.cpuUsage(bench0);
  return {
    seconds,
    daemonCpu: cpuOf(daemonPids) - cpu0,
    nodeCpu: cpuOf([bd.pid]) - node0,
    tmuxCpu: procUsage(tmuxPid).cpuSeconds - tmux0,
    benchCpu: (bench.user + bench.system) / 1e6,
  };
}

function childPidsSafe(pid: number): number[] {
  try {
    return childPids(pid);
  } catch {
    return [];
  }
}

export interface FloodResult {
  readonly rows: Row[];
  readonly mb: number;
  readonly tether: number[];
  readonly bare: number[];
}

export async function runFloodBench(): Promise<FloodResult> {
  const mb = envNumber('TETHER_BENCH_FLOOD_MB', 100);
  const runs = envNumber('TETHER_BENCH_FLOOD_RUNS', 3);
  return withBenchDaemon('flood', async (bd) => {
    await baselineSession(bd.tmux, 'flood-base');
    const file = floodFile(bd.tmux.dir, mb, 'flood-file-end');
    // TETHER_BENCH_FLOOD_DEFLATE=0: a client that does not offer permessage-deflate.
    const client = await streamWithBase(bd, 'flood', process.env.TETHER_BENCH_FLOOD_DEFLATE !== '0');
    const reader = new BareControlReader(bd.tmux, 'flood-base');
    await sleep(500);
    const tether: FloodRun[] = [];
    const bare: FloodRun[] = [];
    let resyncs = 0;
    /** Stream bytes the flood runs moved the position by, and the bytes that reached the client in chunk frames. */
    let streamed = 0;
    let carried = 0;
    try {
      for (let r = 0; r < runs * 2; r++) {
        // Alternate, and swap who goes first every round.
        const tetherTurn = r % 4 === 0 || r % 4 === 3;
        const marker = `FLOODEND-${r}`;
        const line = `cat ${file}; printf '%s-%s\\n' FLOODEND ${r}`;
        const scan = new MarkerScan(marker);
        if (tetherTurn) {
          const snapshotsBefore = client.snapshots;
          const seqBefore = client.lastSeq ?? 0;
          const bytesBefore = client.dataBytes;
          const arrived = new Promise<void>((resolve) => {
            client.onData = (bytes) => scan.feed(bytes) && resolve();
            client.onSnapshot = (bytes) => scan.feed(bytes) && resolve();
          });
          tether.push(await timed(bd, '=flood:', line, arrived));
          resyncs += client.snapshots - snapshotsBefore;
          streamed += (client.lastSeq ?? 0) - seqBefore;
          carried += client.dataBytes - bytesBefore;
          client.onData = null;
          client.onSnapshot = null;
        } else {
          const arrived = new Promise<void>((resolve) => {
            reader.onData = (bytes) => scan.feed(bytes) && resolve();
          });
          bare.push(await timed(bd, '=flood-base:', line, arrived));
          reader.onData = null;
        }
        await sleep(500);
      }
    } finally {
      await reader.close();
      await client.close();
    }
    const rate = (xs: FloodRun[]) => xs.map((x) => mb / x.seconds);
    const t = median(rate(tether));
    const b = median(rate(bare));
    const perPair = tether.map((x, i) => bare[i]!.seconds / x.seconds);
    const cpuPct = (xs: FloodRun[], pick: (x: FloodRun) => number) => median(xs.map((x) => (100 * pick(x)) / x.seconds));
    // A resync moves the position past bytes the client never got: carried < streamed.
    const carriedPct = streamed > 0 ? `${((100 * carried) / streamed).toFixed(carried === streamed ? 0 : 2)}%` : 'n/a';
    const rows: Row[] = [
      {
        name: `flood ${mb} MB, 120x40 pane (MB/s, median of ${runs})`,
        value: `${t.toFixed(1)} MB/s`,
        baseline: `${b.toFixed(1)} MB/s bare tmux -C reader, same tmux (runs ${rate(bare)
          .map((x) => x.toFixed(1))
          .join(', ')}; tether ${rate(tether)
          .map((x) => x.toFixed(1))
          .join(
            ', ',
          )}; pair ratios ${perPair.map((x) => x.toFixed(2)).join(', ')}; ${resyncs} snapshot resyncs; ${carriedPct} of the stream's bytes carried)`,
        ratio: ratio(t, b),
        target: '>= 0.95x, every byte carried',
      },
      {
        name: 'flood: daemon CPU (node + its tmux -C)',
        value: `${cpuPct(tether, (x) => x.daemonCpu).toFixed(0)}% core`,
        baseline: `node alone ${cpuPct(tether, (x) => x.nodeCpu).toFixed(0)}%; tmux server ${cpuPct(tether, (x) => x.tmuxCpu).toFixed(0)}% core in the tether runs, ${cpuPct(bare, (x) => x.tmuxCpu).toFixed(0)}% in the bare runs; measuring client ${cpuPct(tether, (x) => x.benchCpu).toFixed(0)}% / bare reader's reader ${cpuPct(bare, (x) => x.benchCpu).toFixed(0)}%`,
        ratio: ratio(median(tether.map((x) => x.daemonCpu)), median(tether.map((x) => x.tmuxCpu))),
        target: '-',
      },
    ];
    return { rows, mb, tether: rate(tether), bare: rate(bare) };
  });
}
