/**
 * Folds a block of a disk buffer into the bytes a search compares: terminal escapes removed
 * exactly where Node's `util.stripVTControlCharacters` removes them, ASCII letters lower-cased,
 * every other byte kept as it is. Working on bytes spares the decoding, the regular expression
 * over the whole text and the case folding of a string pipeline (several seconds per 100 MB).
 *
 * Why it is exact: the strip pattern starts a match only at ESC or U+009B (bytes C2 9B), and a
 * match holds no other ESC or U+009B except a closing `ESC \`; it consumes only ASCII characters
 * of a few classes, then a terminator (BEL, `ESC \`, U+009C) or a final ASCII character. So the
 * match at an escape is decided by the escape's run of those characters and the two bytes after
 * it, and the window `stripVTControlCharacters` is given here is exactly that.
 *
 * Invariant: `\n` is never removed (it is in none of the classes), so the folded block has the
 * raw block's lines, in order; `rawOffset` maps a folded byte back to its raw one.
 */
import { stripVTControlCharacters } from 'node:util';

const ESC = 0x1b;
const BEL = 0x07;
const BACKSLASH = 0x5c;
/** U+009B (CSI) and U+009C (ST) in UTF-8: C2 9B, C2 9C. */
const C1_LEAD = 0xc2;
const C1_CSI = 0x9b;
const C1_ST = 0x9c;
/** An escape whose parameter run is longer than this is worked out without the memo. */
const MAX_MEMO_KEY_BYTES = 48;
/** Distinct short escapes remembered at once (a flood of unique ones cannot grow the memo). */
const MAX_MEMO_ENTRIES = 4096;

function byteTable(chars: string, ranges: [string, string][] = []): Uint8Array {
  const table = new Uint8Array(256);
  for (const c of chars) table[c.charCodeAt(0)] = 1;
  for (const [from, to] of ranges) for (let b = from.charCodeAt(0); b <= to.charCodeAt(0); b++) table[b] = 1;
  return table;
}

/** The pattern's parameter characters: what the CSI-like alternative may hold before its final. */
const PARAM = byteTable('[]()#;?', [['0', '9']]);
/** Every character the OSC-like alternative may hold before its terminator. */
const BODY = byteTable('[]()#;?-/&.:=%@~_', [
  ['0', '9'],
  ['a', 'z'],
  ['A', 'Z'],
]);
/** What the fold writes for a byte: itself, A-Z lowered; -1 where an escape may start (ESC, C2). */
const FOLD = new Int16Array(256).map((_, b) => (b === ESC || b === C1_LEAD ? -1 : b >= 0x41 && b <= 0x5a ? b + 0x20 : b));

interface MemoEntry {
  /** The parameter run and the byte after it (none when the block ended there). */
  readonly key: Uint8Array;
  readonly atEnd: boolean;
  /** Bytes the strip removes after the introducer (0: nothing is removed, the escape stays). */
  readonly after: number;
}

/** A folded block: its bytes, and where each came from. */
export interface FoldedBlock {
  readonly bytes: Buffer;
  /** The raw block's offset of the folded byte at `at` (which must be a kept byte). */
  rawOffset(at: number): number;
}

/** Folds blocks one after another, reusing its buffers and its memo of short escapes. */
export class EscapeFolder {
  private out = Buffer.allocUnsafe(0);
  /** Pairs (folded offset, raw offset) after each removal, in order. */
  private marks = new Int32Array(2048);
  private markCount = 0;
  private readonly memo = new Map<number, MemoEntry>();

  /** The fold of `src`; valid until the next call (the bytes are reused). */
  fold(src: Buffer): FoldedBlock {
    if (this.out.length < src.length) this.out = Buffer.allocUnsafe(Math.max(src.length, this.out.length * 2));
    const out = this.out;
    const n = src.length;
    this.markCount = 0;
    let i = 0;
    let j = 0;
    while (i < n) {
      const b = src[i]!;
      const folded = FOLD[b]!;
      // One table look-up per byte: this loop is most of a search's time.
      if (folded >= 0) {
        out[j++] = folded;
        i++;
        continue;
      }
      const intro = b === ESC ? 1 : i + 1 < n && src[i + 1] === C1_CSI ? 2 : 0;
      const cut = intro === 0 ? 0 : this.escapeLength(src, i, intro);
      if (cut === 0) {
        // Not an escape (or one the strip keeps): its bytes stay; none of them is a letter.
        out[j++] = b;
        i++;
        continue;
      }
      i += cut;
      this.mark(j, i);
    }
    return this.block(out.subarray(0, j));
  }

  private mark(folded: number, raw: number): void {
    if (this.markCount * 2 + 2 > this.marks.length) {
      const bigger = new Int32Array(this.marks.length * 2);
      bigger.set(this.marks);
      this.marks = bigger;
    }
    this.marks[this.markCount * 2] = folded;
    this.marks[this.markCount * 2 + 1] = raw;
    this.markCount++;
  }

  private block(bytes: Buffer): FoldedBlock {
    const marks = this.marks;
    const count = this.markCount;
    return {
      bytes,
      rawOffset(at: number): number {
        // The last removal at or before `at`.
        let lo = 0;
        let hi = count;
        while (lo < hi) {
          const mid = (lo + hi) >> 1;
          if (marks[mid * 2]! <= at) lo = mid + 1;
          else hi = mid;
        }
        return lo === 0 ? at : marks[(lo - 1) * 2 + 1]! + (at - marks[(lo - 1) * 2]!);
      },
    };
  }

  /** Bytes the strip removes at the escape at `i` (introducer `intro` bytes long), 0 if none. */
  private escapeLength(src: Buffer, i: number, intro: number): number {
    const n = src.length;
    const from = i + intro;
    let k = from;
    let hash = 0;
    while (k < n && PARAM[src[k]!] === 1) hash = (Math.imul(hash, 31) + src[k++]!) | 0;
    let end = k;
    while (end < n && BODY[src[end]!] === 1) end++;
    // A terminator right after the body run: the OSC-like alternative may match; rare, and the
    // string it removes varies (a title, a link), so the strip itself decides, unremembered.
    if (terminatorAt(src, end)) return stripped(src, i, Math.min(n, end + 2));
    // Otherwise only the CSI-like alternative can match: the parameter run and one more byte.
    const atEnd = k >= n;
    const keyEnd = atEnd ? n : k + 1;
    if (keyEnd - from > MAX_MEMO_KEY_BYTES) return stripped(src, i, keyEnd);
    hash = (Math.imul(hash, 31) + (atEnd ? 0 : src[k]! + 1)) | 0;
    hash = (Math.imul(hash, 31) + keyEnd - from) | 0;
    const known = this.memo.get(hash);
    if (known && known.atEnd === atEnd && sameBytes(known.key, src, from, keyEnd)) return known.after === 0 ? 0 : intro + known.after;
    const cut = stripped(src, i, keyEnd);
    if (this.memo.size >= MAX_MEMO_ENTRIES) this.memo.clear();
    this.memo.set(hash, { key: Uint8Array.prototype.slice.call(src, from, keyEnd), atEnd, after: cut === 0 ? 0 : cut - intro });
    return cut;
  }
}

/** Whether a terminator of the OSC-like alternative (BEL, `ESC \\`, U+009C) begins at `at`. */
function terminatorAt(src: Buffer, at: number): boolean {
  if (at >= src.length) return false;
  const b = src[at]!;
  if (b === BEL) return true;
  const next = at + 1 < src.length ? src[at + 1] : -1;
  return (b === ESC && next === BACKSLASH) || (b === C1_LEAD && next === C1_ST);
}

function sameBytes(key: Uint8Array, src: Buffer, from: number, to: number): boolean {
  if (key.length !== to - from) return false;
  for (let k = 0; k < key.length; k++) if (key[k] !== src[from + k]) return false;
  return true;
}

/** Bytes `stripVTControlCharacters` removes from the start of `src[from, to)` (it can remove nothing else there). */
function stripped(src: Buffer, from: number, to: number): number {
  const text = src.toString('utf8', from, to);
  const removed = text.length - stripVTControlCharacters(text).length;
  return removed === 0 ? 0 : Buffer.byteLength(text.slice(0, removed));
}
