/**
 * The flood as a peer sees it: a peer that runs `tmux attach` gets tmux's redraws, not every
 * byte, so what can be timed is how soon the end of a `cat` reaches the peer's client; tether's
 * client, attached to the same session during the same flood, is timed the same way. Shared by
 * the peer benches; the baseline is a bare `tmux -C` reader of the same flood, measured after.
 */
import type { BenchDaemon } from './harness.js';
import { median, ratio, sleep, type Row } from './figures.js';
import { MarkerScan, streamWithBase } from './raw-stream.js';
import { floodFile, measureTmuxControlRate } from './tmux-baseline.js';

export interface PeerFloodClient {
  /** Called with each piece of text the peer's client receives (null: stop listening). */
  listen(onText: ((text: string) => void) | null): void;
}

/**
 * Runs the flood twice in the peer's pane (`=peer:`, a shell) with the peer's client and a
 * tether stream client attached to that same session, and returns the report rows: how soon the
 * end of the flood reached each (the same flood, the same pane, the same moment).
 */
export async function peerFloodRows(bd: BenchDaemon, peer: string, floodMb: number, client: PeerFloodClient): Promise<Row[]> {
  const file = floodFile(bd.tmux.dir, floodMb, 'peer-flood-end');
  const tether = await streamWithBase(bd, 'peer');
  const secs: number[] = [];
  const tetherSecs: number[] = [];
  let carried = 0;
  let tetherCarried = 0;
  for (let r = 0; r < 2; r++) {
    const scan = new MarkerScan(`PEEREND-${r}`);
    const tetherScan = new MarkerScan(`PEEREND-${r}`);
    const arrived = new Promise<void>((resolve) =>
      client.listen((text) => {
        carried += Buffer.byteLength(text);
        if (scan.feed(Buffer.from(text, 'utf8'))) resolve();
      }),
    );
    const tetherArrived = new Promise<void>((resolve) => {
      tether.onData = (bytes) => {
        tetherCarried += bytes.length;
        if (tetherScan.feed(bytes)) resolve();
      };
    });
    const t0 = performance.now();
    const timeout = (who: string) =>
      sleep(120_000).then(() =>
        Promise.reject(new Error(`${who}: the end of a ${floodMb} MB flood never reached the screen within 120 s`)),
      );
    await bd.typeLine('=peer:', `cat ${file}; printf '%s-%s\\n' PEEREND ${r}`);
    await Promise.all([
      Promise.race([arrived.then(() => secs.push((performance.now() - t0) / 1000)), timeout(peer)]),
      Promise.race([tetherArrived.then(() => tetherSecs.push((performance.now() - t0) / 1000)), timeout('tether')]),
    ]);
    await sleep(500);
  }
  client.listen(null);
  tether.onData = null;
  await tether.close();
  const bare = await measureTmuxControlRate(floodMb);
  const rate = floodMb / median(secs);
  const tetherRate = floodMb / median(tetherSecs);
  const tetherRow: Row = {
    name: `peer ${peer}: the same flood to tether's client (median of 2)`,
    value: `${tetherRate.toFixed(1)} MB/s`,
    ratio: ratio(tetherRate, bare.mbPerSec),
    target: '-',
    baseline: `${bare.mbPerSec.toFixed(1)} MB/s bare tmux -C reader; tether carried ${(tetherCarried / 2 / 1e6).toFixed(1)} MB a run (every byte), beside ${peer} at ${rate.toFixed(1)} MB/s`,
  };
  return [
    {
      name: `peer ${peer}: flood ${floodMb} MB, end on screen (median of 2)`,
      value: `${rate.toFixed(1)} MB/s`,
      ratio: ratio(rate, bare.mbPerSec),
      target: '-',
      baseline: `${bare.mbPerSec.toFixed(1)} MB/s bare tmux -C reader; ${peer} carried ${(carried / 2 / 1e6).toFixed(1)} MB a run (tmux's redraw of the screen, not the pane's bytes)`,
    },
    tetherRow,
  ];
}
