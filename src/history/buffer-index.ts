/**
 * A session's disk buffer read as stream positions (docs/disk-buffer.md): `<id>.idx` has a line
 * `<file offset> <stream position>` wherever the file's bytes stop being contiguous in the
 * stream, so the file is a list of segments, each a run of contiguous positions.
 *
 * Invariant: a segment never claims a byte the file does not hold (the last one ends at the
 * file's size), and segments are in file order with positions strictly increasing (positions
 * never repeat for a session); index lines that break that are ignored, never trusted.
 */

/** A run of the file whose bytes are contiguous positions `[start, start + length)`. */
export interface BufferSegment {
  /** Where the run begins in the file. */
  readonly offset: number;
  /** The stream position of its first byte. */
  readonly start: number;
  readonly length: number;
}

/** A range of stream positions `[from, to)`. */
export interface PositionRange {
  readonly from: number;
  readonly to: number;
}

/** The segments of a buffer file of `fileSize` bytes, from its index's text. */
export function parseBufferIndex(indexText: string, fileSize: number): BufferSegment[] {
  const marks: { offset: number; start: number }[] = [];
  for (const line of indexText.split('\n')) {
    const m = /^(\d{1,16}) (\d{1,16})$/.exec(line);
    if (!m) continue;
    const offset = Number(m[1]);
    const start = Number(m[2]);
    if (!Number.isSafeInteger(offset) || !Number.isSafeInteger(start) || offset >= fileSize) continue;
    const last = marks[marks.length - 1];
    if (last) {
      // A mark at the same offset replaces the last (nothing was written between them).
      if (offset === last.offset) {
        marks.pop();
      } else if (offset < last.offset || start < last.start + (offset - last.offset)) continue;
    }
    marks.push({ offset, start });
  }
  // Bytes before the first mark have no known position (a file older than its index).
  return marks.map((m, i) => ({ offset: m.offset, start: m.start, length: (marks[i + 1]?.offset ?? fileSize) - m.offset }));
}

/** The position ranges the buffer holds, oldest first. */
export function heldRanges(segments: readonly BufferSegment[]): PositionRange[] {
  return segments.map((s) => ({ from: s.start, to: s.start + s.length }));
}

/** What of a request the buffer can answer in one response. */
export interface HistorySlice {
  /** Where in the file the answer's bytes begin, and how many. */
  readonly offset: number;
  readonly bytes: number;
  /** The positions the answer covers. */
  readonly from: number;
  readonly to: number;
  /** Where the request continues (more of it is held past `to`), else null. */
  readonly next: number | null;
}

/**
 * The part of `[from, to)` that one response answers: the first held run at or after `from`
 * (a position before it, or in a gap, starts at the run), at most `maxBytes` of it. Null when
 * the buffer holds no position of the range.
 */
export function sliceHistory(segments: readonly BufferSegment[], from: number, to: number, maxBytes: number): HistorySlice | null {
  const i = segments.findIndex((s) => s.start + s.length > from);
  const seg = segments[i];
  if (i < 0 || !seg || seg.start >= to) return null;
  const begin = Math.max(from, seg.start);
  const end = Math.min(to, seg.start + seg.length, begin + maxBytes);
  let next: number | null = null;
  if (end < to) {
    if (end < seg.start + seg.length) next = end;
    else {
      const after = segments[i + 1];
      if (after && after.start < to) next = after.start;
    }
  }
  return { offset: seg.offset + (begin - seg.start), bytes: end - begin, from: begin, to: end, next };
}

/** The stream position of the byte at `offset` in the file, or null when none is known. */
export function positionAt(segments: readonly BufferSegment[], offset: number): number | null {
  let lo = 0;
  let hi = segments.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const s = segments[mid]!;
    if (offset < s.offset) hi = mid - 1;
    else if (offset >= s.offset + s.length) lo = mid + 1;
    else return s.start + (offset - s.offset);
  }
  return null;
}
