/**
 * A client that stops reading while 200 MB flow through the pane: the daemon's memory stays
 * bounded (the client is dropped to `behind` instead of being buffered for), and when the
 * client reads again it gets a snapshot and then live output.
 */
import { readFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { useDaemon } from '../helpers/daemon-fixture.js';
import { screenOf } from '../helpers/screen.js';
import { eventually } from '../helpers/tmux.js';

const FLOOD_BYTES = Number(process.env.FLOOD_BYTES ?? 200_000_000);

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return kb / 1024;
}

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

  it('keeps daemon memory bounded through a 200 MB flood, then resyncs the client with a snapshot', async () => {
    const { d, tmux } = fx;
    const ws = new WebSocket(`${d.base.replace(/^http/, 'ws')}/sessions/flood/stream`, { headers: { authorization: `Bearer ${d.token}` } });
    const frames: ({ kind: 'text'; frame: { type: string; seq?: number; data?: string } } | { kind: 'binary'; data: Buffer })[] = [];
    ws.on('message', (data, isBinary) => {
      if (isBinary) frames.push({ kind: 'binary', data: data as Buffer });
      else frames.push({ kind: 'text', frame: JSON.parse((data as Buffer).toString('utf8')) as { type: string } });
    });
    await new Promise((r) => ws.once('open', r));
    ws.send(JSON.stringify({ type: 'resume', lastSeq: null }));
    await eventually(() => frames.some((f) => f.kind === 'text' && f.frame.type === 'snapshot'), 15_000);

    // Stop reading: the socket's data stays in the kernel and then in the daemon's send buffer.
    const raw = (ws as unknown as { _socket: Socket })._socket;
    raw.pause();
    const pid = d.child.pid!;
    const baseline = rssMb(pid);
    let peak = baseline;
    const sampler = setInterval(() => (peak = Math.max(peak, rssMb(pid))), 200);
    try {
      // Random text, so that compression cannot make the flood small (base64: 4 bytes out per 3 in).
      await tmux.tmux(
        'send-keys',
        '-t',
        '=flood:',
        '-l',
        `head -c ${Math.round((FLOOD_BYTES * 3) / 4)} /dev/urandom | base64 -w 100; echo FLOOD-$((1+1))DONE`,
      );
      await tmux.tmux('send-keys', '-t', '=flood:', 'Enter');
      await eventually(async () => (await tmux.capture('=flood:')).includes('FLOOD-2DONE'), 180_000, 500);
    } finally {
      clearInterval(sampler);
    }
    const growth = peak - baseline;
    // A client buffered without bound would hold most of the 200 MB; the ring (4 MB), the
    // high watermark (16 MiB) and the socket buffers are all that may stay.
    expect(growth).toBeLessThan(100);

    const before = frames.length;
    raw.resume();
    await eventually(() => frames.slice(before).some((f) => f.kind === 'text' && f.frame.type === 'snapshot'), 20_000, 50);
    await tmux.tmux('send-keys', '-t', '=flood:', '-l', 'echo after-$((5*5))');
    await tmux.tmux('send-keys', '-t', '=flood:', 'Enter');
    // Its screen, from the last snapshot and the chunks after it, shows the new output.
    await eventually(
      async () => {
        const at = frames.map((f) => f.kind === 'text' && f.frame.type === 'snapshot').lastIndexOf(true);
        const parts = frames
          .slice(at)
          .map((f) =>
            f.kind === 'binary' ? f.data.subarray(8) : f.frame.type === 'snapshot' ? Buffer.from(f.frame.data!, 'base64') : Buffer.alloc(0),
          );
        const screen = await screenOf(parts);
        return screen.text.join('\n').includes('after-25') && screen.text.join('\n').includes('FLOOD-2DONE');
      },
      20_000,
      200,
    );
    ws.close();
  }, 240_000);
});
