/**
 * The position reservation of one session's stream, kept in tmux itself (the session's user
 * option `@tether-seq`; docs/architecture.md "The stream"): written SEQ_RESERVATION_BYTES ahead
 * of the stream and renewed when half of it is used. A restarted daemon starts above it.
 *
 * Invariant: no position at or above `reservedSeq` was handed out, so a new run that starts
 * above what tmux holds never repeats a position, whatever the output rate.
 */
import type { PaneStream } from './pane-stream.js';

/**
 * How far ahead of the stream the position reservation in tmux (`@tether-seq`) runs. A
 * restarted daemon starts above the reservation, so no position is ever handed out twice,
 * whatever the output rate; it is renewed when half of it is used.
 */
export const SEQ_RESERVATION_BYTES = 64 * 1024 * 1024;

export class StreamReservation {
  /** The position reserved in tmux: no position at or above it was handed out. */
  private reserved = 0;
  private reserving = false;
  /** Persists a reservation (`@tether-seq`); set by the link once tmux can be written. */
  private reserve: ((position: number) => Promise<void>) | null = null;

  constructor(
    private readonly stream: PaneStream,
    /** Called each time more positions were reserved. */
    private readonly onReserved: () => void,
  ) {}

  /** The highest stream position reserved so far (0 before the first reservation). */
  get reservedSeq(): number {
    return this.reserved;
  }

  /**
   * Starts the stream above what an earlier run reserved, then reserves ahead of it with
   * `reserve`. Called by the link once linked, before any output of this link is taken.
   */
  async resume(previous: number, reserve: (position: number) => Promise<void>): Promise<void> {
    this.reserve = reserve;
    this.stream.startAbove(previous);
    await this.renew();
  }

  /** After output: renews the reservation once half of it is used. */
  follow(): void {
    if (this.stream.position + SEQ_RESERVATION_BYTES / 2 > this.reserved) void this.renew();
  }

  private async renew(): Promise<void> {
    if (this.reserving || !this.reserve) return;
    this.reserving = true;
    const next = this.stream.position + SEQ_RESERVATION_BYTES;
    try {
      await this.reserve(next);
      this.reserved = Math.max(this.reserved, next);
      this.onReserved();
    } catch {
      // tmux unreachable: the next output tries again; the link's own failure handling reports it.
    } finally {
      this.reserving = false;
    }
  }
}
