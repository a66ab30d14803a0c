/**
 * A snapshot assembled from capture replies (src/tmux/screen/snapshot.ts): each line of a capture on a
 * row of its own, the pen reset before each newline and set again after it, exactly as the pane
 * drew it, and a large history written without holding the event loop for its whole length.
 */
import { describe, expect, test } from 'vitest';
import { assembleSnapshot, STATE_FIELDS } from '../../src/tmux/screen/snapshot.js';
import { TermStateTracker } from '../../src/tmux/screen/term-state.js';
import type { ControlReply } from '../../src/tmux/control/control-client.js';

/** The replies of a snapshot's line for a 120x40 pane with `history` (capture-pane -e -J output) above its screen. */
function replies(history: string, visible = 'prompt $ '): ControlReply[] {
  const values: Record<string, string> = {
    cursor_flag: '1',
    wrap_flag: '1',
    scroll_region_lower: '39',
    history_size: '100',
    pane_width: '120',
    pane_height: '40',
    pane_tabs: '8,16,24,32,40,48,56,64,72,80,88,96,104,112',
  };
  const reply = (body: string | Buffer, ok = true) => ({ ok, body: Buffer.isBuffer(body) ? body : Buffer.from(body) }) as ControlReply;
  return [reply(STATE_FIELDS.map((f) => values[f] ?? '0').join(':')), reply(history), reply(visible), reply('', false), reply('')];
}

const R = '\x1b[0m';
const CRLF = '\r\n';

async function historyPart(history: string): Promise<string> {
  const { data } = await assembleSnapshot(replies(history), new TermStateTracker().capture());
  const text = data.toString('utf8');
  expect(text.startsWith('\x1bc')).toBe(true);
  return text.slice(2, text.indexOf('prompt $ '));
}

describe('a snapshot assembled from captures', () => {
  test('a pen set again after a reset in the same line carries to the next line, and only it', async () => {
    const part = await historyPart('\x1b[1;31mred\x1b[0m plain \x1b[32mgreen\nnext\n');
    expect(part).toBe(`\x1b[1;31mred\x1b[0m plain \x1b[32mgreen${R}${CRLF}\x1b[0;32mnext${R}${CRLF}\x1b[0;32m${R}${CRLF}`);
  });

  test('a line that ends with a reset, in either spelling, adds nothing', async () => {
    const part = await historyPart('\x1b[31mred\x1b[0m\n\x1b[44mblue\x1b[m\nplain\n');
    expect(part).toBe(`\x1b[31mred\x1b[0m${CRLF}\x1b[44mblue\x1b[m${CRLF}plain${CRLF}${CRLF}`);
  });

  test('what a line changes after its last reset adds to what came before it in that line only', async () => {
    // Bold before the reset is gone; underline after it stays, with the colour set after it.
    const part = await historyPart('\x1b[1mbold\x1b[0m\x1b[4mu\x1b[33mline\nx\n');
    expect(part).toBe(`\x1b[1mbold\x1b[0m\x1b[4mu\x1b[33mline${R}${CRLF}\x1b[0;4;33mx${R}${CRLF}\x1b[0;4;33m${R}${CRLF}`);
  });

  test('a reset that a line only begins is not one', async () => {
    // `ESC[0` cut by the end of the line is not a reset: the pen set before it stays.
    const part = await historyPart('\x1b[35mmagenta\x1b[0\nx\n');
    expect(part.startsWith(`\x1b[35mmagenta\x1b[0${R}${CRLF}\x1b[0;35mx`)).toBe(true);
  });

  test('a history of 50000 coloured lines is written with the event loop turning in between', async () => {
    const lines: string[] = [];
    for (let k = 0; k < 50_000; k++) lines.push(`\x1b[3${(k % 7) + 1}mhistory line ${k}, a long session with some colour`);
    let turns = 0;
    let counting = true;
    const count = (): void => {
      if (!counting) return;
      turns++;
      setImmediate(count);
    };
    setImmediate(count);
    const { data } = await assembleSnapshot(replies(`${lines.join('\n')}\n`), new TermStateTracker().capture());
    counting = false;
    // Every line, in order, each on its own row with its pen.
    const text = data.toString('utf8');
    expect(text.split(CRLF).length).toBeGreaterThan(50_000);
    expect(text).toContain(`\x1b[3${(49_999 % 7) + 1}mhistory line 49999, a long session with some colour${R}${CRLF}`);
    expect(turns).toBeGreaterThan(1);
  });

  test('the first bytes of a character not yet whole go last, raw, where tmux gives nothing pending', async () => {
    const t = new TermStateTracker();
    t.feed(Buffer.from([...Buffer.from('Thinking'), 0xe2]));
    const { data, screen } = await assembleSnapshot(replies('', 'Thinking'), t.capture());
    for (const bytes of [data, screen]) expect(bytes.subarray(-1)).toEqual(Buffer.from([0xe2]));
    // A half-received escape sequence (tmux's -P) is what goes last when there is one.
    const withPending = replies('', 'x');
    withPending[4] = { ok: true, body: Buffer.from('\x1b[3') } as ControlReply;
    const pending = await assembleSnapshot(withPending, new TermStateTracker().capture());
    expect(pending.data.subarray(-3).toString('latin1')).toBe('\x1b[3');
  });
});
