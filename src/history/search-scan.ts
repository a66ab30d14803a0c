/**
 * Search of a session's history (docs/api.md "Search"): the lines of its disk buffer that
 * contain a text, newest first, each with two lines of context either side.
 *
 * What matches: the text of a line with its terminal escapes removed exactly as Node's
 * `util.stripVTControlCharacters` removes them (escape-fold.ts), so an escape inside a word does
 * not hide it and the text of an escape (a colour, a window title) is not found. Case is ignored:
 * A-Z match a-z in any query; a query holding a letter beyond ASCII (é, Ü, ß) compares lines by
 * Unicode lower case (search-match.ts says what differs). One hit per line.
 *
 * Invariants: the file is read backwards in blocks of SCAN_BLOCK_BYTES into one buffer, so
 * memory stays bounded whatever the buffer's size, and reading stops as soon as `limit` lines
 * matched; a line is the bytes between two `\n`, and a line longer than MAX_LINE_BYTES is
 * searched in parts (a query across two parts is missed; a match shows its part's start); what
 * a match shows is at most MAX_SHOWN_CHARS per line. Pure of the daemon: it runs in a worker.
 */
import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { stripVTControlCharacters } from 'node:util';
import { replaceControlChars } from '../protocol/text.js';
import { positionAt, type BufferSegment } from './buffer-index.js';
import { EscapeFolder } from './escape-fold.js';
import { readAt, readSegments, type BufferFiles } from './history-reader.js';
import { lineMatcher, matchingLines, type FoundLine, type LineMatcher } from './search-match.js';

/** How much of the file is read and searched at once. */
export const SCAN_BLOCK_BYTES = 4 * 1024 * 1024;
/** A line longer than this is searched in parts (a flood with no newline). */
export const MAX_LINE_BYTES = 1024 * 1024;
/** The longest line text a match shows, in characters. */
export const MAX_SHOWN_CHARS = 2000;
/** Lines of context shown before and after a matching line. */
export const CONTEXT_LINES = 2;
/** Bytes read either side of a match to find its context. */
const CONTEXT_WINDOW_BYTES = 16 * 1024;

/** A matching line. */
export interface SearchMatch {
  /** The stream position where the line begins (fetch history from it), or null when unknown. */
  readonly seq: number | null;
  readonly line: string;
  readonly before: string[];
  readonly after: string[];
}

/** What a search found. */
export interface SearchResult {
  readonly matches: SearchMatch[];
  /** The whole buffer was searched (false: `limit` was reached first). */
  readonly complete: boolean;
  /** Bytes of the buffer searched. */
  readonly scannedBytes: number;
}

/** A line's bytes as a person reads them: escapes and control characters gone, a CR at the end dropped. */
export function cleanLine(raw: Buffer): string {
  let text = raw.toString('utf8');
  if (text.endsWith('\r')) text = text.slice(0, -1);
  text = replaceControlChars(stripVTControlCharacters(text), '', true);
  return text.length > MAX_SHOWN_CHARS ? `${text.slice(0, MAX_SHOWN_CHARS)}…` : text;
}

/** The context of a line: up to CONTEXT_LINES lines either side, read from the file. */
async function withContext(files: BufferFiles, size: number, segments: readonly BufferSegment[], found: FoundLine): Promise<SearchMatch> {
  const from = Math.max(0, found.offset - CONTEXT_WINDOW_BYTES);
  const to = Math.min(size, found.offset + found.length + CONTEXT_WINDOW_BYTES);
  const window = await readAt(files.log, from, to - from);
  const lineAt = found.offset - from;
  const before: string[] = [];
  let end = lineAt;
  while (before.length < CONTEXT_LINES && end > 0) {
    const start = window.lastIndexOf(10, end - 2) + 1;
    if (start === 0 && from > 0) break;
    before.unshift(cleanLine(window.subarray(start, end - 1)));
    end = start;
  }
  const after: string[] = [];
  let start = lineAt + found.length;
  while (after.length < CONTEXT_LINES && start < window.length) {
    const nl = window.indexOf(10, start);
    if (nl < 0 && to < size) break;
    const stop = nl < 0 ? window.length : nl;
    after.push(cleanLine(window.subarray(start, stop)));
    start = stop + 1;
  }
  const lineBytes = window.subarray(lineAt, lineAt + found.length);
  const line = cleanLine(lineBytes[lineBytes.length - 1] === 10 ? lineBytes.subarray(0, -1) : lineBytes);
  return { seq: positionAt(segments, found.offset), line, before, after };
}

/**
 * Searches the buffer for `query` (literal, any case), newest line first, at most `limit`
 * lines. The buffer may grow meanwhile: only what it held when the search began is read.
 */
export async function searchBuffer(files: BufferFiles, query: string, limit: number): Promise<SearchResult> {
  const { segments, size } = await readSegments(files);
  const { found, end } = size === 0 ? { found: [], end: 0 } : await scan(files.log, size, lineMatcher(query), limit);
  const matches: SearchMatch[] = [];
  for (const f of found) matches.push(await withContext(files, size, segments, f));
  return { matches, complete: end === 0 && found.length < limit, scannedBytes: size - end };
}

/** The matching lines of the file's first `size` bytes, newest first, and where reading stopped. */
async function scan(log: string, size: number, matcher: LineMatcher, limit: number): Promise<{ found: FoundLine[]; end: number }> {
  const folder = new EscapeFolder();
  const found: FoundLine[] = [];
  // One buffer for every region: a block read in front of `carry` bytes, the start of a line
  // whose end was in the block after it (it is searched with the block before).
  const region = Buffer.allocUnsafe(Math.min(size, SCAN_BLOCK_BYTES + MAX_LINE_BYTES));
  let carry = 0;
  let end = size;
  const fh = await open(log, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    while (end > 0 && found.length < limit) {
      const start = Math.max(0, end - SCAN_BLOCK_BYTES);
      const length = end - start;
      region.copyWithin(length, 0, carry);
      await readFully(fh, region, length, start);
      const bytes = region.subarray(0, length + carry);
      let cut = 0;
      if (start > 0) {
        // The first line may begin in an earlier block: it waits for it, unless it is already
        // longer than a line may be (then it is searched in parts).
        cut = bytes.indexOf(10) + 1 || bytes.length;
        if (cut > MAX_LINE_BYTES) cut = 0;
      }
      const lines = bytes.subarray(cut);
      for (const f of matchingLines(lines, folder.fold(lines), matcher, limit - found.length)) {
        found.push({ offset: start + cut + f.offset, length: f.length });
      }
      carry = cut;
      end = start;
    }
  } finally {
    await fh.close();
  }
  return { found, end };
}

/** Reads `length` bytes at `position` into the start of `into` (the file never shrinks while it is searched; a short read is an error). */
async function readFully(fh: FileHandle, into: Buffer, length: number, position: number): Promise<void> {
  let got = 0;
  while (got < length) {
    const { bytesRead } = await fh.read(into, got, length - got, position + got);
    if (bytesRead === 0) throw new Error('the buffer file was cut short while it was searched');
    got += bytesRead;
  }
}
