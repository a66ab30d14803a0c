/**
 * Reconnect and snapshot cost.
 *
 * Reconnect: from creating the socket (TCP connect, the TLS handshake when the daemon serves
 * TLS, the upgrade, `resume`) until the screen is restored:
 * - delta: the client left at a `lastSeq` the ring still holds, 40 coloured lines were printed
 *   meanwhile; restored when it holds the position a client that never left holds.
 * - snapshot: a pane with a full 10000-line history, `lastSeq: null`; the screen shows with the
 *   first snapshot frame (the screen alone, when the history is long) and is restored when the
 *   full snapshot is decoded. Cold: a resize just dropped the warm capture, so tmux is asked for
 *   all 10000 lines. Quiet 1 s: the pane was quiet, the warm capture serves (the health
 *   report's snapshot counts say which path each run took).
 * Baselines, measured in the same run: the transport floor (a `/side` socket, open to its first
 * frame: same TCP, TLS, upgrade and auth, no stream work), and tmux itself producing the same
 * 10000 lines (`capture-pane -p -e -S -10000` over a bare control client).
 *
 * Snapshot cost: `snapshot-request` on an open socket until the snapshot is decoded; its bytes
 * raw, as the JSON frame, and on the wire with permessage-deflate and without.
 */
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { withBenchDaemon, type BenchDaemon } from './harness.js';
import { envNumber, median, ms, percentile, ratio, sleep, waitFor, type Row } from './figures.js';
import { RawStream } from './raw-stream.js';
import { BareControlReader, baselineSession } from './bare-tmux.js';
import type { SnapshotCounts } from '../src/stream/warm-snapshots.js';

const HISTORY_LINES = 10_100;

/** 10100 coloured lines of ~100 columns, so the history is full. */
function historyFile(dir: string): string {
  const lines: string[] = [];
  for (let i = 0; i < HISTORY_LINES; i++)
    lines.push(
      `\x1b[3${i % 8}m${String(i).padStart(6, '0')}\x1b[0m ${'history line with some colour and text '.repeat(2)}\x1b[1mok\x1b[0m`,
    );
  const file = join(dir, 'history.txt');
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

/** Runs a command over a bare control client and resolves with the time to its %end. */
async function bareCommand(reader: BareControlReader, command: string): Promise<{ ms: number; bytes: number }> {
  let buf = '';
  let bytes = 0;
  const start = performance.now();
  await new Promise<void>((resolve) => {
    reader.onData = (d) => {
      bytes += d.length;
      buf = (buf + d.toString('latin1')).slice(-4096);
      if (/\n%(end|error) \d+ \d+ \d+\n$/.test(buf) || /^%(end|error) \d+ \d+ \d+\n$/.test(buf)) resolve();
    };
    reader.command(command);
  });
  reader.onData = null;
  return { ms: performance.now() - start, bytes };
}

/** A snapshot larger than this carries the history (the screen alone is a few KB). */
const FULL_SNAPSHOT_MIN_BYTES = 200 * 1024;

async function untilSeq(client: RawStream, target: number): Promise<number> {
  await waitFor('the delta', () => client.lastSeq !== null && client.lastSeq >= target, 10_000, 1);
  return performance.now() - client.startedAt;
}

/** Prints `n` coloured lines then a marker; resolves when `steady` has the marker. */
async function printLines(bd: BenchDaemon, steady: RawStream, n: number, tag: string): Promise<void> {
  let seen = '';
  const arrived = new Promise<void>((resolve) => {
    steady.onData = (bytes) => {
      seen = (seen + bytes.toString('latin1')).slice(-256);
      if (seen.includes(`DONE-${tag}`)) resolve();
    };
  });
  await bd.typeLine(
    '=rc:',
    `i=0; while [ $i -lt ${n} ]; do i=$((i+1)); printf '\\033[3%dmline %d of the delta, a few words of output\\033[0m\\n' $((i%8)) $i; done; printf '%s-%s\\n' DONE ${tag}`,
  );
  await arrived;
  steady.onData = null;
  await sleep(100); // the prompt after it
}

export interface ReconnectResult {
  readonly rows: Row[];
  readonly delta: number[];
  readonly snapshot: number[];
}

export async function runReconnectBench(): Promise<ReconnectResult> {
  const runs = envNumber('TETHER_BENCH_RECONNECT_RUNS', 30);
  return withBenchDaemon('rc', async (bd) => {
    await baselineSession(bd.tmux, 'rc-base');
    const reader = new BareControlReader(bd.tmux, 'rc-base');
    const steady = new RawStream(bd, 'rc', null);
    await steady.opened;
    await waitFor('the first snapshot', () => steady.snapshots > 0);
    const delta: number[] = [];
    const floor: number[] = [];
    const snapshot: number[] = [];
    const screenCold: number[] = [];
    const warmFull: number[] = [];
    const warmScreen: number[] = [];
    const capture: number[] = [];
    let deltaSnapshots = 0;
    const rows: Row[] = [];
    try {
      // Delta: leave, output, come back with the lastSeq held.
      const first = new RawStream(bd, 'rc', null);
      await waitFor('a base', () => first.snapshots > 0);
      let held = first.lastSeq;
      await first.close();
      for (let i = 0; i < runs + 3; i++) {
        await printLines(bd, steady, 40, `d${i}`);
        const target = steady.lastSeq!;
        const client = new RawStream(bd, 'rc', held);
        const t = await untilSeq(client, target);
        deltaSnapshots += client.snapshots;
        held = client.lastSeq;
        await client.close();
        const side = new RawStream(bd, 'rc', null, true, 'side');
        const f = (await side.firstFrame) - side.startedAt;
        await side.close();
        if (i >= 3) {
          // the first few warm the JIT and the connection paths up
          delta.push(t);
          floor.push(f);
        }
      }
      // A full history, then fresh clients (lastSeq null: snapshot, then live).
      const file = historyFile(bd.tmux.dir);
      // tmux drops a tenth of the history each time it reaches the limit: top it up to just under.
      const historySize = async () => Number((await bd.tmux.tmux('display-message', '-p', '-t', '=rc:', '#{history_size}')).trim());
      await bd.typeLine('=rc:', `cat ${file}`);
      await waitFor('the history', async () => (await historySize()) >= 9000, 30_000, 100);
      await printLines(bd, steady, 1, 'h0');
      await printLines(bd, steady, Math.max(1, 9990 - (await historySize())), 'h1');
      const history = await historySize();
      let snapshotBytes = 0;
      let snapshotFrameBytes = 0;
      const counts = async () => (JSON.parse((await bd.request('GET', '/health')).text) as { snapshots: SnapshotCounts }).snapshots;
      /** A fresh client (lastSeq null): when its screen showed (the first snapshot) and when the history had arrived. */
      const fresh = async (): Promise<{ screen: number; full: number }> => {
        const client = new RawStream(bd, 'rc', null);
        let screen = 0;
        const full = await new Promise<number>((resolve) => {
          client.onSnapshot = (bytes, _seq, frameBytes) => {
            const t = performance.now() - client.startedAt;
            if (screen === 0) screen = t;
            // The screen-first frame is a few KB; the full one carries the 10000 lines.
            if (bytes.length > FULL_SNAPSHOT_MIN_BYTES) {
              snapshotBytes = bytes.length;
              snapshotFrameBytes = frameBytes;
              resolve(t);
            }
          };
        });
        await client.close();
        return { screen, full };
      };
      // Cold: a resize drops the warm capture, so tmux is asked for all 10000 lines, as on the
      // first reconnect after the daemon started or during output that never pauses.
      const coldBefore = await counts();
      for (let i = 0; i < runs + 3; i++) {
        await bd.tmux.tmux('resize-window', '-t', '=rc:', '-x', '119', '-y', '40');
        await bd.tmux.tmux('resize-window', '-t', '=rc:', '-x', '120', '-y', '40');
        await sleep(50); // the layout change reaches the daemon's control client
        const t = await fresh();
        const c = await bareCommand(reader, 'capture-pane -p -e -S -10000 -t =rc:');
        if (i >= 3) {
          snapshot.push(t.full);
          screenCold.push(t.screen);
          capture.push(c.ms);
        }
      }
      const coldAfter = await counts();
      // Quiet for 1 s (a phone waking to an agent that waits): the warm capture serves.
      await sleep(1000);
      const warmBefore = await counts();
      for (let i = 0; i < runs + 3; i++) {
        const t = await fresh();
        if (i >= 3) {
          warmFull.push(t.full);
          warmScreen.push(t.screen);
        }
      }
      const warmAfter = await counts();
      const askedCold = coldAfter.cold - coldBefore.cold;
      const servedWarm = warmAfter.warmServed - warmBefore.warmServed;
      const askedDuringWarm = warmAfter.cold - warmBefore.cold;
      // Snapshot cost on an open socket, with and without permessage-deflate.
      const cost = async (deflate: boolean) => {
        const client = new RawStream(bd, 'rc', null, deflate);
        await waitFor('a base', () => client.snapshots > 0);
        await sleep(100);
        const times: number[] = [];
        const wire: number[] = [];
        for (let i = 0; i < Math.min(runs, 10); i++) {
          const before = client.wireBytesRead;
          const start = performance.now();
          const got = new Promise<void>((resolve) => (client.onSnapshot = () => resolve()));
          client.send({ type: 'snapshot-request' });
          await got;
          times.push(performance.now() - start);
          await sleep(50);
          wire.push(client.wireBytesRead - before);
        }
        await client.close();
        return { ms: median(times), wire: median(wire) };
      };
      const on = await cost(true);
      const off = await cost(false);
      const cap = await bareCommand(reader, 'capture-pane -p -e -S -10000 -t =rc:');
      const how = bd.tls ? 'TLS' : 'plain http (tls = false)';
      rows.push(
        ...[50, 99].map((p) => ({
          name: `reconnect, delta resume p${p} (${how})`,
          value: ms(percentile(delta, p)),
          baseline: `${ms(percentile(floor, p))} socket open to first frame (/side), same daemon${deltaSnapshots ? `; ${deltaSnapshots} fell back to a snapshot` : ''}`,
          ratio: ratio(percentile(delta, p), percentile(floor, p)),
          target: p === 99 ? '< 20 ms' : '-',
        })),
        ...[50, 99].map((p) => ({
          name: `reconnect, ${history}-line snapshot, quiet 1 s (warm) p${p} (${how})`,
          value: `${ms(percentile(warmFull, p))} (screen ${ms(percentile(warmScreen, p))})`,
          baseline: `${ms(percentile(capture, p))} tmux capture-pane -e -S -10000 over tmux -C; ${servedWarm} of ${warmFull.length + 3} served warm, ${askedDuringWarm} asked tmux`,
          ratio: ratio(percentile(warmFull, p), percentile(capture, p)),
          target: p === 99 ? '< 50 ms' : '-',
        })),
        ...[50, 99].map((p) => ({
          name: `reconnect, ${history}-line snapshot, cold (after a resize) p${p} (${how})`,
          value: `${ms(percentile(snapshot, p))} (screen ${ms(percentile(screenCold, p))})`,
          baseline: `${ms(percentile(capture, p))} tmux capture-pane -e -S -10000 over tmux -C; tmux asked ${askedCold} times for ${snapshot.length + 3} clients`,
          ratio: ratio(percentile(snapshot, p), percentile(capture, p)),
          target: p === 99 ? '< 1 s' : '-',
        })),
        {
          name: `snapshot cost, ${history} lines (on an open socket)`,
          value: ms(on.ms),
          baseline: `${ms(median(capture))} tmux capture-pane over tmux -C`,
          ratio: ratio(on.ms, median(capture)),
          target: '-',
        },
        {
          name: 'snapshot bytes: raw / JSON frame / wire deflate / wire plain',
          value: `${(on.wire / 1024).toFixed(0)} KiB wire`,
          baseline: `raw ${(snapshotBytes / 1024).toFixed(0)} KiB, frame ${(snapshotFrameBytes / 1024).toFixed(0)} KiB, wire without deflate ${(off.wire / 1024).toFixed(0)} KiB (${off.ms.toFixed(0)} ms), tmux capture ${(cap.bytes / 1024).toFixed(0)} KiB`,
          ratio: ratio(on.wire, snapshotBytes),
          target: '-',
        },
      );
    } finally {
      await reader.close();
      await steady.close();
    }
    return { rows, delta, snapshot };
  });
}
