/**
 * The disk buffer read as positions: segments from the index, the slice one history answer
 * covers (clamped forward, capped, with where to go on), and positions of file offsets,
 * checked against a model of a file built from random runs with gaps between them.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseBufferIndex, positionAt, sliceHistory } from '../../src/history/buffer-index.js';

/** A file of runs: each run's length and the gap in positions before it. */
const runs = fc.array(fc.record({ length: fc.integer({ min: 1, max: 50 }), gap: fc.integer({ min: 1, max: 30 }) }), {
  minLength: 1,
  maxLength: 8,
});

/** The index text and, per file offset, the position of its byte. */
function build(rs: { length: number; gap: number }[]): { index: string; size: number; positions: number[] } {
  const positions: number[] = [];
  let index = '';
  let pos = 1000;
  for (const r of rs) {
    pos += r.gap;
    index += `${positions.length} ${pos}\n`;
    for (let i = 0; i < r.length; i++) positions.push(pos + i);
    pos += r.length;
  }
  return { index, size: positions.length, positions };
}

describe('the buffer index', () => {
  it('maps every file offset to its position, and nothing past the file', () => {
    fc.assert(
      fc.property(runs, (rs) => {
        const { index, size, positions } = build(rs);
        const segs = parseBufferIndex(index, size);
        for (let o = 0; o < size; o++) expect(positionAt(segs, o)).toBe(positions[o]);
        expect(positionAt(segs, size)).toBeNull();
      }),
    );
  });

  it('a slice answers exactly the held positions of the range, in file order, page by page', () => {
    fc.assert(
      fc.property(
        runs,
        fc.integer({ min: 0, max: 1500 }),
        fc.integer({ min: 1, max: 400 }),
        fc.integer({ min: 1, max: 64 }),
        (rs, from, span, cap) => {
          const { index, size, positions } = build(rs);
          const segs = parseBufferIndex(index, size);
          const to = from + span;
          const want = positions.filter((p) => p >= from && p < to);
          const got: number[] = [];
          for (let at: number | null = from; at !== null;) {
            const s = sliceHistory(segs, at, to, cap);
            if (s === null) break;
            expect(s.bytes).toBeLessThanOrEqual(cap);
            expect(s.to - s.from).toBe(s.bytes);
            for (let i = 0; i < s.bytes; i++) got.push(positions[s.offset + i]!);
            at = s.next;
          }
          expect(got).toEqual(want);
        },
      ),
    );
  });

  it('ignores index lines that would claim bytes twice, go backwards, or point past the file', () => {
    const segs = parseBufferIndex('0 100\n5 103\n10 300\n8 400\nnonsense\n99 500\n', 20);
    // "5 103" would give positions 103..104 twice: dropped; "8 400" goes back in the file; 99 is past it.
    expect(segs).toEqual([
      { offset: 0, start: 100, length: 10 },
      { offset: 10, start: 300, length: 10 },
    ]);
    expect(sliceHistory(segs, 0, 1e9, 1e9)).toMatchObject({ from: 100, to: 110, next: 300 });
    expect(sliceHistory(segs, 310, 1e9, 1e9)).toBeNull();
  });
});
