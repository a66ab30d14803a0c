/**
 * tmux's `show-buffer` encoding reversed. Up to 3.3a `show-buffer` prints a buffer to a control
 * client through `vis(3)` (`utf8_stravisx` with VIS_OCTAL | VIS_CSTYLE | VIS_TAB, and `$` before
 * a name escaped); from 3.4 it prints the bytes as they are.
 */
const BACKSLASH = 0x5c;
/** vis(3)'s C-style escapes, by the letter after the backslash. */
const C_STYLE: Record<number, number> = { 0x6e: 0x0a, 0x72: 0x0d, 0x62: 0x08, 0x61: 0x07, 0x76: 0x0b, 0x74: 0x09, 0x66: 0x0c, 0x73: 0x20 };
const isOctal = (b: number | undefined): b is number => b !== undefined && b >= 0x30 && b <= 0x37;

/**
 * Reverses tmux's `show-buffer` encoding: `\ooo` (one to three octal digits, `\0` included) is
 * that byte, `\n` `\r` `\b` `\a` `\v` `\t` `\f` `\s` the C escapes, and a backslash before any
 * other character (`\\`, `\$`) that character. Everything else is as it was.
 */
export function unvis(src: Buffer): Buffer {
  const first = src.indexOf(BACKSLASH);
  if (first === -1) return src;
  const out = Buffer.allocUnsafe(src.length);
  let o = src.copy(out, 0, 0, first);
  for (let i = first; i < src.length;) {
    const b = src[i]!;
    if (b !== BACKSLASH || i + 1 >= src.length) {
      out[o++] = b;
      i++;
      continue;
    }
    const next = src[i + 1]!;
    if (isOctal(next)) {
      let v = 0;
      let j = i + 1;
      for (; j < src.length && j < i + 4 && isOctal(src[j]); j++) v = v * 8 + src[j]! - 0x30;
      out[o++] = v & 0xff;
      i = j;
    } else {
      out[o++] = C_STYLE[next] ?? next;
      i += 2;
    }
  }
  return out.subarray(0, o);
}
