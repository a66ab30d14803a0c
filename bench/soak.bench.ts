/**
 * The daemon's memory under a long flood and a long soak. Both were tests once; what they
 * measure is a quantity, so it is measured here, against a baseline of the same run, and the
 * suite keeps what they check at a size that checks it (test/e2e/stream-backpressure.test.ts:
 * a client that stops reading is dropped to `behind`, sent nothing meanwhile and resynced;
 * test/chaos/load.test.ts: resumed clients end equal to their twin and to tmux).
 *
 * - paused: 200 MB (`TETHER_BENCH_PAUSED_MB`) of random base64 lines through a pane whose one
 *   stream client stopped reading. Value: how much the daemon's resident memory grew at its
 *   peak. Baseline: the same flood on a fresh daemon whose client reads. Target: under 100 MB
 *   (the ring, the 16 MiB high watermark and the socket buffers are all a client may hold),
 *   and the paused client resynced with a snapshot once it reads again.
 * - soak: sessions (10 per core, at most 50; `TETHER_BENCH_SOAK_SESSIONS`) with two clients
 *   each, every pane printing a coloured line every 200 ms for `TETHER_BENCH_SOAK_S` (60) s,
 *   one client of each pair dropping and resuming at random, some typing. The daemon's
 *   resident memory every 500 ms. Value: the peak of the last third of the run above the peak
 *   of the middle third (after warm-up). Target: under 40 MB, flat.
 */
import { availableParallelism } from 'node:os';
import { withBenchDaemon, type BenchDaemon } from './harness.js';
import { envNumber, sleep, waitFor, type Row } from './figures.js';
import { procUsage } from './procs.js';
import { MarkerScan, RawStream, streamWithBase } from './raw-stream.js';

const rssMb = (pid: number): number => procUsage(pid).rssMb;

/** Samples `pid`'s resident memory every `everyMs` until stopped; the samples so far. */
function sampler(pid: number, everyMs: number): { samples: number[]; stop: () => void } {
  const samples = [rssMb(pid)];
  const timer = setInterval(() => samples.push(rssMb(pid)), everyMs);
  return { samples, stop: () => clearInterval(timer) };
}

/** One flood through `session` with a client that reads or one that stopped; the peak growth and whether the client resynced. */
async function floodThrough(
  bd: BenchDaemon,
  session: string,
  mb: number,
  paused: boolean,
): Promise<{ growthMb: number; resynced: boolean }> {
  await bd.createSession(session);
  const client = await streamWithBase(bd, session);
  const raw = (client.ws as unknown as { _socket: { pause(): void; resume(): void } })._socket;
  await sleep(1000);
  const rss = sampler(bd.pid, 200);
  const marker = `FLOOD-${paused ? 'PAUSED' : 'READ'}-END`;
  const scan = new MarkerScan(marker);
  const arrived = new Promise<void>((resolve) => {
    client.onData = (bytes) => scan.feed(bytes) && resolve();
  });
  if (paused) raw.pause();
  const snapshotsBefore = client.snapshots;
  try {
    await bd.typeLine(
      `=${session}:`,
      `head -c ${Math.round((mb * 1e6 * 3) / 4)} /dev/urandom | base64 -w 100; printf '%s-%s\\n' FLOOD-${paused ? 'PAUSED' : 'READ'} END`,
    );
    if (paused)
      await waitFor(
        'the flood to end in tmux',
        async () => (await bd.tmux.tmux('capture-pane', '-p', '-t', `=${session}:`)).includes(marker),
        600_000,
        250,
      );
    else await arrived;
  } finally {
    rss.stop();
  }
  const growthMb = Math.max(...rss.samples) - rss.samples[0]!;
  let resynced = false;
  if (paused) {
    raw.resume();
    resynced = await waitFor('the paused client resynced', () => client.snapshots > snapshotsBefore, 60_000, 50).then(
      () => true,
      () => false,
    );
  }
  await client.close();
  return { growthMb, resynced };
}

export async function runPausedBench(): Promise<Row[]> {
  const mb = envNumber('TETHER_BENCH_PAUSED_MB', 200);
  // A paused reader answers no pings: the ping interval is long enough not to close it.
  const toml = '[stream]\nping_interval_s = 3600\n';
  const reading = await withBenchDaemon('idle', (bd) => floodThrough(bd, 'reads', mb, false), toml);
  const paused = await withBenchDaemon('idle', (bd) => floodThrough(bd, 'paused', mb, true), toml);
  return [
    {
      name: `paused reader: daemon memory growth through a ${mb} MB flood`,
      value: `${paused.growthMb.toFixed(0)} MB`,
      baseline: `${reading.growthMb.toFixed(0)} MB with a client that reads (a fresh daemon, same flood); resynced with a snapshot after: ${paused.resynced ? 'yes' : 'NO'}`,
      ratio: `${(paused.growthMb / Math.max(1, reading.growthMb)).toFixed(2)}x`,
      target: '< 100 MB',
    },
  ];
}

/** A deterministic random source (the runs replay). */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32;
}

export async function runSoakBench(): Promise<Row[]> {
  const sessions = envNumber('TETHER_BENCH_SOAK_SESSIONS', Math.min(50, 10 * availableParallelism()));
  const seconds = envNumber('TETHER_BENCH_SOAK_S', 60);
  const rand = rng(7);
  return withBenchDaemon('soak-0', async (bd) => {
    const ids = Array.from({ length: sessions }, (_, i) => `soak-${i}`);
    for (const id of ids.slice(1)) await bd.createSession(id);
    const pairs = new Map<string, { steady: RawStream; flaky: RawStream }>();
    for (const id of ids) pairs.set(id, { steady: await streamWithBase(bd, id), flaky: await streamWithBase(bd, id) });
    const lines = Math.round(seconds * 5);
    const loop = `i=0; while [ $i -lt ${lines} ]; do i=$((i+1)); printf '\\033[3%dm%s line %d\\033[0m\\n' $((i%8)) soak $i; sleep 0.2; done`;
    for (const id of ids) await bd.typeLine(`=${id}:`, loop);
    const samples: number[] = [];
    const reconnects: Promise<void>[] = [];
    const away = new Set<string>();
    let drops = 0;
    const deadline = Date.now() + seconds * 1000;
    for (let round = 0; Date.now() < deadline; round++) {
      await sleep(500);
      samples.push(rssMb(bd.pid));
      for (const [id, p] of pairs) {
        if (rand() < 0.08 && !away.has(id)) {
          drops++;
          away.add(id);
          const awayMs = 50 + rand() * 2000;
          reconnects.push(
            p.flaky.close().then(async () => {
              await sleep(awayMs);
              p.flaky = new RawStream(bd, id, p.flaky.lastSeq);
              await p.flaky.opened;
              away.delete(id);
            }),
          );
        }
        if (round % 10 === 0 && rand() < 0.2 && p.flaky.ws.readyState === p.flaky.ws.OPEN)
          p.flaky.send({ type: 'keys', data: `echo typed-${round}\r` });
      }
    }
    await Promise.all(reconnects);
    for (const p of pairs.values()) await Promise.all([p.steady.close(), p.flaky.close()]);
    const third = Math.floor(samples.length / 3);
    const middle = Math.max(...samples.slice(third, 2 * third));
    const last = Math.max(...samples.slice(2 * third));
    return [
      {
        name: `soak: ${sessions} sessions x 2 clients, ${seconds} s, memory of the last third over the middle`,
        value: `${(last - middle).toFixed(1)} MB`,
        baseline: `peak ${middle.toFixed(0)} MB in the middle third, ${last.toFixed(0)} MB in the last; ${drops} drops and resumes`,
        ratio: `${(last / middle).toFixed(2)}x`,
        target: '< 40 MB',
      },
    ];
  });
}
