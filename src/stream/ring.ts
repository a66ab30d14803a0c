/**
 * The in-memory ring of a session's recent output, addressed by stream position.
 *
 * Invariant: chunks are stored in order and contiguous: every chunk starts where the previous
 * one ended, so "everything after position p" is exact for any p the ring still covers, even
 * in the middle of a chunk. Memory is bounded by `capacityBytes` (oldest chunks go first).
 *
 * Older small chunks are joined into blocks (a copy of their bytes, the same positions): an
 * agent's output comes as a chunk per event-loop turn, a line or two each, and a full ring of
 * those held tens of thousands of small objects per session, more heap than the bytes themselves
 * and that much more for every full garbage collection to mark (docs/benchmarks.md "Scale").
 * Large chunks (a flood's) stay as they are. The newest chunk is never joined: it is the one
 * `push` returned, which the stream's listeners are sending.
 */

export interface RingChunk {
  /** Stream position of the chunk's first byte. */
  readonly start: number;
  /** Stream position just after the chunk's last byte: the chunk's sequence number. */
  readonly end: number;
  readonly data: Buffer;
}

/** Older chunks are joined once they make this many bytes (at most a sixteenth of the ring)... */
export const RING_BLOCK_BYTES = 64 * 1024;
/** ...or this many chunks. */
export const RING_BLOCK_CHUNKS = 256;
/** A chunk this large is kept as it is (a flood's chunks are not copied again). */
export const RING_SMALL_CHUNK_BYTES = 4096;

export class ChunkRing {
  private chunks: RingChunk[] = [];
  /** Index of the oldest live chunk in `chunks` (dropped ones are compacted lazily). */
  private head = 0;
  private bytes = 0;
  /** Index of the first small chunk not joined into a block yet, and the bytes from it on. */
  private loose = 0;
  private looseBytes = 0;
  /** The block the last join made: the next join adds to it while it is under the block size. */
  private lastBlock: RingChunk | null = null;
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

  /** Appends the bytes that continue the stream; returns the stored chunk. */
  push(data: Buffer): RingChunk {
    const chunk: RingChunk = { start: this.top, end: this.top + data.length, data };
    const small = data.length < RING_SMALL_CHUNK_BYTES;
    // The small chunks before this one make a block, or a large one ends their run: join them.
    if (!small || this.looseBytes >= this.blockBytes || this.chunks.length - this.loose >= RING_BLOCK_CHUNKS) this.joinLoose();
    this.chunks.push(chunk);
    this.top = chunk.end;
    this.bytes += data.length;
    if (small) this.looseBytes += data.length;
    else this.loose = this.chunks.length;
    while (this.bytes > this.capacityBytes && this.chunks.length - this.head > 1) this.dropOldest();
    if (this.head > 1024 && this.head * 2 > this.chunks.length) {
      this.chunks = this.chunks.slice(this.head);
      this.loose -= this.head;
      this.head = 0;
    }
    return chunk;
  }

  /** How many chunks the ring holds (blocks counted as one). */
  get chunkCount(): number {
    return this.chunks.length - this.head;
  }

  /** Joins the loose chunks into one block, in place, with the block before them while it is small. */
  private joinLoose(): void {
    let from = Math.max(this.loose, this.head);
    let bytes = this.looseBytes;
    const before = from > this.head ? this.chunks[from - 1]! : null;
    if (before && before === this.lastBlock && before.data.length + bytes <= this.blockBytes) {
      from--;
      bytes += before.data.length;
    }
    if (this.chunks.length - from > 1) {
      const parts = this.chunks.slice(from);
      const block: RingChunk = {
        start: parts[0]!.start,
        end: parts[parts.length - 1]!.end,
        data: Buffer.concat(
          parts.map((c) => c.data),
          bytes,
        ),
      };
      this.chunks.length = from;
      this.chunks.push(block);
      this.lastBlock = block;
    }
    this.loose = this.chunks.length;
    this.looseBytes = 0;
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
    return out;
  }

  /** Forgets everything and continues at `position` (after a gap in the stream). */
  reset(position: number): void {
    this.chunks = [];
    this.head = 0;
    this.bytes = 0;
    this.loose = 0;
    this.looseBytes = 0;
    this.lastBlock = null;
    this.floor = position;
    this.top = position;
  }

  private dropOldest(): void {
    const c = this.chunks[this.head]!;
    if (this.head >= this.loose && c.data.length < RING_SMALL_CHUNK_BYTES) this.looseBytes -= c.data.length;
    if (c === this.lastBlock) this.lastBlock = null;
    this.head++;
    this.loose = Math.max(this.loose, this.head);
    this.bytes -= c.data.length;
    this.floor = c.end;
  }
}
