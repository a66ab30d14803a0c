/** The one definition of a control character and of cutting a text (src/protocol/text.ts). */
import { describe, expect, test } from 'vitest';
import { cutText, hasControlChar, replaceControlChars } from '../../src/protocol/text.js';

describe('control characters', () => {
  test('C0, DEL and C1 are control characters; a tab is one too, unless kept; printable text is not', () => {
    for (const c of ['\u0000', '\t', '\n', '\u001b', '\u001f', '\u007f', '\u0080', '\u0085', '\u009b', '\u009f']) {
      expect(hasControlChar(`a${c}b`), JSON.stringify(c)).toBe(true);
    }
    for (const c of [' ', '~', '\u00a0', '\u00a1', 'é', '\u2028', '😀']) expect(hasControlChar(`a${c}b`), JSON.stringify(c)).toBe(false);
    expect(replaceControlChars('a\u001b[1mb\u009bc\u007fd')).toBe('a[1mbcd');
    expect(replaceControlChars('one\ntwo\u0085three', ' ')).toBe('one two three');
    expect(replaceControlChars('a\tb\u0000c\u0090d', '', true)).toBe('a\tbcd');
  });
});

describe('cutText', () => {
  test('cuts to at most max code points, the last an ellipsis; a text that fits is kept whole', () => {
    expect(cutText('hello', 5)).toBe('hello');
    expect(cutText('hello!', 5)).toBe('hell…');
    expect(cutText('😀😀😀', 2)).toBe('😀…');
    expect(cutText('abc', 0)).toBe('…');
  });
});
