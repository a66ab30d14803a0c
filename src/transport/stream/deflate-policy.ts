/**
 * Which outgoing frames of one WebSocket are compressed (permessage-deflate allows the choice
 * per message; an uncompressed message leaves the compression context alone).
 *
 * Deflate pays when bytes are the bottleneck and costs when time or CPU is:
 * - A small frame (a keystroke's echo, a cursor move, a short JSON frame) saves a few bytes of
 *   a packet whose TCP/IP and TLS headers are larger than the saving, and each compressed
 *   message takes a trip through zlib's thread pool: ~0.15 ms on each side, measured, which
 *   was most of what tether added to a keystroke's echo (docs/benchmarks.md). So frames under
 *   `minBytes` go uncompressed. (ws's own `threshold` option does not do this: it applies only
 *   when no context takeover was negotiated, and clients take over context by default.)
 * - A flood on a link that keeps up: the daemon's and the client's zlib compete with tmux for
 *   the same cores and the stream slows to ~0.8x of what tmux delivers (measured). So a frame
 *   goes uncompressed while the output is a flood (over `floodBytesPerSecond`, measured over
 *   `windowMs`).
 * - A socket that cannot drain (a phone's slow link): the network is the bottleneck, and every
 *   frame is compressed while `congestedBytes` or more wait, whatever its size or the rate.
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
  /** Frames smaller than this go uncompressed unless the socket is congested. */
  readonly minBytes: number;
}

export const DEFAULT_DEFLATE_POLICY: DeflatePolicyOptions = {
  floodBytesPerSecond: 1024 * 1024,
  congestedBytes: 64 * 1024,
  windowMs: 250,
  minBytes: 1024,
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
    if (queued >= this.opts.congestedBytes) return true;
    return !flooding && bytes >= this.opts.minBytes;
  }

  /** Whether to compress a text frame (JSON: meta, state, snapshots); it does not count toward the output rate. */
  compressText(bytes: number, queued: number): boolean {
    return bytes >= this.opts.minBytes || queued >= this.opts.congestedBytes;
  }
}
