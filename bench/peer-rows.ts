/**
 * The rows every peer bench measures the same way: reconnects, and keystroke echo at an idle
 * prompt, tether beside the peer in the same pane. Both clients see every echo, so each side types keys only it types (tether lower
 * case, the peer upper case; letters only, and the pane has no status line: nothing else on the
 * screen can look like an echo) and waits for its own; a few of each warm the paths up, then the two sides alternate in blocks of 50, the
 * side going first flipping every block, so both see the same host at the same moments.
 */
import { ms, percentile, ratio, sleep, type Row } from './figures.js';

const KEYS = 'abcdefghijklmnopqrstuvwxyz';
const PEER_KEYS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const WARM_UP = 20;
const BLOCK = 50;

/** One keystroke typed on one side: resolves to the milliseconds until its echo came back. */
export type Keystroke = (key: string) => Promise<number>;

/** Times `keys` keystrokes on each side; the rows give the peer's p50, p90 and p99 against tether's. */
export async function peerEchoRows(peer: string, keys: number, tether: Keystroke, other: Keystroke): Promise<Row[]> {
  for (let i = 0; i < WARM_UP; i++) {
    await tether(KEYS[i % KEYS.length]!);
    await other(PEER_KEYS[i % PEER_KEYS.length]!);
  }
  const t: number[] = [];
  const o: number[] = [];
  for (let i = 0; i < keys; i++) {
    const key = KEYS[i % KEYS.length]!;
    const peerKey = PEER_KEYS[i % PEER_KEYS.length]!;
    if (Math.floor(i / BLOCK) % 2 === 0) {
      t.push(await tether(key));
      o.push(await other(peerKey));
    } else {
      o.push(await other(peerKey));
      t.push(await tether(key));
    }
    await sleep(5);
  }
  return [50, 90, 99].map((p) => ({
    name: `peer ${peer}: keystroke echo p${p} (${o.length} keys)`,
    value: ms(percentile(o, p)),
    baseline: `tether ${ms(percentile(t, p))}, same run, same pane (ratio: tether / ${peer})`,
    ratio: ratio(percentile(t, p), percentile(o, p)),
    target: p === 50 ? '<= 1x' : '-',
  }));
}

/**
 * Opens `runs` new clients of the peer one after the other; `open` resolves to the milliseconds
 * from creating the client's socket to what `what` names, and closes it.
 */
export async function peerReconnectRow(
  peer: string,
  what: string,
  baseline: string,
  runs: number,
  open: () => Promise<number>,
): Promise<Row> {
  const opened: number[] = [];
  for (let r = 0; r < runs; r++) {
    opened.push(await open());
    await sleep(100);
  }
  return {
    name: `peer ${peer}: reconnect to ${what} p50 / p99 (${runs})`,
    value: `${ms(percentile(opened, 50))} / ${ms(percentile(opened, 99))}`,
    baseline,
    ratio: '-',
    target: '-',
  };
}
