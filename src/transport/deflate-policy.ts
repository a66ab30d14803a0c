/**
 * Which outgoing chunk frames of one WebSocket are compressed (permessage-deflate allows the
 * choice per message; an uncompressed message leaves the compression context alone).
 *
 * Deflate pays when the network is the bottleneck: interactive output (a phone's network is
 * slow next to the bytes, and small frames compress 0.3x-0.7x) and any stream the socket cannot
 * drain. It costs when the CPU is the bottleneck: a flood on a link that keeps up, where the
 * daemon's and the client's zlib compete with tmux for the same cores and the stream slows to
 * ~0.8x of what tmux delivers (measured; docs/benchmarks.md). So a frame is compressed unless
 * the output is a flood (over `floodBytesPerSecond`, measured over `windowMs`) and the socket
 * is keeping up (less than `congestedBytes` queued). A slow network fills the socket's queue
 * and brings compression back at once.
 *
 * Pure: the clock and the queue size are passed in.
 */
export interface DeflatePolicyOptions {
  /** Output rate from which a stream counts as a flood. */
  readonly floodBytesPerSecond: number;
  /** Queued bytes from which the socket counts as not keeping up. */
  readonly congestedBytes: number;
  /** The window the rate is measured over. */
  readonly windowMs: number;
}

export const DEFAULT_DEFLATE_POLICY: DeflatePolicyOptions = {
  floodBytesPerSecond: 1024 * 1024,
  congestedBytes: 64 * 1024,
  windowMs: 250,
};

export class DeflatePolicy {
  private windowStart: number | null = null;
  private windowBytes = 0;
  /** The rate of the last full window, bytes per second. */
  private rate = 0;

  constructor(private readonly opts: DeflatePolicyOptions = DEFAULT_DEFLATE_POLICY) {}

  /** Whether to compress a frame of `bytes` sent at `now` with `queued` bytes not yet written. */
  compress(bytes: number, now: number, queued: number): boolean {
    if (this.windowStart === null) this.windowStart = now;
    const elapsed = now - this.windowStart;
    if (elapsed >= this.opts.windowMs) {
      // A long quiet gap counts as a slow window: the rate falls at once.
      this.rate = (this.windowBytes * 1000) / elapsed;
      this.windowStart = now;
      this.windowBytes = 0;
    }
    this.windowBytes += bytes;
    // The window so far, over its whole length: a lower bound of its rate, known early.
    const current = (this.windowBytes * 1000) / this.opts.windowMs;
    const flooding = Math.max(this.rate, current) >= this.opts.floodBytesPerSecond;
    return !flooding || queued >= this.opts.congestedBytes;
  }
}
