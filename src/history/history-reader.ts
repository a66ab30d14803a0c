/**
 * Reads a session's history back from its disk buffer by stream position (docs/api.md
 * "History"): the bytes a stream client got, as they were, for any range the buffer holds.
 *
 * Invariants: only the two files named by the caller are opened, never through a symlink, and
 * read only; an answer never claims a position the file does not hold (buffer-index.ts); one
 * answer is at most `maxBytes`, and says where the request goes on.
 */
import { constants } from 'node:fs';
import { open, readFile } from 'node:fs/promises';
import { DomainError } from '../errors.js';
import { heldRanges, parseBufferIndex, sliceHistory, type BufferSegment, type PositionRange } from './buffer-index.js';

/** The most bytes one history answer carries (8 MiB); the answer says where to continue. */
export const MAX_HISTORY_BYTES = 8 * 1024 * 1024;

/** The files of a session's buffer. */
export interface BufferFiles {
  readonly log: string;
  readonly idx: string;
}

/** A history answer: the bytes of positions `[from, to)`. */
export interface HistoryPage {
  readonly from: number;
  readonly to: number;
  /** Where the asked range continues, or null when this page ends it. */
  readonly next: number | null;
  readonly data: Buffer;
  /** Every range the buffer holds (for a client that wants to know the whole extent). */
  readonly held: readonly PositionRange[];
}

/** Nothing of the asked range is held: `range-not-held`, with the ranges that are (`held`). */
function rangeNotHeld(from: number, to: number, held: readonly PositionRange[]): DomainError {
  const holds = held.length === 0 ? 'nothing yet' : held.map((r) => `${r.from}-${r.to}`).join(', ');
  return new DomainError('range-not-held', `the buffer holds no position from ${from} to ${to}; it holds ${holds}`, { extra: { held } });
}

const OPEN_READ = constants.O_RDONLY | constants.O_NOFOLLOW;

/** The buffer's segments and its size, as they are now (empty when there is no file yet). */
export async function readSegments(files: BufferFiles): Promise<{ segments: BufferSegment[]; size: number }> {
  let size: number;
  try {
    const fh = await open(files.log, OPEN_READ);
    try {
      size = (await fh.stat()).size;
    } finally {
      await fh.close();
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { segments: [], size: 0 };
    throw err;
  }
  let index = '';
  try {
    const fh = await open(files.idx, OPEN_READ);
    try {
      index = await readFile(fh, 'latin1');
    } finally {
      await fh.close();
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  return { segments: parseBufferIndex(index, size), size };
}

/** Reads `length` bytes at `offset` of a file opened read-only, never through a symlink. */
export async function readAt(path: string, offset: number, length: number): Promise<Buffer> {
  const fh = await open(path, OPEN_READ);
  try {
    const data = Buffer.allocUnsafe(length);
    let got = 0;
    while (got < length) {
      const { bytesRead } = await fh.read(data, got, length - got, offset + got);
      if (bytesRead === 0) break;
      got += bytesRead;
    }
    return got === length ? data : data.subarray(0, got);
  } finally {
    await fh.close();
  }
}

/** The history of positions `[from, to)`, at most `maxBytes` of it; `to` null: to the end. */
export async function readHistory(files: BufferFiles, from: number, to: number | null, maxBytes = MAX_HISTORY_BYTES): Promise<HistoryPage> {
  const { segments } = await readSegments(files);
  const held = heldRanges(segments);
  const end = to ?? Number.MAX_SAFE_INTEGER;
  const slice = sliceHistory(segments, from, end, maxBytes);
  if (!slice) throw rangeNotHeld(from, end, held);
  const data = await readAt(files.log, slice.offset, slice.bytes);
  // The file cannot shrink (it is only appended to or deleted), so a short read is a deletion.
  if (data.length < slice.bytes) throw rangeNotHeld(from, end, []);
  return { from: slice.from, to: slice.to, next: slice.next, data, held };
}
