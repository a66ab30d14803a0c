/**
 * Finds the lines of a folded block (escape-fold.ts) that contain a query, newest first, one
 * hit per line, and maps them back to the raw block's lines.
 *
 * How case is ignored: A-Z match a-z (the fold lowers them), and a query of such letters and
 * characters without case (digits, punctuation, ✓, CJK, ...) is found by comparing bytes. A
 * query with a letter beyond ASCII (é, Ü, Σ, ß) is compared by Unicode lower case (JavaScript's
 * `toLowerCase`) of each line; only lines that hold a piece of the query no other character can
 * lower-case into are lower-cased, so such a search is slower only where it has candidates.
 * Lower case beyond ASCII that maps onto ASCII (the Kelvin sign to k, İ to i̇) counts only in
 * that second kind of search.
 */
import type { FoldedBlock } from './escape-fold.js';

/** A matching line of a raw block: its offset and length, its `\n` included. */
export interface FoundLine {
  readonly offset: number;
  readonly length: number;
}

/** What a block is searched for. */
export interface LineMatcher {
  /** The query lower-cased (Unicode), as the lines are compared in the Unicode case. */
  readonly needle: string;
  /** Bytes every matching folded line holds; all of the query when `bytesOnly`. */
  readonly anchor: Buffer;
  /** A line holding `anchor` matches; no line needs to be lower-cased. */
  readonly bytesOnly: boolean;
}

/** Shortest anchor worth a byte search before lower-casing lines. */
const MIN_ANCHOR_BYTES = 3;

function caseless(c: string): boolean {
  return c.toLowerCase() === c && c.toUpperCase() === c;
}

/** How `query` is searched for (see the module's header). */
export function lineMatcher(query: string): LineMatcher {
  const ascii = query.replace(/[A-Z]/g, (c) => c.toLowerCase());
  // U+0307 has no case but is part of İ lower-cased.
  const bytesOnly = [...query].every((c) => c <= '\u007f' || (caseless(c) && c !== '\u0307'));
  if (bytesOnly) return { needle: ascii, anchor: Buffer.from(ascii), bytesOnly };
  const needle = query.toLowerCase();
  // The longest run of printable ASCII in the query's lower case that no other character
  // lower-cases into (so no i, no k): every matching line holds it in its folded bytes.
  let anchor = '';
  if (!needle.includes('\n')) for (const run of needle.split(/[^ -~]|[ik]/)) if (run.length > anchor.length) anchor = run;
  return { needle, anchor: Buffer.from(anchor.length >= MIN_ANCHOR_BYTES ? anchor : ''), bytesOnly };
}

/** The start of the folded line holding byte `at`. */
function lineStart(bytes: Buffer, at: number): number {
  return at === 0 ? 0 : bytes.lastIndexOf(10, at - 1) + 1;
}

/** The raw line of the folded line starting at `start`. */
function rawLine(folded: FoldedBlock, rawLength: number, start: number): FoundLine {
  const bytes = folded.bytes;
  const from = start === 0 ? 0 : folded.rawOffset(start - 1) + 1;
  const nl = bytes.indexOf(10, start);
  const to = nl < 0 ? rawLength : folded.rawOffset(nl) + 1;
  return { offset: from, length: to - from };
}

/** The lines of `raw` (folded as `folded`) that match, newest first, at most `limit`. */
export function matchingLines(raw: Buffer, folded: FoldedBlock, m: LineMatcher, limit: number): FoundLine[] {
  if (!m.bytesOnly && m.anchor.length === 0) return lowerCasedBlock(raw, folded, m, limit);
  const bytes = folded.bytes;
  const found: FoundLine[] = [];
  let from = bytes.length - m.anchor.length;
  while (from >= 0 && found.length < limit) {
    const at = bytes.lastIndexOf(m.anchor, from);
    if (at < 0) break;
    const start = lineStart(bytes, at);
    if (m.bytesOnly || lineHolds(bytes, start, m.needle)) found.push(rawLine(folded, raw.length, start));
    // Go on from the end of the line before this one: one hit per line.
    from = start - 1;
  }
  return found;
}

function lineHolds(bytes: Buffer, start: number, needle: string): boolean {
  const nl = bytes.indexOf(10, start);
  return bytes
    .toString('utf8', start, nl < 0 ? bytes.length : nl)
    .toLowerCase()
    .includes(needle);
}

/** No anchor: the whole block is lower-cased as a string and searched. */
function lowerCasedBlock(raw: Buffer, folded: FoldedBlock, m: LineMatcher, limit: number): FoundLine[] {
  const text = folded.bytes.toString('utf8').toLowerCase();
  // Where the matching lines start in `text`, newest first.
  const hits: number[] = [];
  let from = text.length;
  while (from >= 0 && hits.length < limit) {
    const at = text.lastIndexOf(m.needle, from);
    if (at < 0) break;
    const start = at === 0 ? 0 : text.lastIndexOf('\n', at - 1) + 1;
    hits.push(start);
    from = start - 1;
  }
  if (hits.length === 0) return [];
  // Lines map one to one between the text and the folded bytes (`\n` is never folded): walk
  // both from the start, oldest hit first.
  const bytes = folded.bytes;
  const found: FoundLine[] = [];
  let textAt = 0;
  let bytesAt = 0;
  for (let h = hits.length - 1; h >= 0; h--) {
    while (textAt < hits[h]!) {
      textAt = text.indexOf('\n', textAt) + 1;
      bytesAt = bytes.indexOf(10, bytesAt) + 1;
    }
    found.push(rawLine(folded, raw.length, bytesAt));
  }
  return found.reverse();
}
