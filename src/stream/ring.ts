/**
 * The in-memory ring of a session's recent output, addressed by stream position.
 *
 * Invariant: the ring holds every byte from `start` to `end` in order and contiguous, so
 * "everything after position p" is exact for any p it still covers, even in the middle of a
 * chunk. Memory is bounded by `capacityBytes` (the oldest bytes go first, never the newest chunk).
 *
 * Small chunks are copied into blocks as they come: an agent's output is a chunk per event-loop
 * turn, a line or two each, 20 a second per busy session. Kept as objects of their own (the
 * chunk, its buffer, a slice of the tmux parser's pool), they outlived the young generation and
 * were joined later: at 100 busy sessions that was most of what the old generation was given,
 * and a mark-compact every few seconds (docs/benchmarks.md "Scale"). Copied at once, nothing of
 * a chunk outlives the turn that sends it but its bytes in a block. Large chunks (a flood's) are
 * kept as they are, not copied again.
 */

export interface RingChunk {
  /** Stream position of the chunk's first byte. */
  readonly start: number;
  /** Stream position just after the chunk's last byte: the chunk's sequence number. */
  readonly end: number;
  readonly data: Buffer;
}

/** The largest block small chunks are copied into (at most a sixteenth of the ring)... */
export const RING_BLOCK_BYTES = 64 * 1024;
/** ...and the first: a session that prints little holds little; each new block doubles. */
export const RING_FIRST_BLOCK_BYTES = 4096;
/** A chunk this large is kept as it is (a flood's chunks are not copied again). */
export const RING_SMALL_CHUNK_BYTES = 4096;

/**
 * What a dropped chunk's slot holds until the list is compacted: nothing. The slots before `head`
 * are compacted away only now and then (every 1024 drops), and a slot that still held its chunk
 * kept the chunk's bytes alive that long: up to 1024 blocks beyond the ring's capacity, 64 MiB a
 * busy session at the default ring (#47, docs/benchmarks.md "Days without a restart").
 */
const DROPPED: RingChunk = Object.freeze({ start: 0, end: 0, data: Buffer.alloc(0) });

export class ChunkRing {
  /** Full blocks and large chunks, oldest first from `head` (dropped ones are compacted lazily). */
  private chunks: RingChunk[] = [];
  private head = 0;
  /** The block being filled: bytes `openFrom..openUsed` of `open` are the stream from `openStart + openFrom`. */
  private open: Buffer | null = null;
  private openStart = 0;
  private openFrom = 0;
  private openUsed = 0;
  /** The size of the next block made. */
  private nextBlock: number;
  private bytes = 0;
  private readonly blockBytes: number;
  /** Position where the ring's coverage starts (older bytes are gone). */
  private floor: number;
  private top: number;

  constructor(
    readonly capacityBytes: number,
    start: number,
  ) {
    this.floor = start;
    this.top = start;
    this.blockBytes = Math.max(256, Math.min(RING_BLOCK_BYTES, Math.floor(capacityBytes / 16)));
    this.nextBlock = Math.min(this.blockBytes, RING_FIRST_BLOCK_BYTES);
  }

  /** The position just after the newest byte. */
  get end(): number {
    return this.top;
  }

  /** The oldest position from which the ring can still replay. */
  get start(): number {
    return this.floor;
  }

  get size(): number {
    return this.bytes;
  }

  /** How many pieces the ring holds (a block counts as one). */
  get chunkCount(): number {
    return this.chunks.length - this.head + (this.openUsed > this.openFrom ? 1 : 0);
  }

  /**
   * Appends the bytes that continue the stream; returns them as a chunk. A small chunk's data is
   * the ring's copy (the caller may reuse `data`); a large one's is `data` itself.
   */
  push(data: Buffer): RingChunk {
    return this.pushParts([data], data.length);
  }

  /** `push` of the bytes of `parts` in order (`total` of them), as one chunk. */
  pushParts(parts: readonly Buffer[], total: number): RingChunk {
    const start = this.top;
    let chunk: RingChunk;
    if (total < RING_SMALL_CHUNK_BYTES) chunk = this.copyIn(parts, total);
    else {
      this.seal();
      chunk = { start, end: start + total, data: parts.length === 1 ? parts[0]! : Buffer.concat(parts, total) };
      this.chunks.push(chunk);
    }
    this.top = start + total;
    this.bytes += total;
    this.trim(total);
    return chunk;
  }

  /** Copies a small chunk into the open block (a new one when it does not fit). */
  private copyIn(parts: readonly Buffer[], total: number): RingChunk {
    if (this.open === null || this.open.length - this.openUsed < total) {
      this.seal();
      this.open = Buffer.allocUnsafeSlow(Math.max(total, this.nextBlock));
      this.nextBlock = Math.min(this.blockBytes, this.nextBlock * 2);
      this.openStart = this.top;
      this.openFrom = 0;
      this.openUsed = 0;
    }
    const from = this.openUsed;
    let at = from;
    for (const part of parts) at += part.copy(this.open, at);
    this.openUsed = at;
    return { start: this.top, end: this.top + total, data: this.open.subarray(from, at) };
  }

  /**
   * The open block joins the others as it is. One filled less than half (a large chunk came) is
   * copied to its size, and the next block starts small again: a flood's large chunks with a few
   * small ones between them would otherwise take a full-size block each time.
   */
  private seal(): void {
    const open = this.open;
    if (open === null) return;
    this.open = null;
    const used = open.subarray(this.openFrom, this.openUsed);
    const sparse = used.length * 2 < open.length;
    if (sparse) this.nextBlock = Math.min(this.blockBytes, RING_FIRST_BLOCK_BYTES);
    if (used.length === 0) return;
    const data = sparse ? Buffer.from(used) : used;
    this.chunks.push({ start: this.openStart + this.openFrom, end: this.openStart + this.openUsed, data });
  }

  /** Drops the oldest bytes while the ring is over its capacity, never the newest chunk (`newest` bytes). */
  private trim(newest: number): void {
    while (this.bytes > this.capacityBytes && this.head < this.chunks.length) {
      const c = this.chunks[this.head]!;
      if (c.end > this.top - newest) break; // the newest chunk itself
      this.chunks[this.head++] = DROPPED;
      this.bytes -= c.data.length;
      this.floor = c.end;
    }
    if (this.bytes > this.capacityBytes && this.head === this.chunks.length && this.open !== null) {
      // Only the open block is left (a ring smaller than a block): drop from its front.
      const drop = Math.min(this.bytes - this.capacityBytes, this.openUsed - this.openFrom - newest);
      if (drop > 0) {
        this.openFrom += drop;
        this.bytes -= drop;
        this.floor += drop;
      }
    }
    if (this.head > 1024 && this.head * 2 > this.chunks.length) {
      this.chunks = this.chunks.slice(this.head);
      this.head = 0;
    }
  }

  /** Chunks holding every byte after `position`, or null when the ring no longer covers it. */
  since(position: number): RingChunk[] | null {
    if (position < this.floor || position > this.top) return null;
    const out: RingChunk[] = [];
    // Binary search for the first chunk that ends after `position`.
    let lo = this.head;
    let hi = this.chunks.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.chunks[mid]!.end <= position) lo = mid + 1;
      else hi = mid;
    }
    for (let i = lo; i < this.chunks.length; i++) {
      const c = this.chunks[i]!;
      out.push(c.start >= position ? c : { start: position, end: c.end, data: c.data.subarray(position - c.start) });
    }
    if (this.open !== null && this.openUsed > this.openFrom && this.top > position) {
      const from = Math.max(this.openFrom, position - this.openStart);
      out.push({ start: this.openStart + from, end: this.top, data: this.open.subarray(from, this.openUsed) });
    }
    return out;
  }

  /** Forgets everything and continues at `position` (after a gap in the stream). */
  reset(position: number): void {
    this.chunks = [];
    this.head = 0;
    this.open = null;
    this.openFrom = 0;
    this.openUsed = 0;
    this.nextBlock = Math.min(this.blockBytes, RING_FIRST_BLOCK_BYTES);
    this.bytes = 0;
    this.floor = position;
    this.top = position;
  }
}
