/**
 * Keystroke echo at an idle prompt: the pane runs `cat` on a raw, non-echoing tty, so each
 * byte typed comes back as the program's own write (as an editor or the agent's prompt does).
 * Tether: a `keys` frame on the stream socket until the binary frame carrying the echo.
 * Baseline: the same keystroke through a bare `tmux -C` client (`send-keys`) until its
 * `%output`, on an identical pane of the same tmux server. Blocks alternate; p50/p90/p99.
 * `TETHER_BENCH_ECHO_KEYS` (300) keystrokes each.
 */
import {
  BareControlReader,
  baselineSession,
  envNumber,
  ms,
  percentile,
  ratio,
  sleep,
  streamWithBase,
  withBenchDaemon,
  type BenchDaemon,
  type RawStream,
  type Row,
} from './harness.js';

const BLOCK = 50;
const GAP_MS = 5;
/** Printable bytes that `cat` gives back as they are. */
const KEYS = 'abcdefghijklmnopqrstuvwxyz0123456789';

export async function startEchoPane(bd: BenchDaemon, target: string): Promise<void> {
  await bd.typeLine(target, 'stty raw -echo; exec cat');
  await sleep(300);
}

/** One tether keystroke: `keys` out, wait for a chunk holding that byte. */
export async function tetherKeystroke(client: RawStream, key: string, timeoutMs = 5000): Promise<number> {
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

async function bareKeystroke(reader: BareControlReader, session: string, key: string): Promise<number> {
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
}

export async function runEchoBench(): Promise<EchoResult> {
  const keys = envNumber('TETHER_BENCH_ECHO_KEYS', 300);
  return withBenchDaemon('echo', async (bd) => {
    await baselineSession(bd.tmux, 'echo-base');
    await startEchoPane(bd, '=echo:');
    await startEchoPane(bd, '=echo-base:');
    const client = await streamWithBase(bd, 'echo', true);
    const reader = new BareControlReader(bd.tmux, 'echo-base');
    await sleep(500);
    const tether: number[] = [];
    const bare: number[] = [];
    try {
      // Warm-up, not counted.
      for (let i = 0; i < 20; i++) {
        await tetherKeystroke(client, KEYS[i % KEYS.length]!);
        await bareKeystroke(reader, 'echo-base', KEYS[i % KEYS.length]!);
      }
      for (let block = 0; block * BLOCK < keys; block++) {
        const tetherFirst = block % 2 === 0;
        for (const side of tetherFirst ? ['t', 'b'] : ['b', 't']) {
          for (let i = 0; i < BLOCK; i++) {
            const key = KEYS[(block * BLOCK + i) % KEYS.length]!;
            if (side === 't') tether.push(await tetherKeystroke(client, key));
            else bare.push(await bareKeystroke(reader, 'echo-base', key));
            await sleep(GAP_MS);
          }
        }
      }
    } finally {
      await reader.close();
      await client.close();
    }
    const rows: Row[] = [50, 90, 99].map((p) => ({
      name: `keystroke echo p${p} (${tether.length} keys)`,
      value: ms(percentile(tether, p)),
      baseline: `${ms(percentile(bare, p))} tmux -C send-keys -> %output, same tmux (+${(percentile(tether, p) - percentile(bare, p)).toFixed(2)} ms)`,
      ratio: ratio(percentile(tether, p), percentile(bare, p)),
      target: p === 50 ? '<= floor + 0.3 ms' : '-',
    }));
    return { rows, tether, bare };
  });
}
