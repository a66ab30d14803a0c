/**
 * permessage-deflate on small interactive chunks: does the server's tuning cost more than it
 * saves?
 *
 * 1. On the daemon: two stream clients on one pane, one offering permessage-deflate (as the
 *    reference client does) and one not. Typing at a shell prompt (one-byte echoes) and an
 *    agent-like trickle of short coloured lines: bytes each client read from the network;
 *    keystroke echo latency with and without deflate, blocks alternating.
 * 2. The threshold, in process: the chunk frames recorded in (1) replayed one at a time
 *    through a `ws` server with the daemon's options and other thresholds: wire bytes, CPU
 *    (server and client in this process) and send-to-receive latency per frame.
 */
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import WebSocket, { WebSocketServer } from 'ws';
import { DEFAULT_DEFLATE_POLICY } from '../src/transport/stream/deflate-policy.js';
import { startEchoPane, tetherKeystroke } from './echo.bench.js';
import { withBenchDaemon, type BenchDaemon } from './harness.js';
import { envNumber, median, ms, percentile, ratio, sleep, waitFor, type Row } from './figures.js';
import { RawStream } from './raw-stream.js';

async function untilMarker(client: RawStream, marker: string): Promise<void> {
  let seen = '';
  await new Promise<void>((resolve) => {
    client.onData = (bytes) => {
      seen = (seen + bytes.toString('latin1')).slice(-256);
      if (seen.includes(marker)) resolve();
    };
  });
  client.onData = null;
}

/** Wire bytes both clients read while `act` runs and its output (ending in `marker`) arrives. */
async function wireDuring(
  on: RawStream,
  off: RawStream,
  marker: string,
  act: () => Promise<void>,
): Promise<{ on: number; off: number; payload: number }> {
  const on0 = on.wireBytesRead;
  const off0 = off.wireBytesRead;
  const payload0 = off.dataBytes;
  const done = Promise.all([untilMarker(on, marker), untilMarker(off, marker)]);
  await act();
  await done;
  await sleep(200);
  return { on: on.wireBytesRead - on0, off: off.wireBytesRead - off0, payload: off.dataBytes - payload0 };
}

interface ThresholdResult {
  readonly label: string;
  readonly wire: number;
  readonly cpuMs: number;
  readonly p50: number;
  readonly p99: number;
}

/**
 * Replays frames through a ws server, one at a time, compressing those of `threshold` bytes or
 * more (per message, as the daemon decides; ws's own `threshold` option applies only without
 * context takeover); null: deflate off.
 */
async function replay(frames: readonly Buffer[], label: string, threshold: number | null): Promise<ThresholdResult> {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: threshold !== null });
  await once(wss, 'listening');
  const port = (wss.address() as AddressInfo).port;
  const serverSide = once(wss, 'connection') as Promise<[WebSocket]>;
  const client = new WebSocket(`ws://127.0.0.1:${port}`, { perMessageDeflate: true });
  await once(client, 'open');
  const [server] = await serverSide;
  const socket = (client as unknown as { _socket: { bytesRead: number } })._socket;
  const lat: number[] = [];
  let pending: (() => void) | null = null;
  client.on('message', () => pending?.());
  // Twice: the first pass warms up (and primes the compression context, as a live stream has).
  let wire = 0;
  let cpuMs = 0;
  for (let pass = 0; pass < 2; pass++) {
    const wire0 = socket.bytesRead;
    const cpu0 = process.cpuUsage();
    for (const frame of frames) {
      const start = performance.now();
      await new Promise<void>((resolve) => {
        pending = resolve;
        server.send(frame, { binary: true, compress: threshold !== null && frame.length >= threshold });
      });
      if (pass === 1) lat.push(performance.now() - start);
    }
    const cpu = process.cpuUsage(cpu0);
    wire = socket.bytesRead - wire0;
    cpuMs = (cpu.user + cpu.system) / 1000;
  }
  client.terminate();
  await new Promise((r) => wss.close(r));
  return { label, wire, cpuMs, p50: median(lat), p99: percentile(lat, 99) };
}

const WS_DEFLATE_THRESHOLD_BYTES = DEFAULT_DEFLATE_POLICY.minBytes;

export async function runDeflateBench(): Promise<Row[]> {
  const keys = envNumber('TETHER_BENCH_ECHO_KEYS', 300);
  return withBenchDaemon('dfl', async (bd: BenchDaemon) => {
    const on = new RawStream(bd, 'dfl', null, true);
    const off = new RawStream(bd, 'dfl', null, false);
    await waitFor('both bases', () => on.snapshots > 0 && off.snapshots > 0);
    await sleep(300);
    const recorded: Buffer[] = [];
    off.ws.on('message', (data: Buffer, isBinary) => {
      if (isBinary) recorded.push(Buffer.from(data));
    });
    // Typing at the shell prompt: every key echoed by the tty, one small chunk each.
    const line = 'echo the quick brown fox jumps over the lazy dog';
    const typing = await wireDuring(on, off, 'TYPED-1', async () => {
      for (let r = 0; r < 4; r++) {
        for (const ch of line) {
          on.send({ type: 'keys', data: ch });
          await sleep(8);
        }
        on.send({ type: 'key', name: 'enter' });
        await sleep(30);
      }
      on.send({ type: 'keys', data: "printf '%s-%s\\n' TYPED 1\r" });
    });
    // An agent's trickle: short coloured lines, a few per 20 ms.
    const trickle = await wireDuring(on, off, 'TRICKLE-1', async () => {
      await bd.typeLine(
        '=dfl:',
        `i=0; while [ $i -lt 150 ]; do i=$((i+1)); printf '\\033[3%dm● step %d\\033[0m reading src/module-%d.ts \\033[2m(%d lines)\\033[0m ok\\n' $((i%7+1)) $i $i $((i*7)); sleep 0.02; done; printf '%s-%s\\n' TRICKLE 1`,
      );
    });
    // Echo latency, deflate offered or not, alternating blocks.
    await startEchoPane(bd, '=dfl:');
    const latOn: number[] = [];
    const latOff: number[] = [];
    const KEYS = 'abcdefghijklmnopqrstuvwxyz';
    for (let block = 0; block * 50 < keys; block++) {
      for (const side of block % 2 === 0 ? [on, off] : [off, on]) {
        for (let i = 0; i < 50; i++) {
          const other = side === on ? off : on;
          other.onData = null;
          const t = await tetherKeystroke(side, KEYS[i % KEYS.length]!);
          (side === on ? latOn : latOff).push(t);
          await sleep(5);
        }
      }
    }
    await on.close();
    await off.close();

    const sizes = recorded.map((f) => f.length - 8);
    const small = sizes.filter((s) => s < WS_DEFLATE_THRESHOLD_BYTES).length;
    const thresholds: ThresholdResult[] = [];
    for (const t of [0, 64, 256, WS_DEFLATE_THRESHOLD_BYTES]) thresholds.push(await replay(recorded, `threshold ${t}`, t));
    thresholds.push(await replay(recorded, 'deflate off', null));
    const current = thresholds.find((t) => t.label === `threshold ${WS_DEFLATE_THRESHOLD_BYTES}`)!;
    const offRes = thresholds.find((t) => t.label === 'deflate off')!;
    const kib = (n: number) => `${(n / 1024).toFixed(1)} KiB`;
    const rows: Row[] = [
      {
        name: `deflate: typing echoes, wire bytes (threshold ${WS_DEFLATE_THRESHOLD_BYTES})`,
        value: kib(typing.on),
        baseline: `${kib(typing.off)} without deflate, ${kib(typing.payload)} of pane bytes`,
        ratio: ratio(typing.on, typing.off),
        target: '<= 1x',
      },
      {
        name: `deflate: agent trickle, wire bytes (threshold ${WS_DEFLATE_THRESHOLD_BYTES})`,
        value: kib(trickle.on),
        baseline: `${kib(trickle.off)} without deflate, ${kib(trickle.payload)} of pane bytes`,
        ratio: ratio(trickle.on, trickle.off),
        target: '<= 1x',
      },
      ...[50, 99].map((p) => ({
        name: `deflate: keystroke echo p${p}, deflate offered`,
        value: ms(percentile(latOn, p)),
        baseline: `${ms(percentile(latOff, p))} without deflate`,
        ratio: ratio(percentile(latOn, p), percentile(latOff, p)),
        target: '~1x',
      })),
      ...thresholds.map((t) => ({
        name: `deflate replay ${recorded.length} frames (${small} < ${WS_DEFLATE_THRESHOLD_BYTES} B): ${t.label}`,
        value: `${kib(t.wire)}, ${t.cpuMs.toFixed(0)} ms CPU`,
        baseline: `deflate off: ${kib(offRes.wire)}, ${offRes.cpuMs.toFixed(0)} ms CPU; latency p50 ${ms(t.p50)} p99 ${ms(t.p99)} (off ${ms(offRes.p50)} / ${ms(offRes.p99)})`,
        ratio: `${ratio(t.wire, offRes.wire)} bytes`,
        target: t === current ? 'current' : '-',
      })),
    ];
    return rows;
  });
}
