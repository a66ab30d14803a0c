import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DomainError } from '../../src/errors.js';
import { ControlParser, type ControlParserLimits } from '../../src/tmux/control/control-codec.js';
import { decodeControlOutputData, encodeControlOutput } from '../../src/tmux/control/control-escape.js';
import type { ControlEvent } from '../../src/tmux/control/control-events.js';

const FIXTURES = new URL('../fixtures/', import.meta.url);

/** A parser whose events are collected in `events`. */
function recordingParser(limits?: Partial<ControlParserLimits>): { parser: ControlParser; events: ControlEvent[] } {
  const events: ControlEvent[] = [];
  return { parser: new ControlParser((e) => events.push(e), limits), events };
}

/** Every event the parser emits for `chunks`, after `end()`. */
function parse(chunks: readonly Buffer[], limits?: Partial<ControlParserLimits>): ControlEvent[] {
  const { parser, events } = recordingParser(limits);
  for (const c of chunks) parser.push(c);
  parser.end();
  return events;
}

/** Pushes `first`, then writes `second` (of the same length) over that very buffer and pushes it again, as a caller reusing its read buffer does. */
function pushThenRefill(parser: ControlParser, first: string, second: string): void {
  const buf = bytes(first);
  parser.push(buf);
  const refill = bytes(second);
  expect(refill.length).toBe(buf.length);
  refill.copy(buf);
  parser.push(buf);
}

const bytes = (s: string): Buffer => Buffer.from(s, 'latin1');
const hex = (h: string): Buffer => Buffer.from(h.replace(/\s+/g, ''), 'hex');

/** The DomainError code `fn` throws, or null. */
function codeOf(fn: () => void): string | null {
  try {
    fn();
    return null;
  } catch (err) {
    expect(err).toBeInstanceOf(DomainError);
    return (err as DomainError).code;
  }
}

describe('control-mode notifications', () => {
  const cases: [string, Buffer, ControlEvent][] = [
    [
      '%output: octal escapes, raw bytes >= 0x80 and 0x7f',
      // %output %3 \033[1mé\177\134\015\012
      hex('256f757470757420253320 5c3033335b316d c3a9 7f 5c313334 5c303135 5c303132 0a'),
      { type: 'output', paneId: '%3', data: hex('1b5b316d c3a9 7f 5c 0d 0a') },
    ],
    ['%output with no data', bytes('%output %12 \n'), { type: 'output', paneId: '%12', data: Buffer.alloc(0) }],
    [
      '%extended-output',
      bytes('%extended-output %3 1234 : hi\\012\n'),
      { type: 'extended-output', paneId: '%3', ageMs: 1234, data: bytes('hi\n') },
    ],
    [
      '%extended-output with fields tmux may add before " : "',
      bytes('%extended-output %3 7 future x : a : b\\012\n'),
      { type: 'extended-output', paneId: '%3', ageMs: 7, data: bytes('a : b\n') },
    ],
    ['%exit', bytes('%exit\n'), { type: 'exit', reason: null }],
    ['%exit with a reason', bytes('%exit server exited\n'), { type: 'exit', reason: 'server exited' }],
    ['%sessions-changed', bytes('%sessions-changed\n'), { type: 'sessions-changed' }],
    ['%session-changed', bytes('%session-changed $1 my work\n'), { type: 'session-changed', sessionId: '$1', name: 'my work' }],
    [
      '%client-session-changed',
      bytes('%client-session-changed /dev/pts/4 $2 main\n'),
      { type: 'client-session-changed', client: '/dev/pts/4', sessionId: '$2', name: 'main' },
    ],
    ['%window-add', bytes('%window-add @2\n'), { type: 'window-add', windowId: '@2' }],
    ['%window-close', bytes('%window-close @2\n'), { type: 'window-close', windowId: '@2' }],
    ['%unlinked-window-add', bytes('%unlinked-window-add @9\n'), { type: 'unlinked-window-add', windowId: '@9' }],
    ['%unlinked-window-close', bytes('%unlinked-window-close @9\n'), { type: 'unlinked-window-close', windowId: '@9' }],
    [
      '%session-window-changed',
      bytes('%session-window-changed $1 @4\n'),
      { type: 'session-window-changed', sessionId: '$1', windowId: '@4' },
    ],
    [
      '%layout-change',
      bytes('%layout-change @1 b25d,80x24,0,0,0 b25d,80x24,0,0,0 *\n'),
      { type: 'layout-change', windowId: '@1', layout: 'b25d,80x24,0,0,0' },
    ],
    ['%pause', bytes('%pause %3\n'), { type: 'pause', paneId: '%3' }],
    ['%continue', bytes('%continue %3\n'), { type: 'continue', paneId: '%3' }],
    ['%pane-mode-changed', bytes('%pane-mode-changed %0\n'), { type: 'pane-mode-changed', paneId: '%0' }],
    [
      '%window-renamed (UTF-8 name with spaces)',
      hex('2577696e646f772d72656e616d656420403020 766920 c3a9 2e747874 0a'),
      { type: 'window-renamed', windowId: '@0', name: 'vi é.txt' },
    ],
    ['%session-renamed', bytes('%session-renamed $0 agent\n'), { type: 'session-renamed', sessionId: '$0', name: 'agent' }],
    ['%client-detached', bytes('%client-detached client-4242\n'), { type: 'client-detached', client: 'client-4242' }],
    ['%message', bytes('%message hello : world\n'), { type: 'message', text: 'hello : world' }],
    [
      'an unknown notification',
      bytes('%subscription-changed dead $0 @0 0 %0 : 1:0\n'),
      { type: 'notification', name: 'subscription-changed', args: 'dead $0 @0 0 %0 : 1:0' },
    ],
    ['an unknown notification without args', bytes('%config-error\n'), { type: 'notification', name: 'config-error', args: '' }],
    ['a known name with malformed args', bytes('%window-add 2\n'), { type: 'notification', name: 'window-add', args: '2' }],
    ['%begin with a malformed guard', bytes('%begin x 1 0\n'), { type: 'notification', name: 'begin', args: 'x 1 0' }],
    ['%end outside a block', bytes('%end 1 2 0\n'), { type: 'notification', name: 'end', args: '1 2 0' }],
    ['a line without %', bytes('stray text\n'), { type: 'notification', name: '', args: 'stray text' }],
    ['an empty line', bytes('\n'), { type: 'notification', name: '', args: '' }],
    ['a CR LF line ending', bytes('%output %1 ok\\015\r\n'), { type: 'output', paneId: '%1', data: bytes('ok\r') }],
  ];
  it.each(cases)('%s', (_name, input, expected) => {
    expect(parse([input])).toEqual([expected]);
  });
});

describe('control-mode reply blocks', () => {
  const reply = (ok: boolean, number: number, body: string, flags = 1): ControlEvent => ({
    type: 'reply',
    ok,
    time: 1700000000,
    number,
    flags,
    body: bytes(body),
  });

  it('an empty body', () => {
    expect(parse([bytes('%begin 1700000000 265 0\n%end 1700000000 265 0\n')])).toEqual([reply(true, 265, '', 0)]);
  });

  it('a multi-line body of raw lines, which may begin with %', () => {
    const stream = bytes('%begin 1700000000 7 1\nline one\n\n%output %1 not output\n%exit not exit\nlast\\012\n%end 1700000000 7 1\n');
    expect(parse([stream])).toEqual([reply(true, 7, 'line one\n\n%output %1 not output\n%exit not exit\nlast\\012')]);
  });

  it('raw bytes in a body, including UTF-8 and 0x00', () => {
    const stream = Buffer.concat([bytes('%begin 1700000000 8 1\n'), hex('c3a9 00 ff 09'), bytes('\n%end 1700000000 8 1\n')]);
    expect(parse([stream])).toEqual([{ ...reply(true, 8, ''), body: hex('c3a9 00 ff 09') }]);
  });

  it('a body line that looks like %end or %error with another time or number does not end the block', () => {
    const stream = bytes('%begin 1700000000 9 1\n%end 1700000000 8 1\n%error 1700000001 9 1\n%end 1700000000 9\n%end 1700000000 9 1\n');
    expect(parse([stream])).toEqual([reply(true, 9, '%end 1700000000 8 1\n%error 1700000001 9 1\n%end 1700000000 9')]);
  });

  it('%error ends the block with ok false', () => {
    const stream = bytes('%begin 1700000000 10 1\nunknown command: nope\n%error 1700000000 10 1\n');
    expect(parse([stream])).toEqual([reply(false, 10, 'unknown command: nope')]);
  });

  it('tolerates CR LF line endings', () => {
    const stream = bytes('%begin 1700000000 11 1\r\na\r\nb\r\n%end 1700000000 11 1\r\n');
    expect(parse([stream])).toEqual([reply(true, 11, 'a\nb')]);
  });

  it('notifications before and after a block keep their order', () => {
    const stream = bytes('%output %1 a\n%begin 1700000000 12 1\nx\n%end 1700000000 12 1\n%output %1 b\n');
    expect(parse([stream]).map((e) => e.type)).toEqual(['output', 'reply', 'output']);
  });
});

/** A stream with a bit of everything, lines straddling any chunking. */
const MIXED = Buffer.concat([
  bytes('%begin 1700000000 265 0\n%end 1700000000 265 0\n'),
  bytes('%session-changed $0 main\n'),
  encodeControlOutput('%0', hex('1b5b33316d 68c3 a9 6c6c6f 0d0a 5c 00 ff f09f8e89')),
  bytes('%begin 1700000000 266 1\r\nbody %end 1700000000 266 1\n%end 1700000000 1 1\n\n%end 1700000000 266 1\n'),
  bytes('%extended-output %0 12 : \\033[0m\\015\n'),
  bytes('%begin 1700000000 267 1\nno such pane\n%error 1700000000 267 1\n'),
  bytes('%layout-change @0 c4be,80x24,0,0,0 c4be,80x24,0,0,0 *\n'),
  encodeControlOutput('%0', Buffer.from('日本語 ✓\r\n')),
  bytes('junk\r\n%exit\n'),
]);

describe('every split point', () => {
  const whole = parse([MIXED]);

  it('the mixed stream parses to the events written', () => {
    expect(whole.map((e) => e.type)).toEqual([
      'reply',
      'session-changed',
      'output',
      'reply',
      'extended-output',
      'reply',
      'layout-change',
      'output',
      'notification',
      'exit',
    ]);
    expect(whole[3]).toMatchObject({ ok: true, number: 266, body: bytes('body %end 1700000000 266 1\n%end 1700000000 1 1\n') });
  });

  it('gives identical events at every two-way split', () => {
    for (let i = 1; i < MIXED.length; i++) {
      expect(parse([MIXED.subarray(0, i), MIXED.subarray(i)])).toEqual(whole);
    }
  });

  it('gives identical events byte by byte', () => {
    const chunks: Buffer[] = [];
    for (let i = 0; i < MIXED.length; i++) chunks.push(MIXED.subarray(i, i + 1));
    expect(parse(chunks)).toEqual(whole);
  });
});

/** One piece of a generated stream: pane output (possibly split over two lines) or a reply. */
type Piece = { kind: 'output'; pane: number; data: Uint8Array; cut: number } | { kind: 'reply'; ok: boolean; lines: Uint8Array[] };

const anyBytes = fc.oneof(
  fc.uint8Array({ maxLength: 300, size: 'max' }),
  fc.string({ unit: 'binary', maxLength: 100 }).map((s) => new Uint8Array(Buffer.from(s, 'utf8'))),
  fc.constant(new Uint8Array(Array.from({ length: 256 }, (_, i) => i))),
);
/** A raw reply line: any bytes but LF, and no trailing CR (that is read as a CR LF ending). */
const bodyLine = fc
  .oneof(
    fc.uint8Array({ maxLength: 40 }).map((a) => a.filter((b) => b !== 0x0a)),
    fc.constantFrom('%end 1700000000 1 1', '%error 1 2 3', '%output %1 x', '%begin 1 1 1', '').map((s) => new Uint8Array(bytes(s))),
  )
  .filter((a) => a[a.length - 1] !== 0x0d);
const piece: fc.Arbitrary<Piece> = fc.oneof(
  fc.record({ kind: fc.constant('output' as const), pane: fc.nat(3), data: anyBytes, cut: fc.nat() }),
  fc.record({ kind: fc.constant('reply' as const), ok: fc.boolean(), lines: fc.array(bodyLine, { maxLength: 4 }) }),
);

function encodePieces(pieces: readonly Piece[]): Buffer {
  const out: Buffer[] = [];
  pieces.forEach((p, n) => {
    if (p.kind === 'output') {
      // Cut anywhere, as tmux does: a UTF-8 sequence may straddle two %output lines.
      const data = Buffer.from(p.data);
      const cut = data.length === 0 ? 0 : p.cut % (data.length + 1);
      out.push(encodeControlOutput(`%${p.pane}`, data.subarray(0, cut)), encodeControlOutput(`%${p.pane}`, data.subarray(cut)));
    } else {
      const guard = `1700000000 ${1000 + n} 1`;
      out.push(bytes(`%begin ${guard}\n`));
      for (const line of p.lines) out.push(Buffer.from(line), bytes('\n'));
      out.push(bytes(`%${p.ok ? 'end' : 'error'} ${guard}\n`));
    }
  });
  return Buffer.concat(out);
}

/** Splits `buf` at the given (unsorted, possibly repeated) offsets. */
function chunked(buf: Buffer, cuts: readonly number[]): Buffer[] {
  const points = [...new Set(cuts.map((c) => c % (buf.length + 1)))].sort((a, b) => a - b);
  const chunks: Buffer[] = [];
  let at = 0;
  for (const p of [...points, buf.length]) {
    chunks.push(buf.subarray(at, p));
    at = p;
  }
  return chunks;
}

describe('round trip', () => {
  it('arbitrary bytes and reply blocks, in any chunking, come out as they went in', () => {
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 12 }), fc.array(fc.nat(), { maxLength: 20 }), (pieces, cuts) => {
        const events = parse(chunked(encodePieces(pieces), cuts));
        const expected: ControlEvent[] = [];
        pieces.forEach((p, n) => {
          if (p.kind === 'output') return;
          const body = Buffer.concat(p.lines.flatMap((l, i) => (i === 0 ? [Buffer.from(l)] : [bytes('\n'), Buffer.from(l)])));
          expected.push({ type: 'reply', ok: p.ok, time: 1700000000, number: 1000 + n, flags: 1, body });
        });
        expect(events.filter((e) => e.type === 'reply')).toEqual(expected);
        for (let pane = 0; pane <= 3; pane++) {
          const sent = Buffer.concat(pieces.flatMap((p) => (p.kind === 'output' && p.pane === pane ? [Buffer.from(p.data)] : [])));
          const got = Buffer.concat(events.flatMap((e) => (e.type === 'output' && e.paneId === `%${pane}` ? [e.data] : [])));
          expect(got.equals(sent)).toBe(true);
        }
        expect(events.every((e) => e.type === 'output' || e.type === 'reply')).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('decodeControlOutputData inverts encodeControlOutput for any bytes', () => {
    fc.assert(
      fc.property(anyBytes, (data) => {
        const line = encodeControlOutput('%7', Buffer.from(data));
        expect(line.subarray(0, 11).toString('latin1')).toBe('%output %7 ');
        expect(line[line.length - 1]).toBe(0x0a);
        const escaped = line.subarray(11, line.length - 1);
        expect(escaped.every((b) => b >= 0x20)).toBe(true);
        expect(decodeControlOutputData(escaped).equals(Buffer.from(data))).toBe(true);
      }),
    );
  });
});

describe('escaping, as tmux writes it', () => {
  it('encodes every byte < 0x20 and the backslash as three octal digits, and nothing else', () => {
    const line = encodeControlOutput('%3', hex('00 09 0a 1b 1f 20 5c 7e 7f 80 ff'));
    expect(line.toString('latin1')).toBe('%output %3 \\000\\011\\012\\033\\037 \\134~\x7f\x80\xff\n');
  });

  it('keeps a backslash that is not followed by three octal digits', () => {
    expect(decodeControlOutputData(bytes('a\\9zz\\8000\\400\\01'))).toEqual(bytes('a\\9zz\\8000\\400\\01'));
    expect(decodeControlOutputData(bytes('\\\\101'))).toEqual(bytes('\\A'));
  });

  it('decodes any mix of escapes, stray backslashes and digits, short or long, as the rule says', () => {
    // The rule, written plainly: "\\" + three octal digits (the first 0-3) is one byte; any other
    // backslash is itself. Long inputs take the WebAssembly decoder, short ones the JS loop.
    const byRule = (s: Uint8Array): Buffer => {
      const out: number[] = [];
      for (let i = 0; i < s.length; i++) {
        const [a, b, c] = [s[i + 1], s[i + 2], s[i + 3]].map((x) => (x === undefined ? -1 : x - 0x30));
        if (s[i] === 0x5c && a! >= 0 && a! < 4 && b! >= 0 && b! < 8 && c! >= 0 && c! < 8) {
          out.push((a! << 6) | (b! << 3) | c!);
          i += 3;
        } else out.push(s[i]!);
      }
      return Buffer.from(out);
    };
    const alphabet = fc.constantFrom(...bytes('\\\\01234789ax \x1b'));
    fc.assert(
      fc.property(fc.array(alphabet, { maxLength: 400, size: 'max' }), fc.nat(3), (chars, pad) => {
        const raw = new Uint8Array([...bytes('p'.repeat(pad)), ...chars]);
        const { parser, events } = recordingParser();
        parser.push(Buffer.concat([bytes('%output %1 '), raw, bytes('\n')]));
        expect(events).toEqual([{ type: 'output', paneId: '%1', data: byRule(raw) }]);
        expect(decodeControlOutputData(Buffer.from(raw))).toEqual(byRule(raw));
      }),
      { numRuns: 2000 },
    );
  });

  it('hands out output the parser does not reuse or share with the input', () => {
    const { parser, events } = recordingParser();
    const first = encodeControlOutput('%1', bytes('first line of output'));
    parser.push(first);
    parser.push(encodeControlOutput('%1', bytes('SECOND')));
    first.fill(0x21);
    expect(events.map((e) => (e.type === 'output' ? e.data.toString() : ''))).toEqual(['first line of output', 'SECOND']);
  });

  it('reads a buffer the caller refills and pushes again afresh', () => {
    const { parser, events } = recordingParser();
    pushThenRefill(parser, '%output %1 plainplain\n%output %1 x\\134y\n', '%output %1 \\101BCDEFG\n%output %1 x\\134y\n');
    expect(events.map((e) => (e.type === 'output' ? e.data.toString() : ''))).toEqual(['plainplain', 'x\\y', 'ABCDEFG', 'x\\y']);
  });

  it('keeps a reply body line whose chunk the caller refills before the %end', () => {
    const { parser, events } = recordingParser();
    pushThenRefill(parser, '%begin 1 2 1\nfirst\n', 'second line!\nxyzab\n');
    parser.push(bytes('%end 1 2 1\n'));
    expect(events).toMatchObject([{ type: 'reply', body: bytes('first\nsecond line!\nxyzab') }]);
  });
});

describe('a recorded tmux 3.3a control-mode stream (scripts/record-control-fixture.sh)', () => {
  const stream = readFileSync(new URL('control-stream.bin', FIXTURES));
  const expected = readFileSync(new URL('control-stream.expected.bin', FIXTURES));

  it.each([1, 7, 4096, stream.length])('decodes to exactly the bytes the pane wrote (%i-byte chunks)', (size) => {
    const chunks: Buffer[] = [];
    for (let i = 0; i < stream.length; i += size) chunks.push(stream.subarray(i, i + size));
    const events = parse(chunks);
    // The first block answers the attach itself.
    expect(events[0]).toMatchObject({ type: 'reply', ok: true, flags: 0, body: Buffer.alloc(0) });
    const outputs = events.filter((e) => e.type === 'output');
    expect(outputs.every((e) => e.paneId === '%0')).toBe(true);
    expect(Buffer.concat(outputs.map((e) => e.data)).equals(expected)).toBe(true);
    // The display-message reply sits between the two halves of the output.
    const at = events.findIndex((e) => e.type === 'reply' && e.flags === 1);
    expect(events[at]).toMatchObject({ type: 'reply', ok: true, flags: 1, body: bytes('between rec \\ ok') });
    expect(events.slice(0, at).some((e) => e.type === 'output')).toBe(true);
    expect(events.slice(at).some((e) => e.type === 'output')).toBe(true);
    expect(events.at(-1)).toEqual({ type: 'exit', reason: null });
  });

  it('contains %output lines cut inside a UTF-8 sequence, and joining them restores the text', () => {
    const outputs = parse([stream]).flatMap((e) => (e.type === 'output' ? [e.data] : []));
    const cutInside = outputs.filter((d) => {
      // A lead byte near the end whose sequence runs past it.
      for (let back = 1; back <= 3 && back <= d.length; back++) {
        const b = d[d.length - back] as number;
        if (b >= 0xc0) return back < (b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : 2);
        if (b < 0x80) return false;
      }
      return false;
    });
    expect(cutInside.length).toBeGreaterThan(0);
    expect(Buffer.concat(outputs).toString('utf8')).toContain('é日🎉é日🎉');
  });
});

describe('limits and the end of the stream', () => {
  it('refuses an over-long line as soon as the buffered bytes pass the limit, before its newline', () => {
    const parser = new ControlParser(() => undefined, { maxLineBytes: 1000 });
    parser.push(bytes('%output %1 '));
    parser.push(Buffer.alloc(600, 0x61));
    expect(codeOf(() => parser.push(Buffer.alloc(600, 0x61)))).toBe('control-line-too-long');
    expect(codeOf(() => parser.push(bytes('\n')))).toBe('control-line-too-long');
  });

  it('refuses an over-long line that arrives whole in one chunk, or split with its newline', () => {
    const line = Buffer.concat([bytes('%output %1 '), Buffer.alloc(1000, 0x61), bytes('\n')]);
    expect(codeOf(() => parse([line], { maxLineBytes: 1000 }))).toBe('control-line-too-long');
    expect(codeOf(() => parse([line.subarray(0, 500), line.subarray(500)], { maxLineBytes: 1000 }))).toBe('control-line-too-long');
    expect(parse([line], { maxLineBytes: line.length - 1 })).toHaveLength(1);
  });

  it('refuses a 17 MiB line under the default limit without waiting for its end', () => {
    const parser = new ControlParser(() => undefined);
    const mib = Buffer.alloc(1024 * 1024, 0x61);
    let pushed = 0;
    const code = codeOf(() => {
      for (; pushed < 32; pushed++) parser.push(mib);
    });
    expect(code).toBe('control-line-too-long');
    expect(pushed).toBe(16);
  });

  it('refuses an over-large reply body before its %end arrives', () => {
    const { parser, events } = recordingParser({ maxReplyBytes: 100 });
    parser.push(bytes('%begin 1 2 1\n'));
    parser.push(Buffer.concat([Buffer.alloc(49, 0x62), bytes('\n'), Buffer.alloc(50, 0x62), bytes('\n')])); // 49 + 1 + 50 = 100
    expect(codeOf(() => parser.push(bytes('\n')))).toBe('control-reply-too-large');
    expect(events).toEqual([]);
    expect(codeOf(() => parser.push(bytes('%end 1 2 1\n')))).toBe('control-reply-too-large');
  });

  it('accepts a reply body of exactly the limit', () => {
    const stream = Buffer.concat([
      bytes('%begin 1 2 1\n'),
      Buffer.alloc(49, 0x62),
      bytes('\n'),
      Buffer.alloc(50, 0x62),
      bytes('\n%end 1 2 1\n'),
    ]);
    expect(parse([stream], { maxReplyBytes: 100 })).toMatchObject([{ type: 'reply', body: { length: 100 } }]);
  });

  it('a partial line or an open block at the end is control-unexpected-end; a clean end is not', () => {
    expect(codeOf(() => parse([bytes('%output %1 abc')]))).toBe('control-unexpected-end');
    expect(codeOf(() => parse([bytes('%begin 1 2 1\nbody\n')]))).toBe('control-unexpected-end');
    expect(codeOf(() => parse([bytes('%begin 1 2 1\n')]))).toBe('control-unexpected-end');
    expect(parse([bytes('%begin 1 2 1\n%end 1 2 1\n%exit\n')]).map((e) => e.type)).toEqual(['reply', 'exit']);
    expect(parse([])).toEqual([]);
  });
});
