/**
 * The in-memory ring of a session's recent output, addressed by stream position.
 *
 * Invariant: the ring holds every byte from `start` to `end` in order and contiguous, so
 * "everything after position p" is exact for any p it still covers, even in the middle of a
 * chunk. Memory is bounded by `capacityBytes`: the oldest bytes go first.
 *
 * The bytes live in one allocation of the ring's capacity, made at the first byte and written
 * round and round: byte p of the stream is at `p % capacity`. Before, small chunks were copied
 * into blocks of 4 to 64 KiB and large ones kept as they came, so a busy session made and freed a
 * block every few seconds among the short-lived buffers of the output's path, and a session that
 * ended left holes where its blocks had been: the daemon's main malloc arena grew a megabyte at
 * each session replaced (#47, docs/benchmarks.md "Days without a restart"). One allocation of a
 * ring's size (above the 128 KiB mmap threshold the launchers set) is a mapping of its own: its
 * pages are taken as they are first written and given back whole when the session goes. Nothing
 * of a chunk outlives the turn that sends it but its bytes in the ring, which is also what keeps
 * the young generation free of an agent's output (docs/benchmarks.md "Scale").
 *
 * What the ring hands out (the chunk `push` returns, the pieces of `since`) are views of its
 * memory, good until the next append writes over them: every reader copies the bytes before it
 * returns (a chunk frame, the disk buffer's batch, the warm snapshot's tail, the screen tracker).
 */

export interface RingChunk {
  /** Stream position of the chunk's first byte. */
  readonly start: number;
  /** Stream position just after the chunk's last byte: the chunk's sequence number. */
  readonly end: number;
  readonly data: Buffer;
}

/** The largest piece `since` hands out: a resume's delta goes out in frames of at most this. */
export const RING_PIECE_BYTES = 64 * 1024;

export class ChunkRing {
  /** The ring's memory, made at the first byte; byte p of the stream is at `p % capacityBytes`. */
  private store: Buffer | null = null;
  /** Position where the ring's coverage starts (older bytes are gone). */
  private floor: number;
  private top: number;

  constructor(
    readonly capacityBytes: number,
    start: number,
  ) {
    if (!Number.isSafeInteger(capacityBytes) || capacityBytes <= 0)
      throw new RangeError(`ring capacity must be a positive integer: ${capacityBytes}`);
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
    return this.top - this.floor;
  }

  /** The ring's memory, once it holds a byte (one allocation of its capacity for its whole life). */
  get memory(): Buffer | null {
    return this.store;
  }

  /**
   * Appends the bytes that continue the stream; returns them as a chunk. Its data is the ring's
   * copy (the caller may reuse `data`), or when the chunk wraps round the ring's end or is larger
   * than the ring, a copy of its own.
   */
  push(data: Buffer): RingChunk {
    return this.pushParts([data], data.length);
  }

  /** `push` of the bytes of `parts` in order (`total` of them), as one chunk. */
  pushParts(parts: readonly Buffer[], total: number): RingChunk {
    const start = this.top;
    const end = start + total;
    const cap = this.capacityBytes;
    const store = (this.store ??= Buffer.allocUnsafeSlow(cap));
    // Only the newest `cap` bytes of a chunk larger than the ring are kept.
    let skip = Math.max(0, total - cap);
    let at = start + skip;
    for (const part of parts) {
      if (skip >= part.length) {
        skip -= part.length;
        continue;
      }
      let from = skip;
      skip = 0;
      while (from < part.length) {
        const i = at % cap;
        const n = part.copy(store, i, from, Math.min(part.length, from + cap - i));
        from += n;
        at += n;
      }
    }
    this.top = end;
    this.floor = Math.max(this.floor, end - cap);
    const i = start % cap;
    const data = total <= cap && i + total <= cap ? store.subarray(i, i + total) : Buffer.concat(parts, total);
    return { start, end, data };
  }

  /** Whether the ring can replay every byte after `position`. */
  covers(position: number): boolean {
    return position >= this.floor && position <= this.top;
  }

  /**
   * Pieces holding every byte after `position`, or null when the ring no longer covers it. They
   * are views of the ring's memory, at most `RING_PIECE_BYTES` each: copy them before the next append.
   */
  since(position: number): RingChunk[] | null {
    if (!this.covers(position)) return null;
    const out: RingChunk[] = [];
    const store = this.store;
    if (store === null) return out;
    const cap = this.capacityBytes;
    for (let at = position; at < this.top;) {
      const i = at % cap;
      const n = Math.min(this.top - at, cap - i, RING_PIECE_BYTES);
      out.push({ start: at, end: at + n, data: store.subarray(i, i + n) });
      at += n;
    }
    return out;
  }

  /** Forgets everything and continues at `position` (after a gap in the stream); the memory stays. */
  reset(position: number): void {
    this.floor = position;
    this.top = position;
  }
}
