/**
 * How a capture is read (src/tmux/screen/capture.ts): which tmux versions go through a paste buffer,
 * the line that does it (a history saved to a file, the rest shown), and its replies folded back
 * to what `capture-pane -p` answers.
 */
import { describe, expect, it } from 'vitest';
import { captureLines, captureReplies, captureWayOf, savedText, savedToFile } from '../../src/tmux/screen/capture.js';
import { buildControlCommand } from '../../src/tmux/quote.js';
import { parseTmuxVersion } from '../../src/tmux/version.js';

const way = (label: string) => captureWayOf(parseTmuxVersion(label));
const reply = (body: string | Buffer, ok = true) => ({ ok, body: Buffer.isBuffer(body) ? body : Buffer.from(body, 'latin1'), mark: null });

describe('the capture way of a tmux version', () => {
  it('prints where tmux frees a printed capture, and passes through a buffer where it does not (3.2 to 3.5a)', () => {
    expect(['3.0', '3.0a', '3.1c'].map(way)).toEqual(['print', 'print', 'print']);
    expect(['3.2', '3.2a', '3.3', '3.3a'].map(way)).toEqual(['buffer', 'buffer', 'buffer', 'buffer']);
    // From 3.4 a changed paste buffer notifies control clients: behind the topology gate.
    expect(['3.4', '3.5', '3.5a'].map(way)).toEqual(['gated-buffer', 'gated-buffer', 'gated-buffer']);
    expect(['3.6', '3.6a', '3.7c', 'master', 'openbsd-7.6'].map(way)).toEqual(['print', 'print', 'print', 'print', 'print']);
    expect(captureWayOf(null)).toBe('print');
  });

  it('builds one line: the placeholder, the capture into its buffer, the text read back, delete-buffer', () => {
    const steps = ['display-message -p x', { capture: ['-e', '-t', '%3', '-S', '-10000', '-E', '-1'] }, { capture: ['-e', '-t', '%3'] }];
    const slots = [
      { buffer: 'tether-capture-7-1', file: '/tmp/a #1/1' },
      { buffer: 'tether-capture-7-2', file: '/tmp/a #1/2' },
    ];
    expect(captureLines('print', steps)).toEqual([
      'display-message -p x',
      'capture-pane -p -e -t %3 -S -10000 -E -1',
      'capture-pane -p -e -t %3',
    ]);
    expect(captureLines('buffer', steps, slots)).toEqual([
      // Every capture first, the plain step in its place: one instant of the pane.
      'display-message -p x',
      'set-buffer -b tether-capture-7-1 -- x',
      'capture-pane -e -t %3 -S -10000 -E -1 -b tether-capture-7-1',
      'set-buffer -b tether-capture-7-2 -- x',
      'capture-pane -e -t %3 -b tether-capture-7-2',
      // Then read back: the history saved to its file, whose path is a format to tmux (`#` doubled).
      buildControlCommand(['save-buffer', '-b', 'tether-capture-7-1', '/tmp/a ##1/1']),
      'show-buffer -b tether-capture-7-2',
      'delete-buffer -b tether-capture-7-1',
      'delete-buffer -b tether-capture-7-2',
    ]);
  });

  it('saves what reaches into the history, and shows the rest', () => {
    expect(savedToFile(['-e', '-S', '-10000', '-E', '-1'])).toBe(true);
    expect(savedToFile(['-S', '-', '-E', '-'])).toBe(true);
    expect(savedToFile(['-e', '-S', '0', '-E', '-'])).toBe(false);
    expect(savedToFile(['-e', '-a', '-q'])).toBe(false);
    expect(savedToFile(['-P'])).toBe(false);
  });

  it('folds the replies back to one per step: a history to its file, a screen decoded, each marked when it was taken', () => {
    const steps = [
      'display-message -p x',
      { capture: ['-t', '%3', '-S', '-100'] },
      { capture: ['-t', '%3'] },
      { capture: ['-a', '-q', '-t', '%3'] },
    ];
    const slots = ['1', '2', '3'].map((n) => ({ buffer: `b${n}`, file: `/f/${n}` }));
    const ok = reply('');
    const at = (mark: number, body = '') => ({ ...reply(body), mark });
    const replies = [
      reply('x'),
      ...[ok, at(1)],
      ...[ok, at(2)],
      ...[ok, at(3)],
      // The read-backs, taken later (a later mark), then the deletes.
      ...[at(9), at(9, 'a\\033[1mb\\\\c\n'), at(9, 'x')],
      ...[ok, ok, ok],
    ];
    const folded = captureReplies('buffer', steps, replies, slots);
    expect(folded[0]).toEqual(replies[0]);
    expect(folded[1]).toEqual({ ok: true, saved: slots[0], mark: 1 });
    expect(folded.slice(2).map((r) => [r.ok, 'body' in r && r.body.toString('latin1'), r.mark])).toEqual([
      [true, 'a\x1b[1mb\\c', 2],
      [true, '', 3],
    ]);
    // From 3.4 show-buffer prints the text as it is: nothing is decoded.
    const raw = captureReplies('gated-buffer', [{ capture: ['-t', '%3'] }], [ok, ok, reply('a\\033b\n'), ok], slots);
    expect('body' in raw[0]! && raw[0].body.toString('latin1')).toBe('a\\033b');
  });

  it('answers a failure as tmux said it, and the steps the failure ended as not run', () => {
    const steps = [{ capture: ['-t', '%3'] }, { capture: ['-t', '%9'] }, 'display-message -p after'];
    const slots = ['1', '2'].map((n) => ({ buffer: `b${n}`, file: `/f/${n}` }));
    const notRun = reply('not run', false);
    const replies = [reply(''), reply(''), reply(''), reply("can't find pane: %9", false), notRun, notRun, notRun, notRun, notRun];
    expect(captureLines('buffer', steps, slots)).toHaveLength(replies.length);
    const folded = captureReplies('buffer', steps, replies, slots);
    expect(folded.map((r) => [r.ok, 'body' in r && r.body.toString('latin1')])).toEqual([
      [false, 'not run'],
      [false, "can't find pane: %9"],
      [false, 'not run'],
    ]);
  });

  it('reads a saved capture as capture-pane -p answers it: one newline dropped, the placeholder empty', () => {
    const text = (s: string) => savedText(Buffer.from(s, 'latin1')).toString('latin1');
    expect(text('a\x1b[1mb\\c\n')).toBe('a\x1b[1mb\\c');
    expect(text('row\n\n')).toBe('row\n');
    expect(text('x')).toBe('');
    expect(text('\x1b[')).toBe('\x1b[');
  });
});
