import fc from 'fast-check';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { epochBase, SEQ_BYTES_PER_MS, SEQ_EPOCH_MS } from '../../src/stream/pane-stream.js';
import { ChunkRing, RING_BLOCK_BYTES, RING_SMALL_CHUNK_BYTES } from '../../src/stream/ring.js';

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

  it('copies small chunks into blocks: every covered position still replays exactly, the caller may reuse its buffer, and a busy ring holds few objects', () => {
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
            pushed.push(Buffer.from(p));
            // The chunk push returned is the ring's newest: what the stream's listeners send.
            expect(chunk.end - chunk.start).toBe(p.length);
            expect(chunk.data.equals(Buffer.from(p))).toBe(true);
            expect(ring.since(chunk.start)).toEqual([chunk]);
            // A small chunk is the ring's copy: the tmux parser's pool, or any caller, may reuse its bytes.
            if (b.length < RING_SMALL_CHUNK_BYTES) b.fill(0xff);
            else expect(chunk.data).toBe(b);
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
    expect(ring.chunkCount).toBeLessThanOrEqual((4 << 20) / RING_BLOCK_BYTES + 2);
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

  it('a ring smaller than a block still keeps to its capacity, and the newest chunk whole', () => {
    const ring = new ChunkRing(100, 0);
    for (let i = 0; i < 30; i++) ring.push(Buffer.alloc(7, i));
    expect(ring.size).toBeLessThanOrEqual(100);
    const tail = Buffer.concat(ring.since(ring.start)!.map((c) => c.data));
    expect(tail.length).toBe(ring.size);
    expect(tail.subarray(-7).equals(Buffer.alloc(7, 29))).toBe(true);
    const big = ring.push(Buffer.alloc(300, 1));
    expect(ring.since(big.start)).toEqual([big]);
    expect(ring.start).toBe(big.start);
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

  it('lets go of a dropped chunk at once, not at the next compaction', async () => {
    // A busy session drops a block every few seconds; compaction comes every 1024 drops. A dropped
    // chunk the list still held kept its bytes alive until then: up to 1024 blocks past the ring's
    // capacity, which showed as the daemon's memory rising for hours (docs/benchmarks.md).
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const ring = new ChunkRing(64 * 1024, 0);
    const pushLarge = (): WeakRef<ArrayBufferLike> => {
      const chunk = Buffer.alloc(RING_SMALL_CHUNK_BYTES * 2, 1); // kept as it is, not copied
      ring.push(chunk);
      return new WeakRef(chunk.buffer);
    };
    const firstBytes = pushLarge();
    for (let i = 0; i < 40; i++) pushLarge();
    expect(ring.start).toBeGreaterThan(RING_SMALL_CHUNK_BYTES * 2); // the first chunk is out of the ring
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
