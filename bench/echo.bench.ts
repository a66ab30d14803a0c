/**
 * Keystroke echo at an idle prompt: the pane runs `cat` on a raw, non-echoing tty, so each
 * byte typed comes back as the program's own write (as an editor or the agent's prompt does).
 * Tether: a `keys` frame on the stream socket until the binary frame carrying the echo.
 * Baseline: the same keystroke through a bare `tmux -C` client (`send-keys`) until its
 * `%output`, on an identical pane of the same tmux server. Beside both, a bare WebSocket relay
 * in a second node process (bench/relay-floor.ts): the floor of any sidecar design, so the
 * report splits what tether adds into the architecture's share and its own. Blocks rotate;
 * p50/p90/p99. `TETHER_BENCH_ECHO_KEYS` (300) keystrokes each. Before them, the time of one
 * session's `POST /sessions` (`TETHER_BENCH_CREATES`, 15, each deleted after).
 */
import { withBenchDaemon, type BenchDaemon } from './harness.js';
import { envNumber, ms, percentile, ratio, sleep, type Row } from './figures.js';
import { streamWithBase } from './raw-stream.js';
import { BareControlReader, baselineSession } from './bare-tmux.js';
import { RelayClient, startRelayFloor } from './relay-floor.js';

const BLOCK = 50;
const GAP_MS = 5;
/** Printable bytes that the echo pane's `cat` gives back as they are: what every echo bench types. */
export const ECHO_KEYS = 'abcdefghijklmnopqrstuvwxyz0123456789';

export async function startEchoPane(bd: BenchDaemon, target: string): Promise<void> {
  await bd.typeLine(target, 'stty raw -echo; exec cat');
  await sleep(300);
}

/** A stream client that sends `keys` frames and hands over the bytes of each chunk frame. */
interface KeystrokeClient {
  onData: ((bytes: Buffer, seq: number) => void) | null;
  send(frame: object): void;
}

/** One keystroke through a stream client (tether's or the relay's): `keys` out, wait for a chunk holding that byte. */
export async function tetherKeystroke(client: KeystrokeClient, key: string, timeoutMs = 5000): Promise<number> {
  const start = performance.now();
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no echo of "${key}" in ${timeoutMs} ms`)), timeoutMs);
    client.onData = (bytes) => {
      if (bytes.includes(key)) {
        clearTimeout(timer);
        resolve();
      }
    };
    client.send({ type: 'keys', data: key });
  });
  client.onData = null;
  return performance.now() - start;
}

export async function bareKeystroke(reader: BareControlReader, session: string, key: string): Promise<number> {
  const start = performance.now();
  let buf = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no %output of "${key}"`)), 5000);
    reader.onData = (bytes) => {
      buf += bytes.toString('latin1');
      // tmux writes `%output %<pane> <bytes>` lines; the key is a plain letter or digit.
      for (const line of buf.split('\n')) {
        if (line.startsWith('%output ') && line.slice(line.indexOf(' ', 8) + 1).includes(key)) {
          clearTimeout(timer);
          resolve();
          return;
        }
      }
      buf = buf.slice(buf.lastIndexOf('\n') + 1);
    };
    reader.command(`send-keys -t =${session}: -l ${key}`);
  });
  reader.onData = null;
  return performance.now() - start;
}

export interface EchoResult {
  readonly rows: Row[];
  readonly tether: number[];
  readonly bare: number[];
  /** The same keystrokes through the bare relay (bench/relay-floor.ts). */
  readonly relay: number[];
}

type Side = 'tether' | 'relay' | 'bare';
const SIDES: readonly Side[] = ['tether', 'relay', 'bare'];

/** `POST /sessions` of a named session (then its `DELETE`), `n` times: the time of each create. */
async function timedCreates(bd: BenchDaemon, n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const start = performance.now();
    await bd.createSession(`made-${i}`);
    out.push(performance.now() - start);
    const res = await bd.request('DELETE', `/sessions/made-${i}`);
    if (res.status !== 204) throw new Error(`DELETE made-${i}: HTTP ${res.status}`);
  }
  return out;
}

export async function runEchoBench(): Promise<EchoResult> {
  const keys = envNumber('TETHER_BENCH_ECHO_KEYS', 300);
  return withBenchDaemon('echo', async (bd) => {
    // One session's creation, as a phone asks for it, before anything else runs.
    const creates = await timedCreates(bd, envNumber('TETHER_BENCH_CREATES', 15));
    await baselineSession(bd.tmux, 'echo-base');
    await baselineSession(bd.tmux, 'echo-relay');
    await startEchoPane(bd, '=echo:');
    await startEchoPane(bd, '=echo-base:');
    await startEchoPane(bd, '=echo-relay:');
    const client = await streamWithBase(bd, 'echo', true);
    const reader = new BareControlReader(bd.tmux, 'echo-base');
    const relay = await startRelayFloor(bd.tmux.socket, 'echo-relay');
    const relayClient = new RelayClient(relay.url);
    await relayClient.opened;
    await sleep(500);
    const samples: Record<Side, number[]> = { tether: [], relay: [], bare: [] };
    const keystroke = (side: Side, key: string): Promise<number> =>
      side === 'tether'
        ? tetherKeystroke(client, key)
        : side === 'relay'
          ? tetherKeystroke(relayClient, key)
          : bareKeystroke(reader, 'echo-base', key);
    try {
      // Warm-up, not counted.
      for (let i = 0; i < 20; i++) for (const side of SIDES) await keystroke(side, ECHO_KEYS[i % ECHO_KEYS.length]!);
      for (let block = 0; block * BLOCK < keys; block++) {
        // Each side takes each place in the order in turn, and the order reverses every other round.
        const rotated = SIDES.map((_, i) => SIDES[(i + block) % SIDES.length]!);
        const order = Math.floor(block / SIDES.length) % 2 === 0 ? rotated : rotated.reverse();
        for (const side of order) {
          for (let i = 0; i < BLOCK; i++) {
            samples[side].push(await keystroke(side, ECHO_KEYS[(block * BLOCK + i) % ECHO_KEYS.length]!));
            await sleep(GAP_MS);
          }
        }
      }
    } finally {
      relayClient.close();
      await relay.stop();
      await reader.close();
      await client.close();
    }
    const { tether, relay: relayed, bare } = samples;
    const rows: Row[] = [50, 90, 99].map((p) => ({
      name: `keystroke echo p${p} (${tether.length} keys)`,
      value: ms(percentile(tether, p)),
      baseline: `${ms(percentile(bare, p))} tmux -C send-keys -> %output, same tmux (+${(percentile(tether, p) - percentile(bare, p)).toFixed(2)} ms)`,
      ratio: ratio(percentile(tether, p), percentile(bare, p)),
      target: p === 50 ? '<= floor + 0.3 ms' : '-',
    }));
    const relayP50 = percentile(relayed, 50);
    const bareP50 = percentile(bare, 50);
    const tetherP50 = percentile(tether, 50);
    rows.push({
      name: `keystroke echo p50, bare WebSocket relay (${relayed.length} keys)`,
      value: ms(relayP50),
      baseline: `${ms(bareP50)} tmux -C floor (+${(relayP50 - bareP50).toFixed(2)} ms: the two hops any sidecar adds; tether +${(tetherP50 - relayP50).toFixed(2)} ms over the relay)`,
      ratio: ratio(relayP50, bareP50),
      target: '- (context)',
    });
    rows.push({
      name: `POST /sessions p50 / p90 (${creates.length} creates, each then deleted)`,
      value: `${ms(percentile(creates, 50))} / ${ms(percentile(creates, 90))}`,
      baseline: 'tmux new-session and the link to it, on the same host',
      ratio: '-',
      target: 'p50 < 100 ms',
    });
    return { rows, tether, bare, relay: relayed };
  });
}
