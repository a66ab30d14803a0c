import fc from 'fast-check';
import stringWidth from 'string-width';
import { describe, expect, it } from 'vitest';
import { cutToColumns, thumbnailFromCapture } from '../../src/tmux/screen/thumbnail.js';

describe('thumbnail', () => {
  it('is the 12 rows ending at the last non-blank row, cut at 40 columns', () => {
    const rows = Array.from({ length: 40 }, (_, i) => (i < 20 ? `row ${i} ${'x'.repeat(60)}` : ''));
    const t = thumbnailFromCapture(rows.join('\n'));
    const lines = t.split('\n').slice(0, -1);
    expect(lines).toHaveLength(12);
    expect(lines[0]).toMatch(/^row 8 x+$/);
    expect(lines[11]).toMatch(/^row 19 x+$/);
    for (const l of lines) expect(stringWidth(l)).toBeLessThanOrEqual(40);
  });

  it('takes the first 12 rows of a nearly empty screen, and 12 blank lines of an empty one', () => {
    expect(thumbnailFromCapture('$ hi\n\n\n').split('\n')).toEqual(['$ hi', ...Array<string>(11).fill(''), '']);
    expect(thumbnailFromCapture('\n'.repeat(39))).toBe('\n'.repeat(12));
  });

  it('never splits a wide character and never passes control bytes', () => {
    expect(cutToColumns('漢'.repeat(30), 40)).toBe('漢'.repeat(20));
    expect(cutToColumns('a' + '漢'.repeat(30), 40)).toBe('a' + '漢'.repeat(19));
    expect(thumbnailFromCapture('a\x1b[31mb\x07c')).toMatch(/^a\[31mbc\n/);
  });

  it('cuts every line exactly as measuring each grapheme with string-width does (its fast paths change no answer)', () => {
    const reference = (line: string, cols: number): string => {
      let out = '';
      let used = 0;
      for (const { segment } of new Intl.Segmenter(undefined, { granularity: 'grapheme' }).segment(line)) {
        const w = stringWidth(segment);
        if (used + w > cols) break;
        out += segment;
        used += w;
      }
      return out.trimEnd();
    };
    const ascii = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 80 });
    // Characters near and inside the ranges taken one by one, and those that join a neighbour.
    const near = fc
      .constantFrom(
        0xa0,
        0xad,
        0x2ff,
        0x300,
        0x36f,
        0x483,
        0x489,
        0x200b,
        0x200d,
        0x2026,
        0x2028,
        0x2060,
        0x20d0,
        0x2600,
        0x2614,
        0x2800,
        0x280b,
        0x25cf,
        0x3000,
        0x302a,
        0x3099,
        0x4e00,
        0x9fff,
        0xac00,
        0x1100,
        0xfe0f,
        0x1f1e6,
        0x1f3fd,
        0x1f44d,
        0x600,
      )
      .chain((c) => fc.integer({ min: Math.max(0x20, c - 2), max: c + 2 }))
      .map((c) => String.fromCodePoint(c));
    const joiners = fc.constantFrom('\u0301', '\u200d', '\ufe0f', '\u{1f3fd}', '\u{1f1e6}', '\u0e33', '\u093f', '\r\n');
    const mixed = fc.array(
      fc.oneof(ascii, near, joiners, fc.constantFrom('漢', '⠋', '●', '…', '👍🏽', 'e\u0301'), fc.string({ unit: 'grapheme' })),
      {
        maxLength: 40,
      },
    );
    fc.assert(
      fc.property(mixed, fc.integer({ min: 0, max: 60 }), (parts, cols) => {
        const line = parts.join('');
        expect(cutToColumns(line, cols)).toBe(reference(line, cols));
        // A second time: the widths kept from the first give the same answer.
        expect(cutToColumns(line, cols)).toBe(reference(line, cols));
      }),
      { numRuns: 2000 },
    );
  });

  it('always gives exactly 12 lines of at most 40 columns', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: 'grapheme', maxLength: 200 }), { maxLength: 60 }), (rows) => {
        const lines = thumbnailFromCapture(rows.join('\n')).split('\n');
        expect(lines).toHaveLength(13);
        expect(lines[12]).toBe('');
        for (const l of lines) expect(stringWidth(l)).toBeLessThanOrEqual(40);
      }),
    );
  });
});
