/**
 * A catch-up from the ring (a resume's delta) goes out as the client's queue drains, not all at
 * once (src/stream/stream-client.actor.ts `CATCH_UP_QUEUE_BYTES`): a phone on a cellular link that
 * resumes a full ring must not have megabytes of frames held for it in the daemon. What it gets
 * must still be exactly the bytes after its position, then the live output, in order; and if the
 * ring moves past what it holds meanwhile, a snapshot, never wrong bytes.
 */
import { describe, expect, it } from 'vitest';
import { ChunkFrames } from '../../src/stream/chunk-frames.js';
import { CATCH_UP_QUEUE_BYTES, StreamClient, type ClientLink } from '../../src/stream/stream-client.actor.js';
import { PaneStream } from '../../src/stream/pane-stream.js';
import { RING_PIECE_BYTES } from '../../src/stream/ring.js';
import type { TakenSnapshot } from '../../src/machines/resume.machine.js';
import { decodeChunkFrame } from '../../src/protocol/frames.js';

type Received = { snapshot: number } | { chunk: { seq: number; data: Buffer } };

/** A socket whose queue holds what it was given until the test drains it. */
function slowLink(): { link: ClientLink; received: Received[]; drain: () => void; most: () => number } {
  const received: Received[] = [];
  let queued = 0;
  let most = 0;
  let waiting: (() => void)[] = [];
  const hold = (bytes: number, written?: () => void) => {
    queued += bytes;
    most = Math.max(most, queued);
    if (written) waiting.push(written);
  };
  const link: ClientLink = {
    sendBinary: (frame, written) => {
      received.push({ chunk: decodeChunkFrame(frame) });
      hold(frame.length, written);
    },
    sendText: (text, written) => {
      const frame = JSON.parse(text) as { type: string; seq: number };
      if (frame.type === 'snapshot') received.push({ snapshot: frame.seq });
      hold(text.length, written);
    },
    get bufferedAmount() {
      return queued;
    },
    close: () => undefined,
  };
  const drain = () => {
    queued = 0;
    const now = waiting;
    waiting = [];
    for (const w of now) w();
  };
  return { link, received, drain, most: () => most };
}

const turn = () => new Promise((r) => setImmediate(r));

/** Output of `bytes` bytes in lines, flushed as chunks of a few KiB. */
function print(stream: PaneStream, bytes: number, tag: string): Buffer {
  const all = Buffer.from(
    Array.from({ length: Math.ceil(bytes / 40) }, (_, i) => `${tag} line ${i} of the output\r\n`.padEnd(40, '.')).join(''),
  ).subarray(0, bytes);
  for (let at = 0; at < all.length; at += 3000) {
    stream.append(all.subarray(at, at + 3000));
    stream.flush();
  }
  return all;
}

function setUp(ringBytes: number) {
  const stream = new PaneStream({ ringBytes, now: () => Date.UTC(2026, 0, 1) });
  const snaps: TakenSnapshot[] = [];
  const { link, received, drain, most } = slowLink();
  const client = new StreamClient({
    sessionId: 'paced',
    stream,
    frames: new ChunkFrames(),
    link,
    snapshot: () => Promise.resolve(snaps.shift()!),
    onReleased: () => undefined,
  });
  return { stream, client, snaps, received, drain, most };
}

/** The chunks received, checked to continue each other from `from`; their bytes. */
function bytesFrom(received: Received[], from: number): Buffer {
  let at = from;
  const parts: Buffer[] = [];
  for (const r of received) {
    if (!('chunk' in r)) throw new Error(`expected only chunks, got ${JSON.stringify(r)}`);
    expect(r.chunk.seq).toBe(at + r.chunk.data.length);
    at = r.chunk.seq;
    parts.push(r.chunk.data);
  }
  return Buffer.concat(parts);
}

describe('a catch-up from the ring', () => {
  it('goes out as the queue drains, exactly, and the live output follows it in order', async () => {
    const { stream, client, received, drain, most } = setUp(4 << 20);
    print(stream, 1000, 'old');
    const lastSeq = stream.position;
    const delta = print(stream, 1_500_000, 'delta');
    client.resume(lastSeq);
    await turn();
    // At first only what fits the queue: not the 1.5 MB of the delta.
    expect(bytesFrom(received, lastSeq).length).toBeLessThanOrEqual(CATCH_UP_QUEUE_BYTES);
    expect(received.length).toBeGreaterThan(0);
    // Output meanwhile waits in the ring behind the delta.
    const live = print(stream, 5000, 'live');
    let drains = 0;
    while (bytesFrom(received, lastSeq).length < delta.length + live.length && drains < 100) {
      drain();
      drains++;
    }
    expect(bytesFrom(received, lastSeq).equals(Buffer.concat([delta, live]))).toBe(true);
    expect(drains).toBeGreaterThanOrEqual(Math.floor(delta.length / CATCH_UP_QUEUE_BYTES));
    expect(most()).toBeLessThanOrEqual(CATCH_UP_QUEUE_BYTES + RING_PIECE_BYTES + 64);
    // Live from there on: a chunk goes out the turn it comes.
    drain();
    await turn();
    expect(client.stateName).toBe('live');
    const after = print(stream, 100, 'after');
    expect(bytesFrom(received, lastSeq).equals(Buffer.concat([delta, live, after]))).toBe(true);
  });

  it('that the ring overtakes while it waits ends in a snapshot, never in bytes that do not continue the client', async () => {
    const { stream, client, snaps, received, drain } = setUp(1 << 20);
    print(stream, 1000, 'old');
    const lastSeq = stream.position;
    print(stream, 900_000, 'delta');
    client.resume(lastSeq);
    await turn();
    const sent = received.length;
    expect(sent).toBeGreaterThan(0);
    // A flood while the phone reads slowly: the ring moves past the client's position.
    print(stream, 1 << 20, 'flood');
    const position = stream.position;
    snaps.push({ position, screen: Buffer.from('screen'), data: Buffer.from('screen') });
    drain();
    await turn();
    await turn();
    const after = received.slice(sent);
    expect(after).toContainEqual({ snapshot: position });
    // Every chunk before the snapshot continued the client's position.
    bytesFrom(
      received.slice(
        0,
        received.findIndex((r) => 'snapshot' in r),
      ),
      lastSeq,
    );
  });
});
