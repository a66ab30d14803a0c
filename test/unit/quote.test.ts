import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildControlCommand, escapeArgvArg, quoteControlArg } from '../../src/tmux/quote.js';
import { domainError } from '../helpers/domain-error.js';

/** Inverse of tmux's double-quote parsing for what quoteControlArg emits: `\ooo` -> byte. */
function unquote(quoted: string): Buffer {
  expect(quoted.startsWith('"') && quoted.endsWith('"')).toBe(true);
  const body = quoted.slice(1, -1);
  const out: number[] = [];
  for (let i = 0; i < body.length; i++) {
    if (body[i] === '\\') {
      out.push(parseInt(body.slice(i + 1, i + 4), 8));
      i += 3;
    } else {
      out.push(body.charCodeAt(i));
    }
  }
  return Buffer.from(out);
}

/** The line with every `\ooo` escape removed: what is left is read by tmux's parser as is. */
function unescapedPart(quoted: string): string {
  return quoted.slice(1, -1).replace(/\\[0-7]{3}/g, '');
}

const noNul = fc.string({ unit: 'binary' }).filter((s) => !s.includes('\0'));
const bytesNoNul = fc.uint8Array({ maxLength: 200 }).map((a) => Buffer.from(a.filter((b) => b !== 0)));

describe('quoteControlArg', () => {
  it('writes the example from the facts', () => {
    expect(quoteControlArg('a;b#{pane_id}$HOME\nx')).toBe('"a\\073b\\043\\173pane_id\\175\\044HOME\\012x"');
    expect(quoteControlArg('')).toBe('""');
    expect(quoteControlArg('é')).toBe('"\\303\\251"');
  });

  it('leaves nothing the parser would act on unescaped, and every byte survives', () => {
    fc.assert(
      fc.property(fc.oneof(noNul, bytesNoNul), (value) => {
        const quoted = quoteControlArg(value);
        const rest = unescapedPart(quoted);
        expect(rest).toMatch(/^[A-Za-z0-9 _.,:/=+@%-]*$/);
        for (const ch of [';', '#', '$', '~', '"', "'", '\\', '\n', '\r', '{', '}']) expect(rest).not.toContain(ch);
        const bytes = typeof value === 'string' ? Buffer.from(value, 'utf8') : value;
        expect(unquote(quoted).equals(bytes)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('refuses NUL', () => {
    expect(() => quoteControlArg('a\0b')).toThrow(domainError('invalid'));
    expect(() => quoteControlArg(Buffer.from([0x41, 0]))).toThrow(domainError('invalid'));
  });
});

describe('buildControlCommand', () => {
  it('leaves plain tokens bare and quotes everything else', () => {
    expect(buildControlCommand(['send-keys', '-t', '%3', '-H', '41'])).toBe('send-keys -t %3 -H 41');
    expect(buildControlCommand(['display-message', '-p', '-t', '%3', '#{pane_id}:x'])).toBe(
      'display-message -p -t %3 "\\043\\173pane_id\\175:x"',
    );
    expect(buildControlCommand(['refresh-client', '-f', 'pause-after=5'])).toBe('refresh-client -f "pause-after=5"');
    expect(buildControlCommand(['set-option', '-t', '=s1:', '@x', ''])).toBe('set-option -t "=s1:" @x ""');
    expect(buildControlCommand(['set-buffer', Buffer.from('a b')])).toBe('set-buffer "a b"');
  });

  it('is one line whose separators and quotes all come from the builder', () => {
    fc.assert(
      fc.property(fc.array(noNul, { maxLength: 6 }), (args) => {
        const line = buildControlCommand(['set-option', ...args]);
        expect(line).not.toMatch(/[\n\r;#$~'{}]/);
        expect(line.replace(/\\[0-7]{3}/g, '')).not.toContain('\\');
        // Splitting on spaces outside quotes yields exactly the arguments back.
        const words = line.match(/"[^"]*"|[^ "]+/g) ?? [];
        expect(words.length).toBe(args.length + 1);
        words.slice(1).forEach((w, i) => {
          const expected = Buffer.from(args[i]!, 'utf8');
          const got = w.startsWith('"') ? unquote(w) : Buffer.from(w, 'latin1');
          expect(got.equals(expected)).toBe(true);
        });
      }),
      { numRuns: 300 },
    );
  });

  it('refuses a missing or odd command name', () => {
    expect(() => buildControlCommand([])).toThrow(domainError('invalid'));
    expect(() => buildControlCommand(['kill-server;'])).toThrow(domainError('invalid'));
    expect(() => buildControlCommand([Buffer.from('send-keys')])).toThrow(domainError('invalid'));
  });
});

describe('escapeArgvArg', () => {
  it.each([
    ['a;', 'a\\;'],
    [';', '\\;'],
    ['a\\;', 'a\\\\;'],
    ['a;b', 'a;b'],
    ['', ''],
  ])('puts a backslash before a trailing semicolon only: %j becomes %j', (arg, escaped) => {
    expect(escapeArgvArg(arg)).toBe(escaped);
  });

  it('is undone exactly by tmux\'s rule (drop the trailing ";", a "\\" before it becomes ";")', () => {
    // null: the argument would end the command instead of being one.
    const tmuxReads = (arg: string): string | null => {
      if (!arg.endsWith(';')) return arg;
      const body = arg.slice(0, -1);
      return body.endsWith('\\') ? `${body.slice(0, -1)};` : null;
    };
    fc.assert(
      fc.property(
        fc.oneof(
          noNul,
          noNul.map((s) => `${s};`),
          noNul.map((s) => `${s}\\;`),
        ),
        (value) => {
          expect(tmuxReads(escapeArgvArg(value))).toBe(value);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('refuses NUL', () => {
    expect(() => escapeArgvArg('a\0')).toThrow(domainError('invalid'));
  });
});
