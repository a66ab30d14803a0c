/**
 * Network faults against a real daemon: clients that connect and drop in a loop (1000 times),
 * that vanish without a close, that send huge, fragmented or broken frames. Memory and file
 * descriptors stay bounded, and a client that behaves keeps working through all of it, its
 * screen equal to tmux's.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { Mirror } from '../helpers/stream.js';
import { eventually } from '../helpers/tmux.js';
import { useDaemon } from '../helpers/daemon-fixture.js';

const fds = (pid: number) => readdirSync(`/proc/${pid}/fd`).length;
const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;

describe('network faults', () => {
  // Pings every second, so that a client that stops answering is seen within seconds.
  const fx = useDaemon(`[agent]\ncommand = "/bin/sh"\ndefault_session = "net"\n[stream]\nping_interval_s = 1\n`);
  let good: Mirror;
  let baseline: { fds: number; rss: number };

  beforeAll(async () => {
    good = fx.mirror('net');
    await eventually(() => good.kinds().includes('snapshot'), 15_000);
    // Warm up the paths the faults will take, then take the baseline.
    for (let i = 0; i < 20; i++) await connectAndDrop(i);
    await new Promise((r) => setTimeout(r, 300));
    baseline = { fds: fds(fx.d.child.pid!), rss: rssMb(fx.d.child.pid!) };
  }, 30_000);

  const wsUrl = () => `${fx.d.base.replace(/^http/, 'ws')}/sessions/net/stream`;
  const auth = () => ({ headers: { authorization: `Bearer ${fx.d.token}` } });

  /** Opens a stream, asks to resume, and drops the TCP connection without a close frame. */
  function connectAndDrop(i: number): Promise<void> {
    return new Promise((resolve) => {
      const ws = new WebSocket(wsUrl(), auth());
      ws.on('error', () => undefined);
      ws.on('open', () => {
        ws.send(JSON.stringify({ type: 'resume', lastSeq: i % 2 === 0 ? null : 1 }));
        const drop = () => {
          ws.terminate();
          resolve();
        };
        if (i % 3 === 0) drop();
        else setTimeout(drop, i % 5);
      });
      ws.on('close', () => resolve());
    });
  }

  async function goodStillWorks(tag: string): Promise<void> {
    good.stream.sendKeys(`echo ${tag}-$((6*7))\r`);
    await eventually(async () => (await good.text()).includes(`${tag}-42`), 15_000);
    const captured = (await fx.tmux.tmux('capture-pane', '-p', '-t', '=net:'))
      .split('\n')
      .slice(0, 40)
      .map((l) => l.trimEnd());
    await eventually(async () => {
      const text = (await good.screen()).text.map((l) => l.trimEnd());
      return JSON.stringify(text) === JSON.stringify(captured.concat(Array(40).fill('')).slice(0, 40));
    }, 15_000);
  }

  it('survives 1000 connect-and-drop cycles with bounded memory and no leaked descriptors', async () => {
    for (let batch = 0; batch < 50; batch++) {
      await Promise.all(Array.from({ length: 20 }, (_, k) => connectAndDrop(batch * 20 + k)));
      if (batch % 10 === 0) good.stream.sendKeys(`echo loop-${batch}\r`);
    }
    const pid = fx.d.child.pid!;
    await eventually(() => fds(pid) <= baseline.fds + 5, 15_000, 100);
    expect(rssMb(pid) - baseline.rss).toBeLessThan(60);
    const health = (await (await fx.d.get('/health')).json()) as { clients: number };
    expect(health.clients).toBe(1);
    await goodStillWorks('after-loop');
  }, 120_000);

  it('drops clients that go silent mid-handshake or send garbage on the raw socket', async () => {
    const host = new URL(fx.d.base);
    const sockets: Socket[] = [];
    for (let i = 0; i < 30; i++) {
      const s = connect(Number(host.port), host.hostname);
      s.on('error', () => undefined);
      // Half a request, then nothing (a phone that went under a bridge).
      s.write(
        i % 2 === 0
          ? `GET /sessions/net/stream HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n`
          : '\x16\x03\x01\x00\xff garbage \x00\xff\r\n\r\n',
      );
      sockets.push(s);
    }
    await goodStillWorks('half-open');
    for (const s of sockets) s.destroy();
    await eventually(() => fds(fx.d.child.pid!) <= baseline.fds + 5, 15_000, 100);
  });

  it('cuts off an open stream that stops answering pings (the peer vanished without a close)', async () => {
    const clients = async () => ((await (await fx.d.get('/health')).json()) as { clients: number }).clients;
    const before = await clients();
    // A peer whose side of the connection is gone: it never answers a ping again.
    const silent = new WebSocket(wsUrl(), { ...auth(), autoPong: false });
    silent.on('error', () => undefined);
    const closed = new Promise<number>((r) => silent.once('close', (code) => r(code)));
    await new Promise((r) => silent.once('open', r));
    silent.send(JSON.stringify({ type: 'resume', lastSeq: null }));
    await eventually(async () => (await clients()) === before + 1, 15_000, 50);
    // Terminated, not closed politely: the peer could not take part in a closing handshake.
    expect(await closed).toBe(1006);
    await eventually(async () => (await clients()) === before, 15_000, 50);
    await goodStillWorks('silent');
  });

  it('closes a socket that sends a frame over the limit with 1009, and accepts a fragmented one under it', async () => {
    const big = new WebSocket(wsUrl(), auth());
    big.on('error', () => undefined);
    await new Promise((r) => big.once('open', r));
    const closed = new Promise<number>((r) => big.once('close', (code) => r(code)));
    big.send(JSON.stringify({ type: 'keys', data: 'x'.repeat(3 * 1024 * 1024) }));
    expect(await closed).toBe(1009);

    const frag = new WebSocket(wsUrl(), auth());
    frag.on('error', () => undefined);
    const texts: { type: string; code?: string }[] = [];
    frag.on('message', (m, bin) => !bin && texts.push(JSON.parse((m as Buffer).toString('utf8')) as { type: string }));
    await new Promise((r) => frag.once('open', r));
    const msg = JSON.stringify({ type: 'keys', data: 'echo fragments-$((2*21))\r' });
    const third = Math.floor(msg.length / 3);
    frag.send(msg.slice(0, third), { fin: false });
    frag.send(msg.slice(third, 2 * third), { fin: false });
    frag.send(msg.slice(2 * third), { fin: true });
    await eventually(async () => (await fx.tmux.capture('=net:')).includes('fragments-42'), 15_000);
    expect(texts.filter((t) => t.type === 'error')).toEqual([]);

    // Invalid UTF-8 in a text frame: the protocol's own close (1007), nothing else disturbed.
    const bad = new WebSocket(wsUrl(), auth());
    bad.on('error', () => undefined);
    await new Promise((r) => bad.once('open', r));
    const badClosed = new Promise<number>((r) => bad.once('close', (code) => r(code)));
    // A masked final text frame of two bytes that are not UTF-8, written below the library.
    (bad as unknown as { _socket: Socket })._socket.write(Buffer.from([0x81, 0x82, 0, 0, 0, 0, 0xc3, 0x28]));
    expect(await badClosed).toBe(1007);
    frag.close();
    await goodStillWorks('frames');
  });
});
