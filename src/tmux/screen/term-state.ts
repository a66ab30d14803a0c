/**
 * The terminal state tmux 3.3a does not report but a snapshot needs: the SGR pen (current
 * colours and attributes), the pen saved by DECSC / mode 1048/1049, and bracketed paste mode.
 * `TermStateTracker` follows them from the raw output stream (the pen model is sgr-pen.ts). It
 * also hands on the notices a program addresses to its terminal as OSC strings of the numbers it
 * is told to listen for (`ESC ] 9 ; <text> BEL`, a desktop notification; `ESC ] 7501 ; <text> ST`,
 * an agent's state): words the program says to the terminal, never the screen's content.
 *
 * Invariant: the tracker is a byte-level state machine that keeps its place across chunk
 * boundaries, and only ever looks at escape sequences (it jumps from ESC to ESC), so it can run
 * on every byte of the stream. Strings (OSC, DCS, APC, PM, SOS) are skipped whole so that their
 * contents are never taken for sequences. SGR sequences are cheap to follow: their parameters
 * are sliced out in one go, and they are applied to the pen only when someone reads it (a
 * snapshot, a saved pen), or after MAX_PENDING_SGR of them; a plain reset drops those waiting.
 */
import { SgrPen } from './sgr-pen.js';
import { Utf8Tail } from './utf8-tail.js';

const ESC = 0x1b;

const enum Mode {
  Ground,
  Escape,
  /** After ESC and an intermediate byte (ESC ( B, ESC # 8 ...): one more byte ends it. */
  EscapeIntermediate,
  Csi,
  /** Inside a string (OSC, DCS, SOS, PM, APC) until BEL or ST. */
  Str,
  /** Saw ESC inside a string: `\` ends it (ST). */
  StrEscape,
}

/** Longest OSC notice kept (its number, `;`, its text); a longer one is cut there. */
export const MAX_NOTICE_BYTES = 2048;
/** An OSC notice: its number and its text (UTF-8, cut to MAX_NOTICE_BYTES). */
export type NoticeListener = (code: number, text: string) => void;

/** Longest CSI parameter text kept; longer sequences are ignored whole, as a terminal would. */
const MAX_CSI_BYTES = 256;
/** SGR parameter strings kept before they are applied to the pen. */
const MAX_PENDING_SGR = 64;

/** What a snapshot needs from the stream that tmux cannot tell. */
export interface TrackedState {
  readonly pen: SgrPen;
  readonly bracketedPaste: boolean;
  /**
   * The first bytes of a UTF-8 character whose last bytes have not come yet, outside any escape
   * sequence: tmux holds them unwritten, and `capture-pane -P` gives only a half-received escape
   * sequence, not these. Empty when the stream ends on a whole character.
   */
  readonly utf8Tail: Buffer;
}

export class TermStateTracker implements TrackedState {
  private current = new SgrPen();
  /**
   * SGR parameter strings seen since the pen was last brought up to date, in order: the first
   * `pendingCount` slots. The slots are kept: a new array at every reset (five a line of an
   * agent's coloured output) was most of what following the pen allocated.
   */
  private readonly pendingSgr: string[] = new Array<string>(MAX_PENDING_SGR).fill('');
  private pendingCount = 0;
  private savedPen = new SgrPen();
  bracketedPaste = false;
  private mode = Mode.Ground;
  /**
   * The CSI parameter bytes read so far, kept as bytes: most sequences (an SGR reset, cursor
   * moves, `?25l`) are understood from them without a string (at a hundred busy sessions, a string
   * and a pattern per sequence were a quarter of all the daemon allocated).
   */
  private readonly csi = Buffer.alloc(MAX_CSI_BYTES);
  private csiLen = 0;
  private csiOverflow = false;
  /** The OSC string being read, while it may be a notice someone listens for; null otherwise. */
  private osc: Buffer[] | null = null;
  private oscBytes = 0;
  /** The stream's last bytes, for `utf8Tail`. */
  private readonly tail = new Utf8Tail();

  /** `notices`: the OSC numbers whose strings `onNotice` is told of. */
  constructor(
    private readonly notices: ReadonlySet<number> = new Set(),
    private readonly onNotice: NoticeListener | null = null,
  ) {}

  /** The SGR pen now. */
  get pen(): SgrPen {
    if (this.pendingCount > 0) {
      for (let k = 0; k < this.pendingCount; k++) this.current.apply(this.pendingSgr[k]!);
      this.pendingCount = 0;
    }
    return this.current;
  }

  private set pen(pen: SgrPen) {
    this.pendingCount = 0;
    this.current = pen;
  }

  private sgr(params: string): void {
    if (params === '' || params === '0') {
      // A plain reset: nothing before it matters any more.
      this.pendingCount = 0;
      this.current.reset();
      return;
    }
    this.pendingSgr[this.pendingCount++] = params;
    if (this.pendingCount >= MAX_PENDING_SGR) void this.pen;
  }

  /** Back to a new terminal's state: what tmux does to a pane whose program it starts again. */
  reset(): void {
    this.pen = new SgrPen();
    this.savedPen = new SgrPen();
    this.bracketedPaste = false;
    this.mode = Mode.Ground;
    this.csiLen = 0;
    this.csiOverflow = false;
    this.osc = null;
    this.tail.clear();
  }

  /** The first bytes of a character not yet whole, outside an escape sequence (TrackedState). */
  get utf8Tail(): Buffer {
    return this.mode === Mode.Ground ? this.tail.unfinished() : Buffer.alloc(0);
  }

  /** A copy of the state now, for a snapshot taken at this stream position. */
  capture(): TrackedState {
    return { pen: this.pen.clone(), bracketedPaste: this.bracketedPaste, utf8Tail: this.utf8Tail };
  }

  /** Feeds output bytes, in stream order. */
  feed(data: Buffer): void {
    this.tail.see(data);
    let i = 0;
    const n = data.length;
    while (i < n) {
      switch (this.mode) {
        case Mode.Ground: {
          const at = data.indexOf(ESC, i);
          if (at < 0) return;
          this.mode = Mode.Escape;
          i = at + 1;
          break;
        }
        case Mode.Escape: {
          const b = data[i++]!;
          this.onEscape(b);
          break;
        }
        case Mode.EscapeIntermediate:
          i++;
          this.mode = Mode.Ground;
          break;
        case Mode.Csi: {
          // Fast path: parameter and intermediate bytes up to the final byte, all in this chunk.
          let j = i;
          while (j < n) {
            const c = data[j]!;
            if (c < 0x20 || c > 0x3f) break;
            j++;
          }
          if (j > i) {
            if (this.csiLen + (j - i) <= MAX_CSI_BYTES) {
              for (let k = i; k < j; k++) this.csi[this.csiLen++] = data[k]!;
            } else this.csiOverflow = true;
            i = j;
            if (i === n) return;
          }
          const b = data[i++]!;
          if (b >= 0x40 && b <= 0x7e) {
            if (!this.csiOverflow) this.onCsi(b);
            this.mode = Mode.Ground;
          } else if (b === ESC) {
            this.mode = Mode.Escape; // an ESC aborts the sequence and starts another
          } else if (b >= 0x20) {
            if (this.csiLen < MAX_CSI_BYTES) this.csi[this.csiLen++] = b;
            else this.csiOverflow = true;
          }
          // C0 controls inside a CSI are executed by a terminal, not part of it: skip.
          break;
        }
        case Mode.Str: {
          // Jump to the next BEL or ESC: everything else is the string's content.
          let j = i;
          while (j < n && data[j] !== 0x07 && data[j] !== ESC) j++;
          if (this.osc !== null) this.keep(data.subarray(i, j));
          if (j === n) return;
          if (data[j] === 0x07) this.endString();
          this.mode = data[j] === 0x07 ? Mode.Ground : Mode.StrEscape;
          i = j + 1;
          break;
        }
        case Mode.StrEscape:
          if (data[i] === 0x5c) this.endString();
          else if (this.osc !== null) this.keep(Buffer.from([ESC, data[i]!]));
          this.mode = data[i] === 0x5c ? Mode.Ground : Mode.Str;
          i++;
          break;
      }
    }
  }

  private onEscape(b: number): void {
    switch (b) {
      case 0x5b: // [
        this.mode = Mode.Csi;
        this.csiLen = 0;
        this.csiOverflow = false;
        return;
      case 0x5d: // ] OSC
        this.mode = Mode.Str;
        if (this.onNotice !== null && this.notices.size > 0) {
          this.osc = [];
          this.oscBytes = 0;
        }
        return;
      case 0x50: // P DCS
      case 0x58: // X SOS
      case 0x5e: // ^ PM
      case 0x5f: // _ APC
        this.mode = Mode.Str;
        return;
      case 0x63: // c RIS: full reset
        this.pen.reset();
        this.savedPen.reset();
        this.bracketedPaste = false;
        break;
      case 0x37: // 7 DECSC
        this.savedPen = this.pen.clone();
        break;
      case 0x38: // 8 DECRC
        this.pen = this.savedPen.clone();
        break;
      case ESC:
        this.mode = Mode.Escape;
        return;
      default:
        if (b >= 0x20 && b <= 0x2f) {
          this.mode = Mode.EscapeIntermediate;
          return;
        }
    }
    this.mode = Mode.Ground;
  }

  /** Keeps bytes of the OSC string being read, up to MAX_NOTICE_BYTES. */
  private keep(bytes: Buffer): void {
    const room = MAX_NOTICE_BYTES - this.oscBytes;
    if (room <= 0 || bytes.length === 0) return;
    const part = bytes.length > room ? bytes.subarray(0, room) : bytes;
    this.osc!.push(Buffer.from(part));
    this.oscBytes += part.length;
  }

  /** A string ended: an OSC string of a listened-for number is a notice. */
  private endString(): void {
    const parts = this.osc;
    this.osc = null;
    if (parts === null || this.onNotice === null) return;
    const text = Buffer.concat(parts, this.oscBytes).toString('utf8');
    const semi = text.indexOf(';');
    const code = Number(semi < 0 ? text : text.slice(0, semi));
    if (!Number.isInteger(code) || !this.notices.has(code)) return;
    try {
      this.onNotice(code, semi < 0 ? '' : text.slice(semi + 1));
    } catch {
      // A listener's failure is its own: the stream's tracking goes on.
    }
  }

  private onCsi(final: number): void {
    const csi = this.csi;
    const len = this.csiLen;
    if (final === 0x6d /* m */) {
      // Private or intermediate forms (CSI > 4 ; 1 m and the like) are not SGR.
      for (let k = 0; k < len; k++) {
        const c = csi[k]!;
        if (!((c >= 0x30 && c <= 0x39) || c === 0x3b || c === 0x3a)) return;
      }
      if (len === 0 || (len === 1 && csi[0] === 0x30)) this.sgr('');
      else this.sgr(csi.toString('latin1', 0, len));
      return;
    }
    if (final === 0x70 /* p */ && len === 1 && csi[0] === 0x21 /* ! */) {
      this.pen.reset(); // DECSTR soft reset
      return;
    }
    if ((final === 0x68 || final === 0x6c) /* h l */ && len > 1 && csi[0] === 0x3f /* ? */) {
      const on = final === 0x68;
      // Each `;`-separated mode, read as a number; one with anything but digits is none of these.
      let mode = 0;
      let digits = true;
      for (let k = 1; k <= len; k++) {
        const c = k < len ? csi[k]! : 0x3b;
        if (c !== 0x3b) {
          if (c >= 0x30 && c <= 0x39 && mode < 100_000) mode = mode * 10 + (c - 0x30);
          else digits = false;
          continue;
        }
        if (digits && mode === 2004) this.bracketedPaste = on;
        else if (digits && (mode === 1048 || mode === 1049)) {
          if (on) this.savedPen = this.pen.clone();
          else this.pen = this.savedPen.clone();
        }
        mode = 0;
        digits = true;
      }
    }
  }
}
