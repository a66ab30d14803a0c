import { describe, expect, it } from 'vitest';
import { SgrPen } from '../../src/tmux/screen/sgr-pen.js';
import { MAX_NOTICE_BYTES, TermStateTracker } from '../../src/tmux/screen/term-state.js';

const feedSplit = (t: TermStateTracker, s: string) => {
  const b = Buffer.from(s);
  for (let i = 0; i < b.length; i++) t.feed(b.subarray(i, i + 1));
};

describe('SgrPen', () => {
  it('builds one sequence that sets the same pen from any state', () => {
    const pen = new SgrPen();
    pen.apply('1;31');
    pen.apply('48;5;200');
    pen.apply('4:3');
    pen.apply('38;2;1;2;3');
    expect(pen.toSgr()).toBe('\x1b[0;1;38;2;1;2;3;48;5;200;4:3m');
    pen.apply('22;24;39');
    expect(pen.toSgr()).toBe('\x1b[0;48;5;200m');
    pen.apply('0');
    expect(pen.isDefault).toBe(true);
  });

  it('keeps bold and dim together, and clears both with 22', () => {
    const pen = new SgrPen();
    pen.apply('1');
    pen.apply('2');
    expect(pen.toSgr()).toBe('\x1b[0;1;2m');
    pen.apply('22');
    expect(pen.isDefault).toBe(true);
  });
});

describe('TermStateTracker', () => {
  it('follows bracketed paste and the pen across any split', () => {
    const t = new TermStateTracker();
    feedSplit(t, 'hello \x1b[?2004h\x1b[1;32mgreen');
    expect(t.bracketedPaste).toBe(true);
    expect(t.pen.toSgr()).toBe('\x1b[0;1;32m');
    feedSplit(t, '\x1b[?1;2004l\x1b[m');
    expect(t.bracketedPaste).toBe(false);
    expect(t.pen.isDefault).toBe(true);
  });

  it('reads each private mode of a list whole: a longer number, a sub-parameter or a prefix is another mode', () => {
    const t = new TermStateTracker();
    for (const seq of ['\x1b[?12004h', '\x1b[?2004:1h', '\x1b[?20h', '\x1b[2004h', '\x1b[?h', '\x1b[?;h']) feedSplit(t, seq);
    expect(t.bracketedPaste).toBe(false);
    feedSplit(t, '\x1b[?25;1;2004h');
    expect(t.bracketedPaste).toBe(true);
    feedSplit(t, '\x1b[31m\x1b[?7;1049h\x1b[44m\x1b[?1049;7l');
    expect(t.pen.toSgr()).toBe('\x1b[0;31m');
    feedSplit(t, '\x1b[0m\x1b[!p');
    expect(t.pen.isDefault).toBe(true);
  });

  it('ignores look-alikes inside OSC and DCS strings, and non-SGR m sequences', () => {
    const t = new TermStateTracker();
    feedSplit(t, '\x1b]0;title \x1b[?2004h \x07\x1bP+q\x1b[31m\x1b\\\x1b[>4;1m');
    expect(t.bracketedPaste).toBe(false);
    expect(t.pen.isDefault).toBe(true);
  });

  it('restores the pen saved by DECSC and by the alternate screen', () => {
    const t = new TermStateTracker();
    t.feed(Buffer.from('\x1b[31m\x1b7\x1b[32m\x1b8'));
    expect(t.pen.toSgr()).toBe('\x1b[0;31m');
    t.feed(Buffer.from('\x1b[?1049h\x1b[44m\x1b[?1049l'));
    expect(t.pen.toSgr()).toBe('\x1b[0;31m');
    t.feed(Buffer.from('\x1bc'));
    expect(t.pen.isDefault).toBe(true);
  });

  it('reads the same pen after hundreds of SGR sequences, whole or split at every byte, as a pen fed each one', () => {
    const seqs: string[] = [];
    let x = 7;
    const next = () => (x = (x * 1103515245 + 12345) % 2 ** 31);
    for (let i = 0; i < 400; i++) {
      const r = next() % 9;
      seqs.push(
        r === 0
          ? ''
          : r === 1
            ? '0'
            : r === 2
              ? `38;5;${next() % 256}`
              : r === 3
                ? `0;${31 + (next() % 7)}`
                : r === 4
                  ? '4:3'
                  : r === 5
                    ? '22'
                    : `${1 + (next() % 9)};${40 + (next() % 8)}`,
      );
    }
    const stream = Buffer.from(seqs.map((p, i) => `text ${i} \x1b[${p}m`).join(''), 'latin1');
    const reference = new SgrPen();
    for (const p of seqs) reference.apply(p);
    const whole = new TermStateTracker();
    whole.feed(stream);
    expect(whole.pen.toSgr()).toBe(reference.toSgr());
    const bytewise = new TermStateTracker();
    for (let i = 0; i < stream.length; i++) bytewise.feed(stream.subarray(i, i + 1));
    expect(bytewise.pen.toSgr()).toBe(reference.toSgr());
    // Reading the pen midway does not change where it ends.
    const peeked = new TermStateTracker();
    peeked.feed(stream.subarray(0, 1000));
    void peeked.capture();
    peeked.feed(stream.subarray(1000));
    expect(peeked.pen.toSgr()).toBe(reference.toSgr());
  });

  it('capture() is a copy that later bytes do not change', () => {
    const t = new TermStateTracker();
    t.feed(Buffer.from('\x1b[35m'));
    const at = t.capture();
    t.feed(Buffer.from('\x1b[0m'));
    expect(at.pen.toSgr()).toBe('\x1b[0;35m');
  });
});

describe('the notices a program writes to its terminal (OSC strings of the numbers listened for)', () => {
  const heard = (chunks: (string | Buffer)[], numbers = [9, 7501]) => {
    const out: [number, string][] = [];
    const t = new TermStateTracker(new Set(numbers), (code, text) => out.push([code, text]));
    for (const c of chunks) t.feed(typeof c === 'string' ? Buffer.from(c, 'utf8') : c);
    return { out, t };
  };

  it('hands on OSC 9 and 7501 strings, ended by BEL or ST, split at any byte, in order; other strings are skipped', () => {
    const stream =
      'a\x1b]0;title\x07b\x1b]9;Approval requested: touch ä\x07c\x1b]7501;state=blocked:app=codex:kind=permission\x1b\\d\x1bP1$r\x1b\\';
    const whole = heard([stream]).out;
    expect(whole).toEqual([
      [9, 'Approval requested: touch ä'],
      [7501, 'state=blocked:app=codex:kind=permission'],
    ]);
    const bytes = Buffer.from(stream, 'utf8');
    for (let at = 1; at < bytes.length; at++) expect(heard([bytes.subarray(0, at), bytes.subarray(at)]).out).toEqual(whole);
    // Numbers not listened for, or no listener: nothing.
    expect(heard([stream], [52]).out).toEqual([]);
  });

  it('cuts a long notice at MAX_NOTICE_BYTES and keeps tracking the pen after it', () => {
    const { out, t } = heard([`\x1b]9;${'x'.repeat(10_000)}\x07\x1b[1m`]);
    expect(out[0]![1].length).toBe(MAX_NOTICE_BYTES - 2);
    expect(t.capture().pen.toSgr()).toBe('\x1b[0;1m');
  });
});

describe("a character not yet whole at a snapshot's position", () => {
  it('holds the first bytes of a character split at any byte, outside an escape sequence, until its last byte comes', () => {
    // "…" (3 bytes), "é" (2) and an emoji (4) after coloured text, cut at every byte.
    const stream = Buffer.from('\x1b[36mThinking…\x1b[0m é 😀 done', 'utf8');
    for (let at = 1; at < stream.length; at++) {
      const t = new TermStateTracker();
      t.feed(stream.subarray(0, at));
      const head = stream.subarray(0, at);
      // The bytes a character began with and not yet finished, as the stream holds them.
      const lead = [...head.keys()].reverse().find((i) => (head[i]! & 0xc0) !== 0x80) ?? 0;
      const width = head[lead]! >= 0xf0 ? 4 : head[lead]! >= 0xe0 ? 3 : head[lead]! >= 0xc0 ? 2 : 1;
      const expected = width > at - lead ? head.subarray(lead) : Buffer.alloc(0);
      expect(t.capture().utf8Tail, `cut after byte ${at}`).toEqual(expected);
      // The same, fed a byte at a time.
      const bytewise = new TermStateTracker();
      for (let i = 0; i < at; i++) bytewise.feed(stream.subarray(i, i + 1));
      expect(bytewise.capture().utf8Tail, `byte by byte, cut after byte ${at}`).toEqual(expected);
    }
    // Inside an escape sequence tmux gives what is pending itself: nothing is held here.
    const t = new TermStateTracker();
    t.feed(Buffer.from('\x1b]0;ti\xe2', 'latin1'));
    expect(t.capture().utf8Tail.length).toBe(0);
  });
});
