/**
 * The in-memory ring of a session's recent output, addressed by stream position.
 *
 * Invariant: chunks are stored in order and contiguous: every chunk starts where the previous
 * one ended, so "everything after position p" is exact for any p the ring still covers, even
 * in the middle of a chunk. Memory is bounded by `capacityBytes` (oldest chunks go first).
 */

export interface RingChunk {
  /** Stream position of the chunk's first byte. */
  readonly start: number;
  /** Stream position just after the chunk's last byte: the chunk's sequence number. */
  readonly end: number;
  readonly data: Buffer;
}

export class ChunkRing {
  private chunks: RingChunk[] = [];
  /** Index of the oldest live chunk in `chunks` (dropped ones are compacted lazily). */
  private head = 0;
  private bytes = 0;
  /** Position where the ring's coverage starts (older bytes are gone). */
  private floor: number;
  private top: number;

  constructor(
    readonly capacityBytes: number,
    start: number,
  ) {
    this.floor = start;
    this.top = start;
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
    this.chunks.push(chunk);
    this.top = chunk.end;
    this.bytes += data.length;
    while (this.bytes > this.capacityBytes && this.chunks.length - this.head > 1) this.dropOldest();
    if (this.head > 1024 && this.head * 2 > this.chunks.length) {
      this.chunks = this.chunks.slice(this.head);
      this.head = 0;
    }
    return chunk;
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
    this.floor = position;
    this.top = position;
  }

  private dropOldest(): void {
    const c = this.chunks[this.head]!;
    this.head++;
    this.bytes -= c.data.length;
    this.floor = c.end;
  }
}
