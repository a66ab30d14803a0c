/**
 * The session thumbnail (docs/api.md): exactly 12 lines of at most 40 columns, the
 * 12 visible rows ending at the last non-blank row, cut at column 40 by display width (a wide
 * character that does not fit is left out), with no escape sequences.
 */
import stringWidth from 'string-width';

export const THUMBNAIL_COLS = 40;
export const THUMBNAIL_ROWS = 12;

const segmenter = new Intl.Segmenter(undefined, { granularity: 'grapheme' });
// C0/C1 controls and DEL: a thumbnail is plain text.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;

/** Cuts `line` to at most `cols` display columns, whole graphemes only. */
export function cutToColumns(line: string, cols: number): string {
  let out = '';
  let used = 0;
  for (const { segment } of segmenter.segment(line)) {
    const w = stringWidth(segment);
    if (used + w > cols) break;
    out += segment;
    used += w;
  }
  return out.trimEnd();
}

/** Builds the thumbnail from `capture-pane -p` text (one line per visible row). */
export function thumbnailFromCapture(text: string, rows = THUMBNAIL_ROWS, cols = THUMBNAIL_COLS): string {
  const lines = text
    .replace(/\n$/, '')
    .split('\n')
    .map((l) => l.replace(CONTROL, ''));
  let last = lines.length - 1;
  while (last >= 0 && lines[last]!.trim() === '') last--;
  const end = Math.max(last + 1, Math.min(rows, lines.length));
  const start = Math.max(0, end - rows);
  const picked = lines.slice(start, end).map((l) => cutToColumns(l, cols));
  while (picked.length < rows) picked.push('');
  return picked.join('\n') + '\n';
}
