import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { epochBase, SEQ_BYTES_PER_MS, SEQ_EPOCH_MS } from '../../src/stream/pane-stream.js';
import { ChunkRing } from '../../src/stream/ring.js';

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
