/**
 * The session thumbnail (docs/api.md): exactly 12 lines of at most 40 columns, the
 * 12 visible rows ending at the last non-blank row, cut at column 40 by display width (a wide
 * character that does not fit is left out), with no escape sequences.
 */
import stringWidth from 'string-width';
import { replaceControlChars } from '../../protocol/text.js';

export const THUMBNAIL_COLS = 40;
export const THUMBNAIL_ROWS = 12;

const segmenter = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/**
 * Characters that are each a grapheme of their own, whatever stands around them: in Unicode's
 * grapheme rules (UAX #29) they are "Other" and none of them is a mark, a joiner or a prefix
 * that would join a neighbour. Printable ASCII, Latin, Greek and Cyrillic letters, punctuation,
 * arrows, box drawing, shapes, dingbats, braille (spinners) and CJK ideographs.
 */
const SINGLES =
  /^[\x20-\x7e\u00a0-\u00ac\u00ae-\u02ff\u0370-\u0482\u048a-\u052f\u2010-\u2027\u2030-\u205e\u2070-\u209f\u20a0-\u20c0\u2100-\u23ff\u2400-\u27bf\u2800-\u2bff\u4e00-\u9fff]*$/;
/** Widths of the graphemes met so far that are not printable ASCII (a spinner, `●`, CJK), bounded. */
const widths = new Map<string, number>();
const MAX_KNOWN_WIDTHS = 4096;

// Our segmenter and string-width's (its segmenter and Unicode-property regexes) load ICU's break
// rules and compile on their first use, a one-time cost measured at 250 ms on a busy daemon.
// Taken here, when the first thumbnail loads this module, not in the middle of a burst of them.
for (const _ of segmenter.segment('e\u0301')) void _;
stringWidth('\u00b7');

function widthOf(segment: string): number {
  if (segment.length === 1) {
    const c = segment.charCodeAt(0);
    if (c >= 0x20 && c < 0x7f) return 1;
  }
  let w = widths.get(segment);
  if (w === undefined) {
    w = stringWidth(segment);
    if (widths.size < MAX_KNOWN_WIDTHS) widths.set(segment, w);
  }
  return w;
}

function take(graphemes: Iterable<string>, cols: number): string {
  let out = '';
  let used = 0;
  for (const g of graphemes) {
    const w = widthOf(g);
    if (used + w > cols) break;
    out += g;
    used += w;
  }
  return out.trimEnd();
}

function* segments(line: string): Generator<string> {
  for (const { segment } of segmenter.segment(line)) yield segment;
}

/**
 * Cuts `line` to at most `cols` display columns, whole graphemes only. When the first
 * `cols + 1` characters are all `SINGLES`, each of the first `cols` is a grapheme of its own
 * (the one after cannot join it), so they are taken one by one with the same widths ICU's
 * segmentation would give: segmenting every row of a hundred thumbnails took a busy daemon's
 * event loop for hundreds of milliseconds.
 */
export function cutToColumns(line: string, cols: number): string {
  const head = line.slice(0, cols + 1);
  return SINGLES.test(head) ? take(head.slice(0, cols), cols) : take(segments(line), cols);
}

/** Builds the thumbnail from `capture-pane -p` text (one line per visible row). */
export function thumbnailFromCapture(text: string, rows = THUMBNAIL_ROWS, cols = THUMBNAIL_COLS): string {
  const lines = text
    .replace(/\n$/, '')
    .split('\n')
    .map((l) => replaceControlChars(l)); // a thumbnail is plain text
  let last = lines.length - 1;
  while (last >= 0 && lines[last]!.trim() === '') last--;
  const end = Math.max(last + 1, Math.min(rows, lines.length));
  const start = Math.max(0, end - rows);
  const picked = lines.slice(start, end).map((l) => cutToColumns(l, cols));
  while (picked.length < rows) picked.push('');
  return picked.join('\n') + '\n';
}
