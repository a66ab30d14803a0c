import fc from 'fast-check';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { epochBase, SEQ_BYTES_PER_MS, SEQ_EPOCH_MS } from '../../src/stream/pane-stream.js';
import { ChunkRing, RING_PIECE_BYTES } from '../../src/stream/ring.js';

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

  it('writes round one allocation: every covered position still replays exactly, the caller may reuse its buffer, the chunk handed out is the bytes pushed', () => {
    fc.assert(
      fc.property(
        // Mostly an agent's small chunks, now and then a flood's large one (larger than some rings).
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
            pushed.push(Buffer.from(p));
            // The chunk push returned is the ring's newest: what the stream's listeners send.
            expect(chunk.end - chunk.start).toBe(p.length);
            expect(chunk.end).toBe(ring.end);
            // The tmux parser's pool, or any caller, may reuse its bytes at once.
            b.fill(0xff);
            expect(chunk.data.equals(Buffer.from(p))).toBe(true);
            // What the ring still holds of it replays as those bytes.
            const kept = Buffer.concat(ring.since(Math.max(chunk.start, ring.start))!.map((c) => c.data));
            expect(kept.equals(Buffer.from(p).subarray(p.length - kept.length))).toBe(true);
          }
          const all = Buffer.concat(pushed);
          expect(ring.size).toBe(Math.min(capacity, all.length));
          expect(ring.end).toBe(7 + all.length);
          for (const pick of picks) {
            const position = ring.start + (pick % (ring.end - ring.start + 1));
            const got = ring.since(position)!;
            let pos = position;
            for (const c of got) {
              expect(c.start).toBe(pos);
              expect(c.end).toBe(c.start + c.data.length);
              expect(c.data.length).toBeLessThanOrEqual(RING_PIECE_BYTES);
              pos = c.end;
            }
            expect(pos).toBe(ring.end);
            expect(Buffer.concat(got.map((c) => c.data)).equals(all.subarray(position - 7))).toBe(true);
          }
          expect(ring.since(ring.start - 1)).toBeNull();
        },
      ),
    );
  });

  it("keeps its bytes in one allocation of its capacity for its whole life, so a session's ring is given back whole", () => {
    // An agent's output: a small chunk per turn, a flood's large ones now and then. Blocks made and
    // freed among the output path's short-lived buffers left the main malloc arena a megabyte
    // higher at each session replaced (docs/benchmarks.md "Days without a restart").
    const ring = new ChunkRing(4 << 20, 0);
    expect(ring.memory).toBeNull(); // a session that never printed holds nothing
    ring.push(Buffer.from('$ '));
    const memory = ring.memory;
    expect(memory?.buffer.byteLength).toBe(4 << 20);
    const all: Buffer[] = [];
    for (let i = 0; i < 100_000; i++) {
      const b =
        i % 5000 === 4999 ? Buffer.alloc(200_000, i % 251) : Buffer.from(`\x1b[3${i % 7}m● step ${i}\x1b[0m a line of a tool result\r\n`);
      all.push(b);
      ring.push(b);
      expect(ring.memory).toBe(memory);
    }
    const tail = Buffer.concat(all).subarray(-(4 << 20));
    expect(ring.size).toBe(4 << 20);
    const got = ring.since(ring.start)!;
    for (const c of got) expect(c.data.buffer).toBe(memory!.buffer);
    expect(Buffer.concat(got.map((c) => c.data)).equals(tail)).toBe(true);
    ring.reset(ring.end + 10);
    ring.push(Buffer.from('after a gap'));
    expect(ring.memory).toBe(memory);
  });

  it("takes a turn's parts as one chunk, the same bytes as their concatenation, small or large", () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(fc.uint8Array({ minLength: 1, maxLength: 3000 }), { minLength: 1, maxLength: 4 }), {
          minLength: 1,
          maxLength: 30,
        }),
        (turns) => {
          const ring = new ChunkRing(1 << 20, 42);
          const all: Buffer[] = [];
          for (const turn of turns) {
            const parts = turn.map((p) => Buffer.from(p));
            const joined = Buffer.concat(parts);
            const chunk = ring.pushParts(parts, joined.length);
            expect(chunk.start).toBe(ring.end - joined.length);
            expect(chunk.data.equals(joined)).toBe(true);
            all.push(joined);
          }
          expect(Buffer.concat(ring.since(42)!.map((c) => c.data)).equals(Buffer.concat(all))).toBe(true);
        },
      ),
    );
  });

  it('keeps the newest bytes of a chunk larger than the ring, and hands the whole chunk to its listeners', () => {
    const ring = new ChunkRing(100, 0);
    for (let i = 0; i < 30; i++) ring.push(Buffer.alloc(7, i));
    expect(ring.size).toBe(100);
    const tail = Buffer.concat(ring.since(ring.start)!.map((c) => c.data));
    expect(tail.length).toBe(100);
    expect(tail.subarray(-7).equals(Buffer.alloc(7, 29))).toBe(true);
    const bytes = Buffer.from(Array.from({ length: 300 }, (_, i) => i % 256));
    const big = ring.pushParts([bytes.subarray(0, 150), bytes.subarray(150)], 300);
    expect(big.data.equals(bytes)).toBe(true);
    expect(ring.start).toBe(big.end - 100);
    expect(ring.since(big.start)).toBeNull();
    expect(Buffer.concat(ring.since(ring.start)!.map((c) => c.data)).equals(bytes.subarray(200))).toBe(true);
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

  it("keeps none of the caller's buffers: a flood's chunk is let go once its turn is over", async () => {
    // A flood's chunks come as slices of the tmux parser's pool. A ring that kept them kept the
    // pools, past its capacity until they were dropped (docs/benchmarks.md "Days without a restart").
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const ring = new ChunkRing(64 * 1024, 0);
    const pushLarge = (): WeakRef<ArrayBufferLike> => {
      const chunk = Buffer.alloc(8192, 1);
      ring.push(chunk);
      return new WeakRef(chunk.buffer);
    };
    const firstBytes = pushLarge();
    pushLarge();
    expect(ring.since(0)).not.toBeNull(); // the first chunk's bytes are still in the ring
    await new Promise((resolve) => setImmediate(resolve)); // a WeakRef's target is kept for the job that made it
    gc();
    expect(firstBytes.deref()).toBeUndefined();
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
