/**
 * The first bytes of a UTF-8 character whose last bytes have not come yet, at the end of a
 * stream: tmux holds them unwritten, and no capture gives them (`capture-pane -P` gives only a
 * half-received escape sequence), so a snapshot taken there must end with them
 * (src/tmux/screen/snapshot.ts).
 *
 * Invariant: only the stream's last three bytes are kept (the most a character can have begun
 * with), copied into one fixed buffer: nothing is allocated per chunk.
 */

const NO_BYTES = Buffer.alloc(0);

/** The bytes of a UTF-8 character begun at the end of `last` and not finished there (empty when none). */
function unfinishedUtf8(last: Buffer): Buffer {
  for (let k = 1; k <= last.length; k++) {
    const b = last[last.length - k]!;
    if ((b & 0xc0) === 0x80) continue; // a continuation byte: its lead is further back
    if (b < 0xc2 || b > 0xf4) return NO_BYTES; // ASCII or no lead byte: nothing waits
    const needs = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : 2;
    return needs > k ? last.subarray(last.length - k) : NO_BYTES;
  }
  return NO_BYTES;
}

/** The stream's last bytes, and the character they leave unfinished. */
export class Utf8Tail {
  private readonly last = Buffer.alloc(3);
  private length = 0;

  /** Keeps the last bytes of `data`, which follows what was seen before. */
  see(data: Buffer): void {
    if (data.length >= 3) {
      data.copy(this.last, 0, data.length - 3);
      this.length = 3;
      return;
    }
    const keep = Math.min(this.length, 3 - data.length);
    this.last.copyWithin(0, this.length - keep, this.length);
    data.copy(this.last, keep);
    this.length = keep + data.length;
  }

  /** Forgets the stream (a new terminal). */
  clear(): void {
    this.length = 0;
  }

  /** A copy of the unfinished character's first bytes; empty when the stream ends on a whole one. */
  unfinished(): Buffer {
    return Buffer.from(unfinishedUtf8(this.last.subarray(0, this.length)));
  }
}
