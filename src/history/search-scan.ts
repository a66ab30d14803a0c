/**
 * Search of a session's history (docs/api.md "Search"): the lines of its disk buffer that
 * contain a text, terminal escapes removed (Node's `util.stripVTControlCharacters`), compared
 * without case, newest first, each with two lines of context either side.
 *
 * Invariants: the file is read backwards in blocks of SCAN_BLOCK_BYTES, so memory stays bounded
 * whatever the buffer's size, and reading stops as soon as `limit` lines matched; a line is the
 * bytes between two `\n` (a line longer than MAX_LINE_BYTES is cut into parts); what a match
 * shows is at most MAX_SHOWN_CHARS per line. Pure of the daemon: it runs in a worker thread.
 */
import { stripVTControlCharacters } from 'node:util';
import { positionAt, type BufferSegment } from './buffer-index.js';
import { readAt, readSegments, type BufferFiles } from './history-reader.js';

/** How much of the file is read and searched at once. */
export const SCAN_BLOCK_BYTES = 4 * 1024 * 1024;
/** A line longer than this is searched in parts (a flood with no newline). */
export const MAX_LINE_BYTES = 1024 * 1024;
/** The longest line text a match shows, in characters. */
export const MAX_SHOWN_CHARS = 2000;
/** Lines of context shown before and after a matching line. */
export const CONTEXT_LINES = 2;
/** Control characters a line shows as nothing (a tab stays). */
// eslint-disable-next-line no-control-regex -- control characters are exactly what is removed
const CONTROLS_BUT_TAB = /[\u0000-\u0008\u000a-\u001f\u007f]/g;
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
  text = stripVTControlCharacters(text).replace(CONTROLS_BUT_TAB, '');
  return text.length > MAX_SHOWN_CHARS ? `${text.slice(0, MAX_SHOWN_CHARS)}…` : text;
}

/** The text a block is searched in: the same cleaning as `cleanLine`, lines kept, case folded. */
function foldBlock(region: Buffer): string {
  let text = region.toString('utf8');
  if (region.includes(0x1b) || text.includes('\u009b')) text = stripVTControlCharacters(text);
  return text.toLowerCase();
}

/** Start offsets (within `region`) of each line. */
function lineStarts(region: Buffer): number[] {
  const starts = [0];
  for (let i = region.indexOf(10); i >= 0; i = region.indexOf(10, i + 1)) starts.push(i + 1);
  if (starts[starts.length - 1] === region.length) starts.pop();
  return starts;
}

/** The indexes of the lines of `folded` that contain `needle`, last line first. */
function matchingLines(folded: string, needle: string): number[] {
  const hits: number[] = [];
  let from = folded.length;
  let line = -1;
  let newlinesBefore: number[] | null = null;
  for (let p = folded.lastIndexOf(needle, from); p >= 0; p = folded.lastIndexOf(needle, from)) {
    newlinesBefore ??= newlinePositions(folded);
    const index = countBelow(newlinesBefore, p);
    if (index !== line) hits.push(index);
    line = index;
    // Go on from the end of the line before this one: one match per line.
    const lineStart = index === 0 ? 0 : newlinesBefore[index - 1]! + 1;
    from = lineStart - 1;
    if (from < 0) break;
  }
  return hits;
}

function newlinePositions(text: string): number[] {
  const at: number[] = [];
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) at.push(i);
  return at;
}

/** How many of the sorted `values` are below `x`. */
function countBelow(values: readonly number[], x: number): number {
  let lo = 0;
  let hi = values.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (values[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** A matching line of the file: its offset and bytes. */
interface FoundLine {
  readonly offset: number;
  readonly length: number;
}

/** Lines of one region that contain `needle`, newest first. */
function findInRegion(region: Buffer, base: number, needle: string): FoundLine[] {
  const hits = matchingLines(foldBlock(region), needle);
  if (hits.length === 0) return [];
  const starts = lineStarts(region);
  return hits.map((i) => {
    const start = starts[i]!;
    const end = starts[i + 1] ?? region.length;
    return { offset: base + start, length: end - start };
  });
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
  const needle = query.toLowerCase();
  const { segments, size } = await readSegments(files);
  const found: FoundLine[] = [];
  let end = size;
  // The start of a line whose end is in a later block: searched with the block before it.
  let carry = Buffer.alloc(0);
  while (end > 0 && found.length < limit) {
    const start = Math.max(0, end - SCAN_BLOCK_BYTES);
    const block = await readAt(files.log, start, end - start);
    const region = carry.length === 0 ? block : Buffer.concat([block, carry]);
    let cut = 0;
    if (start > 0) {
      cut = region.indexOf(10) + 1;
      // No line ends in this block: keep reading backwards, unless the line is too long.
      if (cut === 0 && region.length <= MAX_LINE_BYTES) {
        carry = Buffer.from(region);
        end = start;
        continue;
      }
    }
    for (const f of findInRegion(region.subarray(cut), start + cut, needle)) {
      if (found.length < limit) found.push(f);
    }
    carry = cut > 0 ? Buffer.from(region.subarray(0, cut)) : Buffer.alloc(0);
    end = start;
  }
  const matches: SearchMatch[] = [];
  for (const f of found) matches.push(await withContext(files, size, segments, f));
  return { matches, complete: end === 0 && found.length < limit, scannedBytes: size - end };
}
