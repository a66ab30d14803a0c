import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { epochBase, SEQ_BYTES_PER_MS, SEQ_EPOCH_MS } from '../../src/stream/pane-stream.js';
import { ChunkRing, RING_BLOCK_CHUNKS } from '../../src/stream/ring.js';

describe('ChunkRing', () => {
  it('replays exactly the bytes after any covered position, mid-chunk included', () => {
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ minLength: 1, maxLength: 50 }), { minLength: 1, maxLength: 40 }), fc.nat(), (parts, pick) => {
        const ring = new ChunkRing(1 << 20, 1000);
        const all = Buffer.concat(parts.map((p) => Buffer.from(p)));
        for (const p of parts) ring.push(Buffer.from(p));
        const offset = pick % (all.length + 1);
        const got = ring.since(1000 + offset);
        expect(got).not.toBeNull();
        expect(Buffer.concat(got!.map((c) => c.data)).equals(all.subarray(offset))).toBe(true);
        let pos = 1000 + offset;
        for (const c of got!) {
          expect(c.start).toBe(pos);
          pos = c.end;
        }
        expect(pos).toBe(ring.end);
      }),
    );
  });

  it('joins older chunks into blocks: every covered position still replays exactly, and a busy ring holds few objects', () => {
    fc.assert(
      fc.property(
        // Mostly an agent's small chunks, now and then a flood's large one (kept as it is).
        fc.array(
          fc.oneof(
            { arbitrary: fc.uint8Array({ minLength: 1, maxLength: 300 }), weight: 20 },
            { arbitrary: fc.uint8Array({ minLength: 4000, maxLength: 6000 }), weight: 1 },
          ),
          { minLength: 1, maxLength: 600 },
        ),
        fc.integer({ min: 256, max: 40_000 }),
        fc.array(fc.nat(), { minLength: 1, maxLength: 5 }),
        (parts, capacity, picks) => {
          const ring = new ChunkRing(capacity, 7);
          const pushed: Buffer[] = [];
          for (const p of parts) {
            const b = Buffer.from(p);
            const chunk = ring.push(b);
            pushed.push(b);
            // The chunk push returned is the ring's newest, as it is: the stream's listeners send that one.
            expect(chunk.data).toBe(b);
            expect(ring.since(chunk.start)).toEqual([chunk]);
          }
          const all = Buffer.concat(pushed);
          expect(ring.size).toBeLessThanOrEqual(Math.max(capacity, pushed[pushed.length - 1]!.length));
          expect(ring.end).toBe(7 + all.length);
          for (const pick of picks) {
            const position = ring.start + (pick % (ring.end - ring.start + 1));
            const got = ring.since(position)!;
            let pos = position;
            for (const c of got) {
              expect(c.start).toBe(pos);
              expect(c.end).toBe(c.start + c.data.length);
              pos = c.end;
            }
            expect(pos).toBe(ring.end);
            expect(Buffer.concat(got.map((c) => c.data)).equals(all.subarray(position - 7))).toBe(true);
          }
          expect(ring.since(ring.start - 1)).toBeNull();
        },
      ),
    );
    // An agent's output: a small chunk per turn. A full 4 MB ring holds blocks, not 100 000 chunks.
    const ring = new ChunkRing(4 << 20, 0);
    for (let i = 0; i < 100_000; i++) ring.push(Buffer.from(`\x1b[3${i % 7}m● step ${i}\x1b[0m a line of a tool result\r\n`));
    expect(ring.size).toBeGreaterThan(3 << 20);
    expect(ring.chunkCount).toBeLessThan(4 * 16 + RING_BLOCK_CHUNKS + 1);
  });

  it('bounds memory and refuses positions it no longer covers, or that are in the future', () => {
    const ring = new ChunkRing(100, 0);
    for (let i = 0; i < 50; i++) ring.push(Buffer.alloc(10, i));
    expect(ring.size).toBeLessThanOrEqual(100);
    expect(ring.since(0)).toBeNull();
    expect(ring.since(ring.start)).not.toBeNull();
    expect(ring.since(ring.end + 1)).toBeNull();
    expect(ring.since(ring.end)).toEqual([]);
  });

  it('reset starts a new epoch: nothing before it is covered', () => {
    const ring = new ChunkRing(1000, 0);
    ring.push(Buffer.from('abc'));
    ring.reset(500);
    expect(ring.since(3)).toBeNull();
    ring.push(Buffer.from('de'));
    expect(Buffer.concat(ring.since(500)!.map((c) => c.data)).toString()).toBe('de');
  });
});

describe('epochBase', () => {
  it('is above every earlier position and below 2^53 for decades', () => {
    const now = Date.UTC(2026, 10, 22);
    expect(epochBase(now, 0)).toBe((now - SEQ_EPOCH_MS) * SEQ_BYTES_PER_MS);
    expect(epochBase(now, 10 ** 15)).toBe(10 ** 15 + 1);
    expect(Number.isSafeInteger(epochBase(Date.UTC(2059, 0, 1), 0))).toBe(true);
  });

  it('a restart after an hour of the fastest tmux output still starts above it', () => {
    const t0 = Date.UTC(2026, 0, 1);
    const base = epochBase(t0, 0);
    const written = 5e6 * 3600; // 5 MB/s for an hour
    expect(epochBase(t0 + 3600 * 1000, 0)).toBeGreaterThan(base + written);
  });
});
