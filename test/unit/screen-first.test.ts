/**
 * A snapshot over a long history goes screen first, and its full frame is encoded once the
 * screen's frame has left (src/stream/stream-client.actor.ts). Meanwhile the stream goes on:
 * what a client receives must still be the full frame, then exactly the bytes after its
 * position, never a live chunk ahead of the frame it continues.
 */
import { describe, expect, it } from 'vitest';
import { ChunkFrames } from '../../src/stream/chunk-frames.js';
import { SCREEN_FIRST_MIN_SAVING, StreamClient, type ClientLink } from '../../src/stream/stream-client.actor.js';
import { PaneStream } from '../../src/stream/pane-stream.js';
import type { TakenSnapshot } from '../../src/machines/resume.machine.js';
import { decodeChunkFrame } from '../../src/protocol/frames.js';

type Received = { snapshot: { seq: number; data: Buffer } } | { chunk: { seq: number; data: Buffer } };

/** A link that records what it was given and lets the test say when each text frame has left. */
function heldLink(): { link: ClientLink; received: Received[]; leave: () => void } {
  const received: Received[] = [];
  const waiting: (() => void)[] = [];
  const link: ClientLink = {
    sendBinary: (frame) => received.push({ chunk: decodeChunkFrame(frame) }),
    sendText: (text, written) => {
      const frame = JSON.parse(text) as { type: string; seq: number; data: string };
      if (frame.type === 'snapshot') received.push({ snapshot: { seq: frame.seq, data: Buffer.from(frame.data, 'base64') } });
      if (written) waiting.push(written);
    },
    bufferedAmount: 0,
    close: () => undefined,
  };
  return { link, received, leave: () => waiting.splice(0).forEach((w) => w()) };
}

const turn = () => new Promise((r) => setImmediate(r));

/** A client of a stream that printed a little; its snapshots are taken from `snaps`, which the test fills. */
function clientWith(): { stream: PaneStream; client: StreamClient; snaps: TakenSnapshot[]; received: Received[]; leave: () => void } {
  const snaps: TakenSnapshot[] = [];
  const stream = new PaneStream({ ringBytes: 1024 * 1024, now: () => Date.UTC(2026, 0, 1) });
  stream.append(Buffer.from('before'));
  stream.flush();
  const { link, received, leave } = heldLink();
  const client = new StreamClient({
    sessionId: 'screen-first',
    stream,
    frames: new ChunkFrames(),
    link,
    snapshot: () => Promise.resolve(snaps.shift()!),
    onReleased: () => undefined,
  });
  return { stream, client, snaps, received, leave };
}

/** A snapshot at `position` whose history outweighs its screen by more than the saving that sends the screen first. */
function longSnapshot(position: number, tag: string): TakenSnapshot {
  return { position, screen: Buffer.from(`screen ${tag}`), data: Buffer.alloc(SCREEN_FIRST_MIN_SAVING + 100, tag) };
}

describe('a snapshot that goes screen first', () => {
  it('sends the full frame once the screen left, then the output that came meanwhile, in order', async () => {
    const { stream, client, snaps, received, leave } = clientWith();
    const position = stream.position;
    snaps.push(longSnapshot(position, 'a'));
    client.resume(null);
    await turn();
    expect(received).toEqual([{ snapshot: { seq: position, data: Buffer.from('screen a') } }]);
    // Output while the screen is on its way: held in the ring, not sent ahead of the full frame.
    stream.append(Buffer.from('meanwhile'));
    stream.flush();
    expect(received).toHaveLength(1);
    leave();
    expect(received).toEqual([
      { snapshot: { seq: position, data: Buffer.from('screen a') } },
      { snapshot: { seq: position, data: longSnapshot(position, 'a').data } },
      { chunk: { seq: position + 'meanwhile'.length, data: Buffer.from('meanwhile') } },
    ]);
    // Live from there on.
    stream.append(Buffer.from('after'));
    stream.flush();
    expect(received.at(-1)).toEqual({ chunk: { seq: position + 'meanwhileafter'.length, data: Buffer.from('after') } });
    expect(client.stateName).toBe('live');
  });

  it('drops a full frame still waiting once a newer snapshot went: the client ends on the newer one', async () => {
    const { stream, client, snaps, received, leave } = clientWith();
    const first = stream.position;
    snaps.push(longSnapshot(first, 'a'));
    client.resume(null);
    await turn();
    stream.append(Buffer.from('more'));
    stream.flush();
    snaps.push(longSnapshot(stream.position, 'b'));
    client.requestSnapshot();
    await turn();
    leave();
    const snapshots = received.flatMap((r) => ('snapshot' in r ? [r.snapshot] : []));
    expect(snapshots.map((s) => s.data.toString('latin1', 0, 8))).toEqual(['screen a', 'screen b', 'bbbbbbbb']);
    expect(snapshots.at(-1)!.seq).toBe(first + 'more'.length);
    expect(received.some((r) => 'chunk' in r)).toBe(false);
    expect(client.stateName).toBe('live');
  });
});
