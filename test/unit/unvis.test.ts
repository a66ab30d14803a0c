/** tmux's `show-buffer` encoding (vis(3), up to 3.3a) reversed byte for byte: src/tmux/screen/unvis.ts. */
import { describe, expect, it } from 'vitest';
import { unvis } from '../../src/tmux/screen/unvis.js';

describe('unvis', () => {
  const decode = (s: string) => unvis(Buffer.from(s, 'latin1')).toString('latin1');

  it('reverses octal escapes of one to three digits, NUL included', () => {
    expect(decode('\\033[31mred\\033[0m')).toBe('\x1b[31mred\x1b[0m');
    expect(decode('\\0a')).toBe('\0a');
    // NUL before an octal digit is written \000, so the digit after it stays a digit.
    expect(decode('\\0000')).toBe('\x000');
    expect(decode('\\377\\200')).toBe('\xff\x80');
  });

  it('reverses the C escapes and a backslash before any other character', () => {
    expect(decode('a\\tb\\rc\\bd\\ae\\vf\\fg\\sh\\ni')).toBe('a\tb\rc\bd\x07e\x0bf\x0cg h\ni');
    expect(decode('\\\\ \\$HOME \\${x} $1 $')).toBe('\\ $HOME ${x} $1 $');
  });

  it('leaves text without a backslash as it is (UTF-8 and newlines included)', () => {
    const text = Buffer.from('wide 中文 😀\nnext line\n', 'utf8');
    expect(unvis(text).equals(text)).toBe(true);
    expect(unvis(Buffer.from('x\\\\\u4e2d', 'utf8')).toString('utf8')).toBe('x\\\u4e2d');
  });

  it('keeps a lone backslash at the very end', () => {
    expect(decode('end\\')).toBe('end\\');
  });
});
