import { describe, expect, it } from 'vitest';
import { DeflatePolicy } from '../../src/transport/stream/deflate-policy.js';

const opts = { floodBytesPerSecond: 1_000_000, congestedBytes: 64 * 1024, windowMs: 250, minBytes: 1024 };

/** Sends `count` frames of `bytes`, `everyMs` apart from `t0`, with `queued` bytes waiting; the decisions. */
function run(p: DeflatePolicy, t0: number, count: number, bytes: number, everyMs: number, queued = 0): boolean[] {
  return Array.from({ length: count }, (_, i) => p.compress(bytes, t0 + i * everyMs, queued));
}

describe('deflate policy', () => {
  it('sends small frames as they are and compresses larger interactive output: a trickle, a burst of a screen redraw', () => {
    const p = new DeflatePolicy(opts);
    expect(run(p, 0, 50, 40, 100).some(Boolean)).toBe(false); // typing echoes: zlib's round trip, for a few bytes
    expect(run(p, 5000, 20, 1023, 100).some(Boolean)).toBe(false);
    expect(run(p, 10_000, 20, 2000, 50).every(Boolean)).toBe(true); // an agent's trickle: 40 KB/s
    expect(run(p, 20_000, 4, 20_000, 5).every(Boolean)).toBe(true); // one 80 KB redraw
  });

  it('sends a flood uncompressed while the socket keeps up, and compresses again when it ends', () => {
    const p = new DeflatePolicy(opts);
    const flood = run(p, 0, 400, 16_384, 5); // ~3.3 MB/s for 2 s
    // Known within the first window, then uncompressed for the rest of the flood.
    expect(flood.slice(0, 10).every(Boolean)).toBe(true);
    expect(flood.slice(20).some(Boolean)).toBe(false);
    // Quiet, then interactive output: compressed (the last window's rate no longer counts).
    expect(p.compress(2000, 2000 + 1000, 0)).toBe(true);
    expect(run(p, 4000, 10, 2000, 100).every(Boolean)).toBe(true);
  });

  it('compresses a flood the socket cannot drain: the network is the bottleneck', () => {
    const p = new DeflatePolicy(opts);
    run(p, 0, 100, 16_384, 5);
    expect(run(p, 500, 50, 16_384, 5, 64 * 1024).every(Boolean)).toBe(true);
    expect(run(p, 750, 50, 16_384, 5, 1000).some(Boolean)).toBe(false);
    // Congested, even an echo is compressed: bytes are what is short.
    expect(p.compress(40, 1100, 64 * 1024)).toBe(true);
  });

  it('text frames: compressed from the size floor or when the socket is congested, and never counted as output', () => {
    const p = new DeflatePolicy(opts);
    expect(p.compressText(200, 0)).toBe(false);
    expect(p.compressText(50_000, 0)).toBe(true);
    expect(p.compressText(200, 64 * 1024)).toBe(true);
    for (let i = 0; i < 100; i++) p.compressText(100_000, 0);
    expect(p.compress(2000, 10, 0)).toBe(true); // no flood was seen
  });
});
