/**
 * Wake to visible screen, on loopback and through a phone's network (bench/shaper.ts): from the
 * moment the client opens its TCP connection (TLS on, the certificate pinned, as a phone does)
 * until its terminal emulator shows the pane's current visible screen, for three wakes:
 *
 * - delta: the client held its screen at a position the ring still has; 40 lines were printed
 *   while it slept;
 * - gap: its position is long gone (a day-old lastSeq) and the pane has 10000 lines of history:
 *   a snapshot, the pane quiet for over a second;
 * - fresh: a new client (no position, no TLS session, an empty terminal).
 *
 * The client is the reference client (`SessionStream`), which offers its TLS session ticket and
 * puts its position in the upgrade URL; the terminal is @xterm/headless. Beside each profile's
 * figures: its floor, computed per wake from the bytes that actually crossed (three round trips
 * for TCP, TLS 1.3 and the upgrade, plus the bytes over the bandwidth each way).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import xtermHeadless from '@xterm/headless';
import { SessionStream } from '../src/reference-client/index.js';
import { pinnedTlsOptions, type PinnedTlsOptions } from '../src/reference-client/pinning.js';
import { withBenchDaemon, type BenchDaemon } from './harness.js';
import { envNumber, ms, percentile, sleep, waitFor, type Row } from './figures.js';
import { floorMs, PROFILES, ShapingProxy, type LinkProfile } from './shaper.js';

const { Terminal } = xtermHeadless;
type Term = InstanceType<typeof Terminal>;

const SESSION = 'wake';
const HISTORY_LINES = 10_100;
/** Round trips before the first byte of the stream: TCP, TLS 1.3 (full or resumed), the upgrade. */
const ROUND_TRIPS = 3;

type Case = 'delta' | 'gap' | 'fresh';
const CASES: readonly Case[] = ['delta', 'gap', 'fresh'];

/** A client: the reference stream client writing into a terminal, able to say when it shows `expected`. */
class PhoneClient {
  readonly stream: SessionStream;
  readonly term: Term = new Terminal({ cols: 120, rows: 40, scrollback: 12_000, allowProposedApi: true });
  private waiter: { expected: string[]; resolve: () => void } | null = null;

  constructor(baseUrl: string, token: string, tls: PinnedTlsOptions) {
    this.stream = new SessionStream({ baseUrl, token, session: SESSION, tls });
    this.stream.on('snapshot', (bytes) => {
      this.term.reset();
      this.term.write(new Uint8Array(bytes), () => this.check());
    });
    this.stream.on('data', (bytes) => this.term.write(new Uint8Array(bytes), () => this.check()));
  }

  private rows(): string[] {
    const buf = this.term.buffer.active;
    const out: string[] = [];
    for (let y = 0; y < 40; y++) out.push((buf.getLine(buf.viewportY + y)?.translateToString(true) ?? '').trimEnd());
    return out;
  }

  private check(): void {
    const w = this.waiter;
    if (!w) return;
    const rows = this.rows();
    if (rows.every((r, i) => r === w.expected[i])) {
      this.waiter = null;
      w.resolve();
    }
  }

  /** Connects and resolves once the terminal shows `expected`: the time from the TCP open. */
  async wake(expected: string[]): Promise<number> {
    const shown = new Promise<void>((resolve) => (this.waiter = { expected, resolve }));
    const start = performance.now();
    this.stream.connect();
    const timeout = sleep(30_000).then(() => {
      const rows = this.rows();
      const diff = rows.flatMap((r, i) =>
        r === expected[i] ? [] : [`row ${i}: shows ${JSON.stringify(r)}, tmux ${JSON.stringify(expected[i])}`],
      );
      throw new Error(`the screen did not show in 30 s:\n${diff.join('\n')}`);
    });
    await Promise.race([shown, timeout]);
    return performance.now() - start;
  }

  /** The phone sleeps: the socket goes; the position and the TLS ticket stay. */
  sleep(): void {
    this.stream.close();
  }
}

/** The pane's visible text now, as the terminal's rows read it. */
async function visible(bd: BenchDaemon): Promise<string[]> {
  const text = await bd.tmux.tmux('capture-pane', '-p', '-t', `=${SESSION}:`);
  const lines = text.split('\n').map((l) => l.trimEnd());
  return lines.concat(Array(40).fill('')).slice(0, 40);
}

/** Prints `n` lines with a marker and waits until the pane shows the marker and stays quiet. */
async function printAndSettle(bd: BenchDaemon, n: number, tag: string, quietMs: number): Promise<void> {
  await bd.typeLine(
    `=${SESSION}:`,
    `i=0; while [ $i -lt ${n} ]; do i=$((i+1)); printf '\\033[3%dmline %d of %s, a few words of output\\033[0m\\n' $((i%8)) $i ${tag}; done; echo END-${tag}`,
  );
  await waitFor(
    `END-${tag}`,
    async () => (await bd.tmux.tmux('capture-pane', '-p', '-t', `=${SESSION}:`)).includes(`END-${tag}`),
    30_000,
    20,
  );
  await sleep(quietMs);
}

interface Sample {
  readonly ms: number;
  readonly floor: number;
}

/** Runs every case `runs` times against `baseUrl` (direct, or a proxy's); `proxy` counts the bytes. */
async function wakes(
  bd: BenchDaemon,
  baseUrl: string,
  tls: PinnedTlsOptions,
  runs: number,
  profile: LinkProfile | null,
  proxy: ShapingProxy | null,
): Promise<Record<Case, Sample[]>> {
  const out: Record<Case, Sample[]> = { delta: [], gap: [], fresh: [] };
  const floorOf = (): number => (profile && proxy ? floorMs(profile, ROUND_TRIPS, proxy.downBytes, proxy.upBytes) : 0);
  const held = new PhoneClient(baseUrl, bd.token, tls);
  await held.wake(await visible(bd));
  try {
    for (let i = 0; i < runs + 2; i++) {
      const keep = i >= 2; // the first two warm the JIT and the paths up
      // delta
      held.sleep();
      await printAndSettle(bd, 40, `d${i}`, 300);
      await proxy?.idle();
      proxy?.resetCounts();
      let t = await held.wake(await visible(bd));
      if (keep) out.delta.push({ ms: t, floor: floorOf() });
      // gap: a position from long ago, the pane quiet for over a second
      held.sleep();
      await printAndSettle(bd, 5, `g${i}`, 1200);
      held.stream.lastSeq = 1;
      await proxy?.idle();
      proxy?.resetCounts();
      t = await held.wake(await visible(bd));
      if (keep) out.gap.push({ ms: t, floor: floorOf() });
      // fresh
      const fresh = new PhoneClient(baseUrl, bd.token, tls);
      await proxy?.idle();
      proxy?.resetCounts();
      t = await fresh.wake(await visible(bd));
      fresh.sleep();
      if (keep) out.fresh.push({ ms: t, floor: floorOf() });
    }
  } finally {
    held.sleep();
  }
  return out;
}

function rowsOf(where: string, samples: Record<Case, Sample[]>, profile: LinkProfile | null): Row[] {
  const rows: Row[] = [];
  const label: Record<Case, string> = {
    delta: 'delta resume (40 lines missed)',
    gap: `gap, snapshot of ${HISTORY_LINES - 100} lines`,
    fresh: 'fresh client, snapshot',
  };
  for (const c of CASES) {
    const times = samples[c].map((s) => s.ms);
    const floors = samples[c].map((s) => s.floor);
    const p50 = percentile(times, 50);
    const p99 = percentile(times, 99);
    const floor = percentile(floors, 50);
    // The targets are for the profiles as specified; jitter is reported, not held to them (its
    // floor would have to include the jitter's own mean). On loopback, the reconnect bench holds
    // the snapshot targets; a fresh client pays a full TLS handshake here and has none.
    const target = profile
      ? profile.jitterMs > 0
        ? '-'
        : `p99 < floor + 100 ms${profile.rttMs >= 300 ? ' and < 1 s' : ''}`
      : c === 'delta'
        ? 'p99 < 20 ms'
        : c === 'gap'
          ? 'p99 < 50 ms'
          : '-';
    rows.push({
      name: `wake to visible, ${where}: ${label[c]}`,
      value: `p50 ${ms(p50)}, p99 ${ms(p99)}`,
      baseline: profile ? `floor ${ms(floor)} (${ROUND_TRIPS} RTT + bytes / bandwidth)` : 'loopback',
      ratio: profile ? `+${ms(p99 - floor)} at p99` : '-',
      target,
    });
  }
  return rows;
}

export async function runWakeBench(): Promise<Row[]> {
  const runs = envNumber('TETHER_BENCH_WAKE_RUNS', 20);
  return withBenchDaemon(
    SESSION,
    async (bd) => {
      const run = JSON.parse(readFileSync(join(bd.dataDir, 'run', 'daemon.json'), 'utf8')) as { port: number; fingerprint: string };
      const tls = await pinnedTlsOptions('127.0.0.1', run.port, run.fingerprint);
      // A full history, as a long agent session leaves it.
      const lines: string[] = [];
      for (let i = 0; i < HISTORY_LINES; i++)
        lines.push(`\x1b[3${i % 8}m${String(i).padStart(6, '0')}\x1b[0m ${'history line, some colour and text '.repeat(2)}`);
      const file = join(bd.tmux.dir, 'history.txt');
      writeFileSync(file, `${lines.join('\n')}\n`);
      await bd.typeLine(`=${SESSION}:`, `cat ${file}; echo HISTORY-DONE`);
      await waitFor(
        'the history',
        async () => (await bd.tmux.tmux('capture-pane', '-p', '-t', `=${SESSION}:`)).includes('HISTORY-DONE'),
        60_000,
        100,
      );
      const rows: Row[] = [];
      rows.push(...rowsOf('loopback', await wakes(bd, `https://127.0.0.1:${run.port}`, tls, runs, null, null), null));
      for (const profile of PROFILES) {
        const proxy = new ShapingProxy(run.port, profile);
        const port = await proxy.listen();
        try {
          rows.push(...rowsOf(profile.name, await wakes(bd, `https://127.0.0.1:${port}`, tls, runs, profile, proxy), profile));
        } finally {
          await proxy.close();
        }
      }
      return rows;
    },
    '',
    true,
  );
}
