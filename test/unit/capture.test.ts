/**
 * How a capture is read (src/tmux/capture.ts): which tmux versions go through a paste buffer and
 * a file, the line that does it, and its replies folded back to what `capture-pane -p` answers.
 */
import { describe, expect, it } from 'vitest';
import { captureLines, captureReplies, captureWayOf, savedText } from '../../src/tmux/capture.js';
import { buildControlCommand } from '../../src/tmux/quote.js';
import { parseTmuxVersion } from '../../src/tmux/version.js';

const way = (label: string) => captureWayOf(parseTmuxVersion(label));
const reply = (body: string | Buffer, ok = true) => ({ ok, body: Buffer.isBuffer(body) ? body : Buffer.from(body, 'latin1'), mark: null });

describe('the capture way of a tmux version', () => {
  it('prints where tmux frees a printed capture, and passes through a buffer where it does not (3.2 to 3.5a)', () => {
    expect(['3.0', '3.0a', '3.1c'].map(way)).toEqual(['print', 'print', 'print']);
    expect(['3.2', '3.2a', '3.3', '3.3a'].map(way)).toEqual(['file', 'file', 'file', 'file']);
    // From 3.4 a changed paste buffer notifies control clients: behind the topology gate.
    expect(['3.4', '3.5', '3.5a'].map(way)).toEqual(['gated-file', 'gated-file', 'gated-file']);
    expect(['3.6', '3.6a', '3.7c', 'master', 'openbsd-7.6'].map(way)).toEqual(['print', 'print', 'print', 'print', 'print']);
    expect(captureWayOf(null)).toBe('print');
  });

  it('builds one line: the placeholder, the capture into its buffer, save-buffer to its file, delete-buffer', () => {
    const steps = ['display-message -p x', { capture: ['-e', '-t', '%3'] }];
    const slots = [{ buffer: 'tether-capture-7-1', file: '/tmp/a #1/1' }];
    expect(captureLines('print', steps)).toEqual(['display-message -p x', 'capture-pane -p -e -t %3']);
    expect(captureLines('file', steps, slots)).toEqual([
      'display-message -p x',
      'set-buffer -b tether-capture-7-1 -- x',
      'capture-pane -e -t %3 -b tether-capture-7-1',
      // The path is a format to tmux: its `#` doubled, and quoted for tmux's parser.
      buildControlCommand(['save-buffer', '-b', 'tether-capture-7-1', '/tmp/a ##1/1']),
      'delete-buffer -b tether-capture-7-1',
    ]);
  });

  it('folds the replies back to one per step: a capture to its file, a failure as tmux said it', () => {
    const steps = ['display-message -p x', { capture: ['-t', '%3'] }, { capture: ['-t', '%9'] }];
    const slots = [
      { buffer: 'b1', file: '/f/1' },
      { buffer: 'b2', file: '/f/2' },
    ];
    const ok = reply('');
    const replies = [
      reply('x'),
      ...[ok, ok, ok, ok],
      ...[ok, reply("can't find pane: %9", false), reply('not run', false), reply('not run', false)],
    ];
    const folded = captureReplies('file', steps, replies, slots);
    expect(folded[0]).toEqual(replies[0]);
    expect(folded[1]).toEqual({ ok: true, saved: slots[0], mark: null });
    expect(folded[2]).toEqual(replies[6]);
  });

  it('reads a saved capture as capture-pane -p answers it: one newline dropped, the placeholder empty', () => {
    const text = (s: string) => savedText(Buffer.from(s, 'latin1')).toString('latin1');
    expect(text('a\x1b[1mb\\c\n')).toBe('a\x1b[1mb\\c');
    expect(text('row\n\n')).toBe('row\n');
    expect(text('x')).toBe('');
    expect(text('\x1b[')).toBe('\x1b[');
  });
});
