/**
 * Follows a terminal byte stream for bracketed paste mode (`ESC [ ? 2004 h` on, `... l` off,
 * also inside a list such as `ESC [ ? 1049 ; 2004 h`), so that a client knows whether pasted
 * text goes as `paste` (mode on) or as `keys` (docs/client.md).
 *
 * Invariant: a sequence split across chunks is still seen: at most one unfinished CSI is
 * carried from one chunk to the next, and it is bounded.
 */

const ESC = 0x1b;
/** Longest private-mode CSI followed; longer ones are not mode switches we care about. */
const MAX_CSI = 64;

export class BracketedPasteTracker {
  /** Whether the application has bracketed paste on. */
  on = false;
  /** Bytes of an unfinished `ESC [ ...` from the end of the last chunk. */
  private carry: number[] = [];

  /** Forgets everything (a snapshot follows, starting with a full reset). */
  reset(): void {
    this.on = false;
    this.carry = [];
  }

  feed(bytes: Uint8Array): void {
    let seq = this.carry;
    this.carry = [];
    let inSeq = seq.length > 0;
    for (let i = 0; i < bytes.length; i++) {
      const b = bytes[i]!;
      if (!inSeq) {
        if (b === ESC) {
          inSeq = true;
          seq = [b];
        }
        continue;
      }
      if (b === ESC) {
        seq = [b];
        continue;
      }
      seq.push(b);
      if (seq.length === 2 && b !== 0x5b) {
        if (b === 0x63) this.on = false; // ESC c: a full reset turns every mode off
        inSeq = false; // not a CSI
      } else if (seq.length > 2 && b >= 0x40 && b <= 0x7e) {
        this.finish(seq);
        inSeq = false;
      } else if (seq.length > MAX_CSI) {
        inSeq = false;
      }
    }
    if (inSeq) this.carry = seq;
  }

  /** A complete CSI: `ESC [ ? <params> h|l` switches the modes it lists. */
  private finish(seq: number[]): void {
    const final = seq[seq.length - 1];
    if ((final !== 0x68 && final !== 0x6c) || seq[2] !== 0x3f) return;
    const params = String.fromCharCode(...seq.slice(3, -1)).split(';');
    if (params.includes('2004')) this.on = final === 0x68;
  }
}
