/**
 * A pane snapshot: bytes that, written to a fresh terminal of the pane's size, rebuild what
 * the pane shows: the last 10000 lines of history, the visible screen (or the alternate
 * screen over the saved main screen), the cursor, the scroll region, tab stops, the modes a
 * client needs, the SGR pen, and any half-received escape sequence or character.
 *
 * Invariant: everything is read in one command line over the session's control client, so
 * tmux runs it with no pane output in between; the reply's mark is the exact stream position
 * it covers (the next chunk continues right after it).
 *
 * What tmux 3.3a cannot tell (bracketed paste, the pen) comes from the stream via
 * `TermStateTracker`. What capture-pane itself drops (cells erased with only a background
 * colour) cannot be rebuilt; see docs/architecture.md.
 */
import { runCaptureLine, type CaptureStep } from './capture.js';
import type { ControlClient, ControlReply } from '../control/control-client.js';
import { buildControlCommand } from '../quote.js';
import { TermStateTracker, type TrackedState } from './term-state.js';
import { DomainError } from '../../errors.js';

/** How many lines of history a snapshot carries (docs/contract.md "Limits": snapshot depth). */
export const SNAPSHOT_HISTORY_LINES = 10_000;

/** Pane state fields read with `display-message -p`, in this order, ':'-separated. */
export const STATE_FIELDS = [
  'cursor_x',
  'cursor_y',
  'cursor_flag',
  'alternate_on',
  'alternate_saved_x',
  'alternate_saved_y',
  'scroll_region_upper',
  'scroll_region_lower',
  'insert_flag',
  'keypad_cursor_flag',
  'keypad_flag',
  'wrap_flag',
  'origin_flag',
  'mouse_standard_flag',
  'mouse_button_flag',
  'mouse_all_flag',
  'mouse_sgr_flag',
  'mouse_utf8_flag',
  'history_size',
  'pane_width',
  'pane_height',
  'pane_tabs',
] as const;
type StateField = (typeof STATE_FIELDS)[number];

export type PaneState = Record<Exclude<StateField, 'pane_tabs'>, number> & { pane_tabs: number[] };

/** What the stream position the snapshot covers and the tracked state there are. */
export interface SnapshotMark {
  readonly position: number;
  readonly state: TrackedState;
}

export interface PaneSnapshot {
  /** Bytes to write to a fresh (or reset) terminal; they start with a full reset. */
  readonly data: Buffer;
  /** The same without the history: the screen, cursor, modes and pen only. */
  readonly screen: Buffer;
  /** The stream position the snapshot covers: the next chunk continues right after it. */
  readonly position: number;
  readonly state: PaneState;
}

/** A snapshot could not be taken (a command failed, or the pane state was unreadable): `snapshot-failed`. */
const snapshotFailed = (message: string): DomainError => new DomainError('snapshot-failed', message);

export function parsePaneState(text: string): PaneState {
  const parts = text.trim().split(':');
  if (parts.length !== STATE_FIELDS.length) throw snapshotFailed(`unreadable pane state: ${JSON.stringify(text)}`);
  const out: Record<string, number | number[]> = {};
  STATE_FIELDS.forEach((field, i) => {
    const v = parts[i]!;
    if (field === 'pane_tabs') out[field] = v === '' ? [] : v.split(',').map(Number);
    else out[field] = v === '' ? 0 : Number(v);
  });
  return out as PaneState;
}

/** The steps of one snapshot, run as one line (src/tmux/screen/capture.ts says how a capture is read). */
export function snapshotSteps(paneId: string, historyLines = SNAPSHOT_HISTORY_LINES): CaptureStep[] {
  const format = STATE_FIELDS.map((f) => `#{${f}}`).join(':');
  return [
    buildControlCommand(['display-message', '-p', '-t', paneId, format]),
    { capture: ['-e', '-J', '-t', paneId, '-S', `-${historyLines}`, '-E', '-1'] },
    { capture: ['-e', '-J', '-t', paneId, '-S', '0', '-E', '-'] },
    { capture: ['-e', '-J', '-a', '-q', '-t', paneId] },
    { capture: ['-P', '-t', paneId] },
  ];
}

const CSI = '\x1b[';

/**
 * The snapshot's bytes, written into one buffer as they are assembled (a history's ten thousand
 * lines were once three small buffers each: a capture's assembly made some 30000 objects to
 * collect). It grows by doubling; `done()` answers exactly its bytes, so a warm snapshot kept for
 * later holds no slack.
 */
class ByteWriter {
  private buf: Buffer;
  private len = 0;

  constructor(capacity: number) {
    this.buf = Buffer.allocUnsafe(Math.max(256, capacity));
  }

  private room(n: number): void {
    if (this.len + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.len + n));
    this.buf.copy(next, 0, 0, this.len);
    this.buf = next;
  }

  /** `src[from, to)`, copied. */
  bytes(src: Buffer, from = 0, to = src.length): void {
    this.room(to - from);
    src.copy(this.buf, this.len, from, to);
    this.len += to - from;
  }

  text(s: string): void {
    const n = Buffer.byteLength(s, 'utf8');
    this.room(n);
    this.buf.write(s, this.len, 'utf8');
    this.len += n;
  }

  done(): Buffer {
    const out = Buffer.allocUnsafe(this.len);
    this.buf.copy(out, 0, 0, this.len);
    return out;
  }
}

/**
 * Lets the event loop turn while a large capture is written: a whole history is some ten
 * milliseconds of work, and a hundred sessions' warm captures held the loop that long each (#47:
 * event-loop delay p99 under 20 ms). `due()` is checked every few hundred lines; past
 * SLICE_MS of work the writer awaits a turn of the loop.
 */
const SLICE_MS = 3;
const SLICE_CHECK_LINES = 256;

class Slicer {
  private since = performance.now();

  due(): boolean {
    return performance.now() - this.since >= SLICE_MS;
  }

  async turn(): Promise<void> {
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.since = performance.now();
  }
}

const CRLF = Buffer.from('\r\n');
const SGR_RESET = Buffer.from(`${CSI}0m`);
/** Where the last full SGR reset (`ESC[0m` or `ESC[m`) in `body[from, end)` starts, or `from` when there is none. */
function lastReset(body: Buffer, from: number, end: number): number {
  let at = from;
  for (let i = body.indexOf(0x1b, from); i !== -1 && i < end; i = body.indexOf(0x1b, i + 1)) {
    if (body[i + 1] !== 0x5b) continue;
    if ((i + 2 < end && body[i + 2] === 0x6d) || (i + 3 < end && body[i + 2] === 0x30 && body[i + 3] === 0x6d)) at = i;
  }
  return at;
}

/**
 * Writes the lines of one capture (capture-pane -e -J output, split at "\n") so that each
 * starts on a fresh row. capture-pane continues the pen from one line into the next (and
 * starts each capture from the default pen), so the pen is reset before each newline (a
 * terminal fills scrolled-in rows with the current background) and restored after it; the
 * capture ends with a reset. The lines are copied from tmux's reply: no text is decoded or
 * re-encoded. A line without ESC cannot change the pen; of a line with one, only what follows
 * its last full reset is parsed (the pen after a reset depends on nothing before it).
 */
async function writeCapture(body: Buffer, out: ByteWriter, trailingNewline: boolean, slicer: Slicer): Promise<void> {
  const tracker = new TermStateTracker();
  /** The pen's sequence after the last line that could change it; null while the pen is the default. */
  let penSgr: string | null = null;
  let from = 0;
  for (let lines = 1; ; lines++) {
    const nl = body.indexOf(0x0a, from);
    const last = nl === -1;
    const end = last ? body.length : nl;
    out.bytes(body, from, end);
    const esc = body.indexOf(0x1b, from);
    if (esc !== -1 && esc < end) {
      tracker.feed(body.subarray(lastReset(body, esc, end), end));
      const pen = tracker.pen;
      penSgr = pen.isDefault ? null : pen.toSgr();
    }
    if (penSgr !== null) out.bytes(SGR_RESET);
    if (last) {
      if (trailingNewline) out.bytes(CRLF);
      return;
    }
    out.bytes(CRLF);
    // The next line is written after this one; an empty trailing segment is still a line.
    if (penSgr !== null) out.text(penSgr);
    from = nl + 1;
    if (lines % SLICE_CHECK_LINES === 0 && slicer.due()) await slicer.turn();
  }
}

const defaultTabs = (width: number): number[] => {
  const tabs: number[] = [];
  for (let c = 8; c < width; c += 8) tabs.push(c);
  return tabs;
};

/**
 * Builds the snapshot bytes from the replies of `snapshotSteps` and the tracked state: with
 * the history (`data`), and the screen alone (`screen`), which renders the same visible screen.
 * A large capture is written in slices, the event loop turning between them.
 */
export async function assembleSnapshot(
  replies: readonly ControlReply[],
  tracked: TrackedState,
): Promise<{ data: Buffer; screen: Buffer; state: PaneState }> {
  const slicer = new Slicer();
  const full = await assemble(replies, tracked, true, slicer);
  return { data: full.data, screen: (await assemble(replies, tracked, false, slicer)).data, state: full.state };
}

async function assemble(
  replies: readonly ControlReply[],
  tracked: TrackedState,
  withHistory: boolean,
  slicer: Slicer,
): Promise<{ data: Buffer; state: PaneState }> {
  const [stateReply, historyReply, visibleReply, savedReply, pendingReply] = replies;
  if (!stateReply || !historyReply || !visibleReply || !savedReply || !pendingReply) throw snapshotFailed('incomplete snapshot replies');
  for (const r of [stateReply, historyReply, visibleReply, pendingReply]) {
    if (!r.ok) throw snapshotFailed(`tmux refused a snapshot command: ${r.body.toString('utf8').trim()}`);
  }
  const st = parsePaneState(stateReply.body.toString('utf8'));
  const captured = (withHistory ? historyReply.body.length : 0) + visibleReply.body.length + (savedReply.ok ? savedReply.body.length : 0);
  // Room for the captures and what each line adds (a newline, a reset, the pen again), most often enough.
  const out = new ByteWriter(captured + (captured >> 2) + 4096);
  out.text('\x1bc'); // full reset: the snapshot is self-contained
  // With no history, capture-pane clamps the range and returns the first visible row instead.
  // Each capture starts from the default pen, so each is written on its own.
  if (withHistory && st.history_size > 0) await writeCapture(historyReply.body, out, true, slicer);
  if (st.alternate_on && savedReply.ok) {
    await writeCapture(savedReply.body, out, false, slicer);
    // The main screen's cursor is what mode 1049 saved when the alternate screen went on.
    out.text(`${CSI}${st.alternate_saved_y + 1};${st.alternate_saved_x + 1}H${CSI}?1049h${CSI}H`);
    await writeCapture(visibleReply.body, out, false, slicer);
  } else {
    await writeCapture(visibleReply.body, out, false, slicer);
  }

  const height = st.pane_height || 40;
  if (st.scroll_region_upper !== 0 || st.scroll_region_lower !== height - 1) {
    out.text(`${CSI}${st.scroll_region_upper + 1};${st.scroll_region_lower + 1}r`);
  }
  const tabs = st.pane_tabs;
  const expected = defaultTabs(st.pane_width || 120);
  if (tabs.length !== expected.length || tabs.some((t, i) => t !== expected[i])) {
    out.text(`${CSI}3g`);
    out.text(tabs.map((t) => `${CSI}1;${t + 1}H\x1bH`).join(''));
  }
  if (st.keypad_cursor_flag) out.text(`${CSI}?1h`);
  if (st.keypad_flag) out.text('\x1b=');
  if (!st.wrap_flag) out.text(`${CSI}?7l`);
  if (st.insert_flag) out.text(`${CSI}4h`);
  if (st.mouse_standard_flag) out.text(`${CSI}?1000h`);
  if (st.mouse_button_flag) out.text(`${CSI}?1002h`);
  if (st.mouse_all_flag) out.text(`${CSI}?1003h`);
  if (st.mouse_utf8_flag) out.text(`${CSI}?1005h`);
  if (st.mouse_sgr_flag) out.text(`${CSI}?1006h`);
  if (tracked.bracketedPaste) out.text(`${CSI}?2004h`);
  if (!st.cursor_flag) out.text(`${CSI}?25l`);
  if (st.origin_flag) {
    // DECOM homes the cursor to the region; the position is then region-relative.
    out.text(`${CSI}?6h${CSI}${st.cursor_y - st.scroll_region_upper + 1};${st.cursor_x + 1}H`);
  } else out.text(`${CSI}${st.cursor_y + 1};${st.cursor_x + 1}H`);
  out.text(tracked.pen.toSgr());
  // Half-received escape bytes go last and raw, so the next chunk completes them; outside an
  // escape sequence, so do the first bytes of a character not yet whole (tmux holds them unwritten
  // and -P does not give them: a snapshot at that position lost the character).
  if (pendingReply.body.length > 0) out.bytes(pendingReply.body);
  else if (tracked.utf8Tail.length > 0) out.bytes(tracked.utf8Tail);
  return { data: out.done(), state: st };
}

/** Takes a snapshot over `client`; its replies carry a `SnapshotMark` (see ControlClientOptions.mark). */
export async function takeSnapshot(client: ControlClient, paneId: string): Promise<PaneSnapshot> {
  const replies = await runCaptureLine(client, snapshotSteps(paneId));
  const mark = replies[0]?.mark as SnapshotMark | undefined;
  if (!mark) throw snapshotFailed('the control client gives replies no stream mark');
  const { data, screen, state } = await assembleSnapshot(replies, mark.state);
  return { data, screen, position: mark.position, state };
}
