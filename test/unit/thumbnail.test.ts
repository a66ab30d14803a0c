import fc from 'fast-check';
import stringWidth from 'string-width';
import { describe, expect, it } from 'vitest';
import { cutToColumns, thumbnailFromCapture } from '../../src/tmux/thumbnail.js';

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
