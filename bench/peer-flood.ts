/**
 * The flood as a peer sees it: a peer that runs `tmux attach` gets tmux's redraws, not every
 * byte, so what can be timed is how soon the end of a `cat` reaches the peer's client. Shared by
 * the peer benches; the baseline is a bare `tmux -C` reader of the same flood, measured after.
 */
import { median, MarkerScan, ratio, sleep, type BenchDaemon, type Row } from './harness.js';
import { floodFile, measureTmuxControlRate } from './tmux-baseline.js';

export interface PeerFloodClient {
  /** Called with each piece of text the peer's client receives (null: stop listening). */
  listen(onText: ((text: string) => void) | null): void;
}

/** Runs the flood twice in the peer's pane (`=peer:`, a shell) and returns the report row. */
export async function peerFloodRow(bd: BenchDaemon, peer: string, floodMb: number, client: PeerFloodClient): Promise<Row> {
  const file = floodFile(bd.tmux.dir, floodMb, 'peer-flood-end');
  const secs: number[] = [];
  let carried = 0;
  for (let r = 0; r < 2; r++) {
    const scan = new MarkerScan(`PEEREND-${r}`);
    const arrived = new Promise<void>((resolve) =>
      client.listen((text) => {
        carried += Buffer.byteLength(text);
        if (scan.feed(Buffer.from(text, 'utf8'))) resolve();
      }),
    );
    const t0 = performance.now();
    await bd.typeLine('=peer:', `cat ${file}; printf '%s-%s\\n' PEEREND ${r}`);
    await Promise.race([arrived, sleep(120_000).then(() => Promise.reject(new Error(`${peer}: the end of a ${floodMb} MB flood never reached the screen within 120 s`)))]);
    secs.push((performance.now() - t0) / 1000);
    await sleep(500);
  }
  client.listen(null);
  const bare = await measureTmuxControlRate(floodMb);
  const rate = floodMb / median(secs);
  return {
    name: `peer ${peer}: flood ${floodMb} MB, end on screen (median of 2)`,
    value: `${rate.toFixed(1)} MB/s`,
    ratio: ratio(rate, bare.mbPerSec),
    target: '-',
    baseline: `${bare.mbPerSec.toFixed(1)} MB/s bare tmux -C reader; ${peer} carried ${(carried / 2 / 1e6).toFixed(1)} MB a run (tmux's redraw of the screen, not the pane's bytes)`,
  };
}
