/**
 * A client that stops reading while the pane floods: the daemon drops it to `behind` instead of
 * queueing output for it, sends it none of what flows while it is behind, and when the client
 * reads again it gets a snapshot and then live output.
 *
 * The flood runs in rounds of 1 MiB until the daemon reports the client behind, then a marker
 * line and three high watermarks more: output the daemon would have had to hold had it kept
 * queueing. What the client is sent before its resync snapshot holds no byte of the marker,
 * and is no more than the rounds that ran until it was behind. (Positions alone cannot say
 * so: a daemon that reads tmux too slowly, on a busy machine, has its output paused by tmux,
 * and the position then jumps by less than what the pane printed.) How much memory the daemon
 * holds through a 200 MB flood with a client that never reads is measured by `npm run bench`
 * (bench/soak.bench.ts, docs/benchmarks.md), not checked here.
 */
import type { Socket } from 'node:net';
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { decodeChunkFrame } from '../../src/protocol/frames.js';
import { DEFAULT_WATERMARKS } from '../../src/stream/queue-lag.js';
import { logTailOf } from '../helpers/daemon.js';
import { useDaemon } from '../helpers/daemon-fixture.js';
import { screenOf } from '../helpers/screen.js';
import { eventually } from '../helpers/tmux.js';

/** Output after the client fell behind: three times the queue a client may have before it is dropped. */
const AFTER_BEHIND_BYTES = 3 * DEFAULT_WATERMARKS.high;
/** A round of the flood as the pane prints it, at most: 1 MiB of base64 in lines of 100, each ending in CR LF. */
const ROUND_MAX_BYTES = 1024 * 1024 + 2 * Math.ceil((1024 * 1024) / 100);
/** Printed once the client is behind, before the rest of the flood. */
const MARK = 'BEHIND-$((2+2))-MARK';
const MARK_SEEN = 'BEHIND-4-MARK';

type Received = { kind: 'text'; frame: { type: string; seq?: number; data?: string } } | { kind: 'binary'; seq: number; data: Buffer };

describe('a client that never reads', () => {
  // A paused reader cannot answer pings; on a slow machine the flood outlasts the pong deadline,
  // which would (rightly) close the socket. Here the client is slow, not gone.
  const fx = useDaemon(`[agent]\ncommand = "/bin/sh"\ndefault_session = "flood"\n[stream]\nping_interval_s = 600\n`);
  // Registered after the fixture, so it runs before the daemon is killed.
  afterAll(() => {
    if (process.env.FLOOD_DEBUG)
      console.log(
        fx.d
          .stderr()
          .split('\n')
          .filter((l) => /stream client|snapshot|pause|gap/.test(l))
          .slice(-40)
          .join('\n'),
      );
  });

  it('is dropped to behind instead of queued for, is sent nothing of what flows meanwhile, then resyncs with a snapshot', async () => {
    const { d, tmux } = fx;
    const ws = new WebSocket(`${d.base.replace(/^http/, 'ws')}/sessions/flood/stream`, { headers: { authorization: `Bearer ${d.token}` } });
    const frames: Received[] = [];
    ws.on('message', (data, isBinary) => {
      const buf = data as Buffer;
      if (isBinary) frames.push({ kind: 'binary', ...decodeChunkFrame(buf) });
      else frames.push({ kind: 'text', frame: JSON.parse(buf.toString('utf8')) as { type: string } });
    });
    await new Promise((r) => ws.once('open', r));
    ws.send(JSON.stringify({ type: 'resume', lastSeq: null }));
    await eventually(() => frames.some((f) => f.kind === 'text' && f.frame.type === 'snapshot'), 15_000, 25, 'the first snapshot');

    // Stop reading: the socket's data stays in the kernel and then in the daemon's send buffer.
    const raw = (ws as unknown as { _socket: Socket })._socket;
    raw.pause();
    // Random text, so that compression cannot make the flood small (base64: 4 bytes out per 3 in),
    // in megabyte rounds until the test says the client is behind, then AFTER_BEHIND_BYTES more.
    const behindFile = join(fx.home.dir, 'client-behind');
    const rounds = `i=0; while [ ! -e '${behindFile}' ] && [ $i -lt 400 ]; do head -c 786432 /dev/urandom | base64 -w 100; i=$((i+1)); done`;
    const more = `echo ${MARK}; head -c ${Math.ceil((AFTER_BEHIND_BYTES * 3) / 4)} /dev/urandom | base64 -w 100`;
    await tmux.tmux('send-keys', '-t', '=flood:', '-l', `${rounds}; ${more}; echo FLOOD-$((1+1))DONE-$i-ROUNDS`);
    await tmux.tmux('send-keys', '-t', '=flood:', 'Enter');

    const clientState = async () => {
      const health = (await (await d.get('/health')).json()) as {
        connections: { session: string; kind: string; state: string | null; behind: boolean; bytesSent: number }[];
      };
      return health.connections.find((c) => c.session === 'flood' && c.kind === 'stream');
    };
    await eventually(
      async () => (await clientState())?.behind === true,
      180_000,
      100,
      'the daemon reporting the paused client behind',
    ).catch((err: Error) => {
      throw new Error(`${err.message}\n${logTailOf(d)}`);
    });
    writeFileSync(behindFile, '');
    // What the kernel had taken for the socket when it fell behind.
    const takenWhenBehind = (await clientState())!.bytesSent;
    const done = await eventually(
      async () => /FLOOD-2DONE-(\d+)-ROUNDS/.exec(await tmux.capture('=flood:')),
      180_000,
      250,
      'the flood to end',
    );
    const roundsRun = Number(done![1]);
    // Still open: it is slow, not gone. And still behind, unless the kernel's socket buffers took
    // in its queue meanwhile (the daemon sees only its own queue drain): then it was resynced into
    // them, a snapshot it reads before anything after it. Never resynced while nothing drained.
    const now = await clientState();
    expect(now, 'the paused client still connected').toBeDefined();
    expect(
      now!.behind || now!.bytesSent > takenWhenBehind,
      `behind, or drained: state ${now!.state}, the kernel had taken ${takenWhenBehind} bytes, now ${now!.bytesSent}`,
    ).toBe(true);

    const before = frames.length;
    raw.resume();
    await eventually(
      () => frames.slice(before).some((f) => f.kind === 'text' && f.frame.type === 'snapshot'),
      20_000,
      50,
      'the resync snapshot',
    );
    // What it was sent before the snapshot is what was queued before it fell behind: nothing of
    // what flowed after (the marker and the 48 MiB behind it), no more than the rounds that ran
    // until then; the snapshot comes from past all of it.
    const at = frames.findIndex((f, i) => i >= before && f.kind === 'text' && f.frame.type === 'snapshot');
    const firstSnapshot = frames.findIndex((f) => f.kind === 'text' && f.frame.type === 'snapshot');
    const sent = Buffer.concat(frames.slice(firstSnapshot, at).flatMap((f) => (f.kind === 'binary' ? [f.data] : [])));
    expect(sent.includes(MARK_SEEN)).toBe(false);
    expect(sent.length).toBeLessThanOrEqual(roundsRun * ROUND_MAX_BYTES + 64 * 1024);
    const snapshotSeq = (frames[at] as { frame: { seq: number } }).frame.seq;
    const lastChunk = frames.slice(0, at).findLast((f) => f.kind === 'binary') as { seq: number; data: Buffer } | undefined;
    expect(snapshotSeq).toBeGreaterThan(lastChunk ? lastChunk.seq : 0);

    await tmux.tmux('send-keys', '-t', '=flood:', '-l', 'echo after-$((5*5))');
    await tmux.tmux('send-keys', '-t', '=flood:', 'Enter');
    // Its screen, from the last snapshot and the chunks after it, shows the new output.
    await eventually(
      async () => {
        const last = frames.map((f) => f.kind === 'text' && f.frame.type === 'snapshot').lastIndexOf(true);
        const parts = frames
          .slice(last)
          .map((f) =>
            f.kind === 'binary' ? f.data : f.frame.type === 'snapshot' ? Buffer.from(f.frame.data!, 'base64') : Buffer.alloc(0),
          );
        const screen = await screenOf(parts);
        return screen.text.join('\n').includes('after-25') && screen.text.join('\n').includes('FLOOD-2DONE');
      },
      20_000,
      200,
      'the new output on the resynced screen',
    );
    ws.close();
  }, 300_000);
});
