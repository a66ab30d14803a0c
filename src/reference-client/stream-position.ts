/**
 * Where a client stands in one session's stream, and what a chunk or a snapshot does to it
 * (docs/client.md, rules 2 and 3): a chunk's first byte is at `seq - length`; bytes the client
 * already holds are cut off, a chunk that does not continue `lastSeq` is never applied (a
 * snapshot is asked for instead, once, until a base comes), and a snapshot replaces all.
 *
 * Invariant: `lastSeq` only moves to the end of bytes that were handed on, or to a snapshot's
 * position.
 */
import { decodeChunkFrame } from '../protocol/frames.js';

/** What to do with a chunk frame: hand on `bytes` (the part after `lastSeq`), ask for a snapshot, or nothing. */
export type ChunkStep = { readonly bytes: Buffer; readonly seq: number } | 'ask-snapshot' | null;

export class StreamPosition {
  /** A snapshot was asked for after a gap; chunks wait for it. */
  private awaitingBase = false;

  /** `lastSeq`: the position held (a stored one), or null for a fresh client. */
  constructor(public lastSeq: number | null) {}

  /** A binary frame came: the bytes that continue the stream, a gap to ask a snapshot for, or nothing to apply. */
  chunk(frame: Buffer): ChunkStep {
    let seq: number;
    let bytes: Buffer;
    try {
      ({ seq, data: bytes } = decodeChunkFrame(frame));
    } catch {
      return null; // not a chunk frame: nothing to apply
    }
    const start = seq - bytes.length;
    if (this.lastSeq === null) return null; // no base yet: the snapshot comes first
    if (seq <= this.lastSeq) return null; // already held
    if (start > this.lastSeq) {
      // Bytes are missing in between: never apply out of order, ask for a new base (once).
      const first = !this.awaitingBase;
      this.awaitingBase = true;
      return first ? 'ask-snapshot' : null;
    }
    if (start < this.lastSeq) bytes = bytes.subarray(this.lastSeq - start);
    this.lastSeq = seq;
    return { bytes, seq };
  }

  /** A snapshot came: it is the new base, at `seq`. */
  snapshot(seq: number): void {
    this.lastSeq = seq;
    this.awaitingBase = false;
  }

  /** A new connection opened: the server resumes from `lastSeq`, so no snapshot asked before is awaited. */
  reopened(): void {
    this.awaitingBase = false;
  }
}
