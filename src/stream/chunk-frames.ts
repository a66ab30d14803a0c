import { encodeChunkFrame } from '../protocol/frames.js';
import type { RingChunk } from './ring.js';

/**
 * The newest chunk's frame, encoded once and shared by every client of a session: the stream
 * hands each chunk to all its listeners in the same turn. Only that one is kept: a frame kept for
 * every chunk still in the ring held a second copy of the ring (4 MB a busy session); a client
 * catching up from the ring has its older chunks encoded for it.
 */
export class ChunkFrames {
  private chunk: RingChunk | null = null;
  private frame: Buffer | null = null;

  of(chunk: RingChunk): Buffer {
    if (chunk !== this.chunk || !this.frame) {
      this.frame = encodeChunkFrame(chunk.end, chunk.data);
      this.chunk = chunk;
    }
    return this.frame;
  }
}
