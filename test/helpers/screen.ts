/**
 * The screen oracle: bytes replayed into @xterm/headless at the pane's size, read back as
 * rows of cells (text and attributes), cursor, modes and scrollback, so that two byte streams
 * can be compared by what a person would see, with each other and with what tmux shows.
 */
import { Unicode11Addon } from '@xterm/addon-unicode11';
import xtermHeadless, { type IBufferCell } from '@xterm/headless';
import { expect } from 'vitest';

const { Terminal } = xtermHeadless;
type Term = InstanceType<typeof Terminal>;

export interface Screen {
  readonly buffer: 'normal' | 'alternate';
  /** Visible rows: text (trailing blanks trimmed). */
  readonly text: string[];
  /** Visible rows: one attribute signature per cell run (blank or not, and its pen), for colour/attribute comparisons; a written space and a never-written cell look the same. */
  readonly attrs: string[];
  readonly cursor: { x: number; y: number };
  readonly modes: Record<string, boolean | string>;
  /** Scrollback rows above the visible screen (normal buffer), text only. */
  readonly scrollback: string[];
}

/**
 * A terminal at the pane's size with Unicode 11 character widths, as tmux and phone terminals
 * use (xterm.js defaults to Unicode 6, where newer emoji are one cell wide).
 */
export function newTerminal(cols = 120, rows = 40): Term {
  const term = new Terminal({ cols, rows, scrollback: 20_000, allowProposedApi: true });
  term.loadAddon(new Unicode11Addon());
  term.unicode.activeVersion = '11';
  return term;
}

export function write(term: Term, data: Buffer | string): Promise<void> {
  return new Promise((resolve) => term.write(typeof data === 'string' ? data : new Uint8Array(data), resolve));
}

function cellSig(cell: IBufferCell): string {
  return [
    cell.getFgColorMode(),
    cell.getFgColor(),
    cell.getBgColorMode(),
    cell.getBgColor(),
    cell.isBold(),
    cell.isDim(),
    cell.isItalic(),
    cell.isUnderline(),
    cell.isBlink(),
    cell.isInverse(),
    cell.isInvisible(),
    cell.isStrikethrough(),
    cell.isOverline(),
  ].join(',');
}

/** Reads what the terminal shows now. */
export function readScreen(term: Term): Screen {
  const buf = term.buffer.active;
  const text: string[] = [];
  const attrs: string[] = [];
  for (let y = 0; y < term.rows; y++) {
    const line = buf.getLine(buf.baseY + y);
    text.push(line ? line.translateToString(true) : '');
    const runs: string[] = [];
    let last = '';
    let count = 0;
    for (let x = 0; x < term.cols; x++) {
      const cell = line?.getCell(x);
      const sig = cell ? `${cell.getChars().trim() === '' ? ' ' : 'c'}|${cellSig(cell)}` : '';
      if (sig === last) count++;
      else {
        if (count > 0) runs.push(`${count}x${last}`);
        last = sig;
        count = 1;
      }
    }
    if (count > 0) runs.push(`${count}x${last}`);
    attrs.push(runs.join(' '));
  }
  const scrollback: string[] = [];
  const normal = term.buffer.normal;
  for (let y = 0; y < normal.baseY; y++) scrollback.push(normal.getLine(y)?.translateToString(true) ?? '');
  const m = term.modes;
  return {
    buffer: buf.type,
    text,
    attrs,
    cursor: { x: buf.cursorX, y: buf.cursorY },
    modes: {
      applicationCursorKeys: m.applicationCursorKeysMode,
      applicationKeypad: m.applicationKeypadMode,
      bracketedPaste: m.bracketedPasteMode,
      insert: m.insertMode,
      mouse: m.mouseTrackingMode,
      origin: m.originMode,
      wraparound: m.wraparoundMode,
    },
    scrollback,
  };
}

/** Replays bytes into a fresh terminal and reads the screen. */
export async function screenOf(chunks: readonly (Buffer | string)[], cols = 120, rows = 40): Promise<Screen> {
  const term = newTerminal(cols, rows);
  for (const c of chunks) await write(term, c);
  const s = readScreen(term);
  term.dispose();
  return s;
}

/**
 * Asserts that `actual` looks as `expected` does: the buffer, each row's text and attributes,
 * the cursor, the modes, and the last `scrollbackRows` rows of scrollback (none when 0).
 */
export function expectSameScreen(actual: Screen, expected: Screen, scrollbackRows: number): void {
  expect(actual.buffer).toBe(expected.buffer);
  expect(actual.text).toEqual(expected.text);
  expect(actual.attrs).toEqual(expected.attrs);
  expect(actual.cursor).toEqual(expected.cursor);
  expect(actual.modes).toEqual(expected.modes);
  if (scrollbackRows > 0) expect(actual.scrollback.slice(-scrollbackRows)).toEqual(expected.scrollback.slice(-scrollbackRows));
}

/** Asserts that a screen's rows read as tmux's own (`capture-pane -p` output), trailing blanks aside. */
export function expectTmuxText(screen: Screen, captured: string, rows = 40): void {
  const live = captured
    .split('\n')
    .slice(0, rows)
    .map((l) => l.trimEnd());
  expect(screen.text.map((l) => l.trimEnd())).toEqual(live.concat(Array<string>(rows).fill('')).slice(0, rows));
}
