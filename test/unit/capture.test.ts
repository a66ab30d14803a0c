/**
 * How a capture is read (src/tmux/capture.ts): which tmux versions go through a paste buffer,
 * and `show-buffer`'s vis(3) encoding reversed byte for byte.
 */
import { describe, expect, it } from 'vitest';
import { captureLines, captureReplies, captureWayOf, CAPTURE_BUFFER, unvis } from '../../src/tmux/capture.js';
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

  it('builds one line: the placeholder, the capture into the buffer, show-buffer, delete-buffer', () => {
    const steps = ['display-message -p x', { capture: ['-e', '-t', '%3'] }];
    expect(captureLines('print', steps)).toEqual(['display-message -p x', 'capture-pane -p -e -t %3']);
    expect(captureLines('buffer', steps)).toEqual([
      'display-message -p x',
      `set-buffer -b ${CAPTURE_BUFFER} -- x`,
      `capture-pane -e -t %3 -b ${CAPTURE_BUFFER}`,
      `show-buffer -b ${CAPTURE_BUFFER}`,
      `delete-buffer -b ${CAPTURE_BUFFER}`,
    ]);
  });

  it('folds the replies back to one per step: the text decoded, one newline dropped, the placeholder empty, a failure as tmux said it', () => {
    const steps = ['display-message -p x', { capture: ['-t', '%3'] }, { capture: ['-a', '-q', '-t', '%3'] }, { capture: ['-t', '%9'] }];
    const ok = reply('');
    const replies = [
      reply('x'),
      ...[ok, ok, reply('a\\033[1mb\\\\c\n'), ok],
      ...[ok, ok, reply('x'), ok],
      ...[ok, reply("can't find pane: %9", false), reply('not run', false), reply('not run', false)],
    ];
    const folded = captureReplies('buffer', steps, replies);
    expect(folded.map((r) => [r.ok, r.body.toString('latin1')])).toEqual([
      [true, 'x'],
      [true, 'a\x1b[1mb\\c'],
      [true, ''],
      [false, "can't find pane: %9"],
    ]);
    // From 3.4 show-buffer prints the text as it is: nothing is decoded.
    const raw = captureReplies('gated-buffer', [{ capture: ['-t', '%3'] }], [ok, ok, reply('a\\033b\n'), ok]);
    expect(raw[0]!.body.toString('latin1')).toBe('a\\033b');
  });
});

describe('unvis', () => {
  const decode = (s: string) => unvis(Buffer.from(s, 'latin1')).toString('latin1');

  it('reverses octal escapes of one to three digits, NUL included', () => {
    expect(decode('\\033[31mred\\033[0m')).toBe('\x1b[31mred\x1b[0m');
    expect(decode('\\0a')).toBe('\0a');
    // NUL before an octal digit is written \000, so the digit after it stays a digit.
    expect(decode('\\0000')).toBe('\x000');
    expect(decode('\\377\\200')).toBe('\xff\x80');
  });

  it('reverses the C escapes and a backslash before any other character', () => {
    expect(decode('a\\tb\\rc\\bd\\ae\\vf\\fg\\sh\\ni')).toBe('a\tb\rc\bd\x07e\x0bf\x0cg h\ni');
    expect(decode('\\\\ \\$HOME \\${x} $1 $')).toBe('\\ $HOME ${x} $1 $');
  });

  it('leaves text without a backslash as it is (UTF-8 and newlines included)', () => {
    const text = Buffer.from('wide 中文 😀\nnext line\n', 'utf8');
    expect(unvis(text).equals(text)).toBe(true);
    expect(unvis(Buffer.from('x\\\\\u4e2d', 'utf8')).toString('utf8')).toBe('x\\\u4e2d');
  });

  it('keeps a lone backslash at the very end', () => {
    expect(decode('end\\')).toBe('end\\');
  });
});
