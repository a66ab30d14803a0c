/**
 * The tmux control-mode stream codec: stdout bytes of `tmux -C` in, typed `ControlEvent`s out.
 *
 * Invariants:
 * - Incoming chunks are kept as a list plus a byte count and read in place; a line is copied
 *   only when it straddles chunks, and then once. The accumulator is never concatenated.
 * - `%output` payloads are unescaped straight to bytes (the inverse of tmux's
 *   `control_append_data`), never decoded to text: tmux cuts output lines at any byte, so a
 *   UTF-8 sequence may straddle two of them.
 * - Inside a `%begin` block every line is body until the `%end`/`%error` with the same time and
 *   number; tmux writes no notification inside a block, so a reply marks an exact stream position.
 * - Every line and reply body is bounded, and the bound is checked before anything is allocated.
 * - Every event's buffers belong to the receiver: none is a view into memory reused later.
 */
import { DomainError, type ErrorCode } from '../../errors.js';
import { unescapeInto } from './control-escape.js';
import { typedNotification, type ControlEvent } from './control-events.js';

/** Bounds on one line (without its newline) and on one reply body (lines joined by "\n"). */
export interface ControlParserLimits {
  maxLineBytes: number;
  maxReplyBytes: number;
}

/** 16 MiB per line, 64 MiB per reply body. */
export const DEFAULT_CONTROL_LIMITS: ControlParserLimits = Object.freeze({
  maxLineBytes: 16 * 1024 * 1024,
  maxReplyBytes: 64 * 1024 * 1024,
});

const LF = 0x0a;
const CR = 0x0d;
const SPACE = 0x20;
const BACKSLASH = 0x5c;
const PERCENT = 0x25;
const PREFIX_OUTPUT = Buffer.from('%output ');
const PREFIX_EXTENDED_OUTPUT = Buffer.from('%extended-output ');
const PREFIX_BEGIN = Buffer.from('%begin ');
const PREFIX_END = Buffer.from('%end ');
const PREFIX_ERROR = Buffer.from('%error ');
const EMPTY = Buffer.alloc(0);
/** The size of the parser's output pools. */
const POOL_BYTES = 64 * 1024;

/** An open `%begin` block: its guard numbers and its body so far, joined by "\n" in `body`. */
interface OpenBlock {
  readonly time: number;
  readonly number: number;
  readonly flags: number;
  body: Buffer;
  bytes: number;
  lines: number;
}

/** True when `buf[start..end)` begins with `prefix`. */
function hasPrefix(buf: Buffer, start: number, end: number, prefix: Buffer): boolean {
  const n = prefix.length;
  if (end - start < n) return false;
  for (let i = 0; i < n; i++) if (buf[start + i] !== prefix[i]) return false;
  return true;
}

/** Unsigned decimal at `buf[pos..)`, as `[value, nextPos]`; value -1 when there is no digit. */
function readDecimal(buf: Buffer, pos: number, end: number): [number, number] {
  let value = 0;
  let i = pos;
  while (i < end) {
    const d = (buf[i] as number) - 0x30;
    if (d < 0 || d > 9) break;
    value = value * 10 + d;
    i++;
  }
  return i === pos ? [-1, pos] : [value, i];
}

/** Index of the first space in `buf[pos..end)`, or `end`. */
function indexOfSpace(buf: Buffer, pos: number, end: number): number {
  let i = pos;
  while (i < end && buf[i] !== SPACE) i++;
  return i;
}

/**
 * Parses a control-mode byte stream pushed in chunks of any size. `push` takes ownership of
 * the chunk (it may be read until the line or block that uses it is complete). After a
 * `DomainError` (`control-*`) the parser is dead and every later call throws the same error.
 */
export class ControlParser {
  private readonly onEvent: (event: ControlEvent) => void;
  private readonly limits: ControlParserLimits;
  /** Unconsumed input: `chunks[0]` from `head`, then the later chunks whole. */
  private chunks: Buffer[] = [];
  private head = 0;
  private buffered = 0;
  /** Chunks before this index are known to hold no newline of the current line. */
  private scannedChunks = 0;
  private block: OpenBlock | null = null;
  /** Where `%output` payloads are decoded; each event gets a slice (see `unescape`). */
  private pool: Buffer = EMPTY;
  private poolUsed = 0;
  /** `src.indexOf('\\', from)` of the last search: reused while later lines of the chunk precede it. */
  private bsIn: Buffer = EMPTY;
  private bsFrom = 0;
  private bsAt = -1;
  private failure: DomainError | null = null;

  constructor(onEvent: (event: ControlEvent) => void, limits?: Partial<ControlParserLimits>) {
    this.onEvent = onEvent;
    this.limits = { ...DEFAULT_CONTROL_LIMITS, ...limits };
  }

  /** Feeds bytes; emits every event completed by them, synchronously and in stream order. */
  push(chunk: Buffer): void {
    if (this.failure) throw this.failure;
    if (chunk.length === 0) return;
    this.bsIn = EMPTY; // a caller may refill a buffer it pushed before
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    this.drain();
  }

  /** The stream ended: throws `control-unexpected-end` if a line or a block is unfinished. */
  end(): void {
    if (this.failure) throw this.failure;
    if (this.buffered > 0) this.fail('control-unexpected-end', `stream ended inside a line (${this.buffered} bytes)`);
    if (this.block) this.fail('control-unexpected-end', `stream ended inside %begin block ${this.block.number}`);
  }

  private fail(code: ErrorCode & `control-${string}`, message: string): never {
    this.failure = new DomainError(code, message);
    throw this.failure;
  }

  /** The state loop: one complete line per turn; returns when the next line is incomplete. */
  private drain(): void {
    while (this.buffered > 0) {
      const first = this.chunks[0] as Buffer;
      if (this.scannedChunks === 0) {
        const nl = first.indexOf(LF, this.head);
        if (nl !== -1) {
          const start = this.head;
          const len = nl - start;
          if (len > this.limits.maxLineBytes) this.tooLong(len);
          this.buffered -= len + 1;
          if (nl + 1 === first.length) {
            this.chunks.shift();
            this.head = 0;
          } else {
            this.head = nl + 1;
          }
          this.onLine(first, start, nl);
          continue;
        }
        this.scannedChunks = 1;
      }
      if (!this.takeStraddlingLine()) return;
    }
  }

  /** Finds a line that began in an earlier chunk; copies it out once and handles it. */
  private takeStraddlingLine(): boolean {
    const chunks = this.chunks;
    let k = this.scannedChunks;
    let nl = -1;
    for (; k < chunks.length; k++) {
      nl = (chunks[k] as Buffer).indexOf(LF);
      if (nl !== -1) break;
    }
    if (nl === -1) {
      this.scannedChunks = chunks.length;
      if (this.buffered > this.limits.maxLineBytes) this.tooLong(this.buffered);
      return false;
    }
    let len = nl;
    for (let j = 0; j < k; j++) len += (chunks[j] as Buffer).length;
    len -= this.head;
    if (len > this.limits.maxLineBytes) this.tooLong(len);
    const line = Buffer.allocUnsafe(len);
    let o = (chunks[0] as Buffer).copy(line, 0, this.head);
    for (let j = 1; j < k; j++) o += (chunks[j] as Buffer).copy(line, o);
    (chunks[k] as Buffer).copy(line, o, 0, nl);
    chunks.splice(0, k);
    this.head = nl + 1;
    if (this.head === (chunks[0] as Buffer).length) {
      chunks.shift();
      this.head = 0;
    }
    this.buffered -= len + 1;
    this.scannedChunks = 0;
    this.onLine(line, 0, len);
    return true;
  }

  private tooLong(len: number): never {
    return this.fail('control-line-too-long', `control-mode line of ${len} bytes exceeds ${this.limits.maxLineBytes}`);
  }

  /** One line, `buf[start..end)` without its "\n" (a trailing "\r" is dropped here). */
  private onLine(buf: Buffer, start: number, end: number): void {
    if (end > start && buf[end - 1] === CR) end--;
    if (this.block) {
      this.onBlockLine(buf, start, end);
    } else if (hasPrefix(buf, start, end, PREFIX_OUTPUT)) {
      this.onOutput(buf, start + PREFIX_OUTPUT.length, end);
    } else if (hasPrefix(buf, start, end, PREFIX_BEGIN)) {
      this.onBegin(buf, start, end);
    } else {
      this.onNotification(buf, start, end);
    }
  }

  /** `%output <pane> <escaped>`: `pos` is at the pane id. */
  private onOutput(buf: Buffer, pos: number, end: number): void {
    const sp = indexOfSpace(buf, pos, end);
    const paneId = buf.toString('latin1', pos, sp);
    const data = this.unescape(buf, Math.min(sp + 1, end), end);
    this.onEvent({ type: 'output', paneId, data });
  }

  /**
   * Unescapes straight into the output pool and hands out the decoded bytes as a slice of it,
   * which the receiver may keep: no scratch copy, no allocation per line. A line too long for
   * the pool's remainder starts a new pool; one longer than half a pool gets a buffer of its
   * own, trimmed when escapes left much of it unused. A kept slice keeps its pool alive, so
   * what is retained is at most the bytes kept plus one pool.
   */
  private unescape(buf: Buffer, start: number, end: number): Buffer {
    const len = end - start;
    if (len === 0) return EMPTY;
    if (buf !== this.bsIn || start < this.bsFrom || (this.bsAt !== -1 && this.bsAt < start)) {
      this.bsIn = buf;
      this.bsFrom = start;
      this.bsAt = buf.indexOf(BACKSLASH, start);
    }
    if (len > POOL_BYTES / 2) {
      const own = Buffer.allocUnsafeSlow(len);
      const n = unescapeInto(buf, start, end, own, this.bsAt);
      return n >= len - (len >>> 3) ? own.subarray(0, n) : Buffer.from(own.subarray(0, n));
    }
    if (len > this.pool.length - this.poolUsed) {
      this.pool = Buffer.allocUnsafeSlow(POOL_BYTES);
      this.poolUsed = 0;
    }
    const at = this.poolUsed;
    const n = unescapeInto(buf, start, end, this.pool, this.bsAt, at);
    // The next slice starts 8-aligned, as node's own pool does.
    this.poolUsed = (at + n + 7) & ~7;
    return this.pool.subarray(at, at + n);
  }

  /** `%begin <time> <number> <flags>`: opens a block, or is a generic event when malformed. */
  private onBegin(buf: Buffer, start: number, end: number): void {
    const guard = this.readGuard(buf, start + PREFIX_BEGIN.length, end);
    if (!guard) {
      this.onNotification(buf, start, end);
      return;
    }
    this.block = { time: guard[0], number: guard[1], flags: guard[2], body: EMPTY, bytes: 0, lines: 0 };
  }

  /** `<time> <number> <flags>` at `pos`, the whole rest of the line; null when malformed. */
  private readGuard(buf: Buffer, pos: number, end: number): [number, number, number] | null {
    const [time, p1] = readDecimal(buf, pos, end);
    if (time < 0 || p1 >= end || buf[p1] !== SPACE) return null;
    const [number, p2] = readDecimal(buf, p1 + 1, end);
    if (number < 0 || p2 >= end || buf[p2] !== SPACE) return null;
    const [flags, p3] = readDecimal(buf, p2 + 1, end);
    if (flags < 0 || p3 !== end) return null;
    return [time, number, flags];
  }

  /** A line inside a block: its end (same time and number as the %begin), or a body line. */
  private onBlockLine(buf: Buffer, start: number, end: number): void {
    const block = this.block as OpenBlock;
    if (buf[start] === PERCENT) {
      const ok = hasPrefix(buf, start, end, PREFIX_END);
      if (ok || hasPrefix(buf, start, end, PREFIX_ERROR)) {
        const guard = this.readGuard(buf, start + (ok ? PREFIX_END : PREFIX_ERROR).length, end);
        if (guard && guard[0] === block.time && guard[1] === block.number) {
          this.block = null;
          // The body buffer is never written again, so a view of it is the receiver's to keep.
          const body = block.bytes === 0 ? EMPTY : block.body.subarray(0, block.bytes);
          this.onEvent({ type: 'reply', ok, time: block.time, number: block.number, flags: block.flags, body });
          return;
        }
      }
    }
    this.appendBody(block, buf, start, end);
  }

  /** Copies a body line in (the chunk it came from may be refilled by the caller later). */
  private appendBody(block: OpenBlock, buf: Buffer, start: number, end: number): void {
    const sep = block.lines > 0 ? 1 : 0;
    const need = block.bytes + sep + end - start;
    const max = this.limits.maxReplyBytes;
    if (need > max) this.fail('control-reply-too-large', `reply body of %begin ${block.number} exceeds ${max} bytes`);
    if (need > block.body.length) {
      const grown = Buffer.allocUnsafe(Math.min(Math.max(need, 2 * block.body.length, 256), max));
      block.body.copy(grown, 0, 0, block.bytes);
      block.body = grown;
    }
    if (sep) block.body[block.bytes] = LF;
    buf.copy(block.body, block.bytes + sep, start, end);
    block.bytes = need;
    block.lines++;
  }

  /** Any other line: typed when known, else `notification` (name '' for a non-% line). */
  private onNotification(buf: Buffer, start: number, end: number): void {
    if (buf[start] !== PERCENT) {
      this.onEvent({ type: 'notification', name: '', args: buf.toString('utf8', start, end) });
      return;
    }
    if (hasPrefix(buf, start, end, PREFIX_EXTENDED_OUTPUT) && this.onExtendedOutput(buf, start + PREFIX_EXTENDED_OUTPUT.length, end)) {
      return;
    }
    const sp = indexOfSpace(buf, start + 1, end);
    const name = buf.toString('utf8', start + 1, sp);
    const args = sp < end ? buf.toString('utf8', sp + 1, end) : '';
    this.onEvent(typedNotification(name, args) ?? { type: 'notification', name, args });
  }

  /** `%extended-output <pane> <age> ... : <escaped>` at the pane id; false when malformed. */
  private onExtendedOutput(buf: Buffer, pos: number, end: number): boolean {
    const sp = indexOfSpace(buf, pos, end);
    const [ageMs, afterAge] = readDecimal(buf, sp + 1, end);
    if (sp >= end || ageMs < 0) return false;
    // Fields tmux may add later sit between the age and the " : " separator.
    let sep = afterAge;
    while (sep + 2 < end && !(buf[sep] === SPACE && buf[sep + 1] === 0x3a && buf[sep + 2] === SPACE)) sep++;
    if (sep + 2 >= end) return false;
    const dataStart = sep + 3;
    const paneId = buf.toString('latin1', pos, sp);
    this.onEvent({ type: 'extended-output', paneId, ageMs, data: this.unescape(buf, dataStart, end) });
    return true;
  }
}
