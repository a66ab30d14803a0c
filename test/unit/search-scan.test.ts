import fc from 'fast-check';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { EscapeFolder } from '../../src/history/escape-fold.js';
import { cleanLine, MAX_LINE_BYTES, MAX_SHOWN_CHARS, SCAN_BLOCK_BYTES, searchBuffer } from '../../src/history/search-scan.js';

const dir = mkdtempSync(join(tmpdir(), 'tether-search-scan-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let fileCount = 0;

/** A buffer file holding `data`, its index `idx` (one mark at 0 by default). */
function bufferFile(data: Buffer | string, idx = '0 0\n') {
  const name = join(dir, `b${fileCount++}`);
  writeFileSync(`${name}.log`, data);
  writeFileSync(`${name}.idx`, idx);
  return { log: `${name}.log`, idx: `${name}.idx` };
}

const lowerAscii = (s: string) => s.replace(/[A-Z]/g, (c) => c.toLowerCase());
const countLines = (s: string) => s.split('\n').length;

/** Pieces of terminal output: text, escapes of every kind, their parts, and broken ones. */
const fragment = fc.oneof(
  { weight: 3, arbitrary: fc.string({ maxLength: 6 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 3 }) },
  {
    weight: 6,
    arbitrary: fc.constantFrom(
      '\u001b',
      '\u0007',
      '\u001b\\',
      '\u009b',
      '\u009c',
      '\r',
      '\n',
      '\r\n',
      'ü',
      'Ü',
      '✓',
      '😀',
      'é',
      '[',
      ']',
      '(',
      ')',
      '#',
      ';',
      '?',
      '0',
      '12',
      '1234',
      '12345',
      ';5;',
      '38;2;255;0;0',
      'm',
      'K',
      'H',
      'q',
      'Z',
      'Q',
      'c',
      '~',
      '<',
      '>',
      '=',
      '-',
      '/',
      '&',
      '.',
      ':',
      '%',
      '@',
      '_',
      ' ',
      'Ab',
      '\u00c2',
      '\u001b[0m',
      '\u001b[32m',
      '\u001b[2K',
      '\u001b[?25l',
      '\u001b]0;title\u0007',
      '\u001b]8;;https://example.com/a?b=c\u001b\\',
      '\u009b1;2H',
      '\u001b]0;' + 'x'.repeat(5000) + '\u0007',
      '\u001b[' + '1;'.repeat(40) + 'm',
    ),
  },
);
const terminalText = fc.array(fragment, { maxLength: 60 }).map((parts) => parts.join(''));

describe('the byte-level fold', () => {
  it('equals stripVTControlCharacters then ASCII lower case, with the same lines, block after block', () => {
    // One folder for all runs: its memo of short escapes must never answer for another one.
    const folder = new EscapeFolder();
    fc.assert(
      fc.property(terminalText, (text) => {
        const raw = Buffer.from(text);
        const folded = folder.fold(raw);
        const want = lowerAscii(stripVTControlCharacters(text));
        expect(folded.bytes.toString('utf8')).toBe(want);
        expect(countLines(folded.bytes.toString('latin1'))).toBe(countLines(text));
        // Every newline maps back onto a newline of the raw block.
        for (let at = folded.bytes.indexOf(10); at >= 0; at = folded.bytes.indexOf(10, at + 1)) expect(raw[folded.rawOffset(at)]).toBe(10);
      }),
      { numRuns: 3000 },
    );
  });

  it('tells apart two short escapes its memo files under the same hash', () => {
    // ESC 0 ~ (all of it an escape) and ESC 1 _ (only ESC 1) hash alike: 31 * "0" + "~" = 31 * "1" + "_".
    const folder = new EscapeFolder();
    expect(folder.fold(Buffer.from('a\u001b0~b')).bytes.toString()).toBe('ab');
    expect(folder.fold(Buffer.from('a\u001b1_b')).bytes.toString()).toBe('a_b');
    expect(stripVTControlCharacters('a\u001b1_b')).toBe('a_b');
  });

  it('keeps every kept byte at its raw place', () => {
    const raw = Buffer.from('a\u001b[31mB\u001b]0;t\u0007c\u009b2J d\u001b\\e\n');
    const folded = new EscapeFolder().fold(raw);
    // "\u001b\\" alone is no escape to the strip: it stays.
    expect(folded.bytes.toString()).toBe('abc d\u001b\\e\n');
    expect(stripVTControlCharacters(raw.toString())).toBe('aBc d\u001b\\e\n');
    expect([...'abc d'].map((_, i) => raw[folded.rawOffset(i)])).toEqual([...'aBc d'].map((c) => c.charCodeAt(0)));
  });
});

/** What a search should find, from the raw lines: the reference the scan is held to. */
function expectedLines(text: string, query: string): string[] {
  const ascii = [...query].every((c) => c <= '\u007f');
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  const fold = (s: string) => (ascii ? lowerAscii(s) : s.toLowerCase());
  return lines
    .filter((l) => fold(stripVTControlCharacters(l)).includes(fold(query)))
    .reverse()
    .map((l) => cleanLine(Buffer.from(l)));
}

describe('searchBuffer', () => {
  it('finds exactly the lines whose text, escapes removed, holds the query', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(terminalText, { minLength: 1, maxLength: 20 }), fc.nat(), fc.nat(), async (lines, pick, cut) => {
        const text = lines.join('\n');
        // A query taken from the text itself (so it is found), in another case.
        const plain = [...stripVTControlCharacters(text).replace(/\n/g, '')];
        const from = plain.length === 0 ? 0 : pick % plain.length;
        const query =
          plain
            .slice(from, from + 1 + (cut % 8))
            .join('')
            .toUpperCase() || 'x';
        // The service refuses control characters in a query.
        if ([...query].some((c) => c < ' ' || c === '\u007f')) return;
        const result = await searchBuffer(bufferFile(text), query, 1000);
        expect(result.matches.map((m) => m.line)).toEqual(expectedLines(text, query));
        expect(result.complete).toBe(true);
      }),
      { numRuns: 150 },
    );
  });

  it('answers newest first, one match per line, with two lines of context, CR dropped', async () => {
    const text = ['one', 'two hello', 'three', 'four', 'hello five hello', 'six', 'seven', 'eight'].join('\r\n') + '\r\n';
    const result = await searchBuffer(bufferFile(text), 'hello', 50);
    expect(result.matches).toEqual([
      { seq: text.indexOf('four') + 6, line: 'hello five hello', before: ['three', 'four'], after: ['six', 'seven'] },
      { seq: text.indexOf('two'), line: 'two hello', before: ['one'], after: ['three', 'four'] },
    ]);
    expect(result).toMatchObject({ complete: true, scannedBytes: Buffer.byteLength(text) });
  });

  it('finds a query an escape splits, and removes escapes of every kind from what it shows', async () => {
    const text = 'x\nsay hel\u001b[1mlo\u001b[0m there\n\u001b]0;title\u0007\u009b31mHello\u001b]8;;http://x\u001b\\ link\u001b[K\ny\n';
    const result = await searchBuffer(bufferFile(text), 'hello', 50);
    expect(result.matches.map((m) => m.line)).toEqual(['Hello link', 'say hello there']);
    // The text of an escape is not searched.
    expect((await searchBuffer(bufferFile(text), 'title', 50)).matches).toEqual([]);
    expect((await searchBuffer(bufferFile(text), '1m', 50)).matches).toEqual([]);
  });

  it('ignores case: ASCII letters in any query, other letters by Unicode lower case', async () => {
    const text = 'HeLLo WORLD\nÜBER alles\nüber\nstraße\nnothing\n';
    const file = bufferFile(text);
    const lines = async (q: string) => (await searchBuffer(file, q, 50)).matches.map((m) => m.line);
    expect(await lines('hello world')).toEqual(['HeLLo WORLD']);
    expect(await lines('über')).toEqual(['über', 'ÜBER alles']);
    expect(await lines('Ü')).toEqual(['über', 'ÜBER alles']);
    expect(await lines('STRASSE')).toEqual([]);
    expect(await lines('STRAßE')).toEqual(['straße']);
  });

  it('lowers letters beyond ASCII onto ASCII only for a query that has such letters', async () => {
    // U+212A (Kelvin sign) lower-cases to k, U+0130 to i and a combining dot.
    const file = bufferFile('\u212aelvin \u0130stanbul\n');
    const lines = async (q: string) => (await searchBuffer(file, q, 50)).matches.map((m) => m.line);
    expect(await lines('kelvin')).toEqual([]);
    expect(await lines('kelvin \u0130stanbul')).toEqual(['\u212aelvin \u0130stanbul']);
    expect(await lines('\u0130STANBUL')).toEqual(['\u212aelvin \u0130stanbul']);
  });

  it('finds a line that crosses a block boundary, the query across the boundary', async () => {
    const head = 'first line\nsecond line\n';
    const line = 'line \u001b[1mneedle-across\u001b[0m\n';
    // Enough lines after it that the newest block begins between "needle" and "-across".
    const afterBytes = SCAN_BLOCK_BYTES + line.indexOf('needle') + 6 - line.length;
    const after = ('.'.repeat(99) + '\n').repeat(Math.floor(afterBytes / 100)) + '.'.repeat(afterBytes % 100).replace(/.$/, '\n');
    const text = head + line + after;
    expect(text.slice(text.length - SCAN_BLOCK_BYTES - 6, text.length - SCAN_BLOCK_BYTES + 7)).toBe('needle-across');
    const result = await searchBuffer(bufferFile(text), 'NEEDLE-ACROSS', 50);
    expect(result.matches).toEqual([
      { seq: head.length, line: 'line needle-across', before: ['first line', 'second line'], after: ['.'.repeat(99), '.'.repeat(99)] },
    ]);
    expect(result.complete).toBe(true);
  });

  it('searches a line longer than a line may be in parts, and shows the part that matched', async () => {
    const long = 'start ' + 'a'.repeat(SCAN_BLOCK_BYTES + MAX_LINE_BYTES) + ' the-needle ' + 'b'.repeat(1000);
    const text = `before\n${long}\nafter\n`;
    const result = await searchBuffer(bufferFile(text), 'the-needle', 50);
    expect(result.matches).toHaveLength(1);
    expect(result.matches[0]!.line).toBe('a'.repeat(MAX_SHOWN_CHARS) + '…');
    expect(result.matches[0]!.after).toEqual(['after']);
    expect(result.complete).toBe(true);
    // The part with the line's start is searched too.
    expect((await searchBuffer(bufferFile(text), 'START aaa', 50)).matches.map((m) => m.before)).toEqual([['before']]);
  });

  it('stops at the limit, newest first, and says the answer is not complete', async () => {
    const text = Array.from({ length: 30 }, (_, i) => `match ${i}`).join('\n') + '\n';
    const limited = await searchBuffer(bufferFile(text), 'match', 3);
    expect(limited.matches.map((m) => m.line)).toEqual(['match 29', 'match 28', 'match 27']);
    expect(limited.complete).toBe(false);
    const all = await searchBuffer(bufferFile(text), 'match', 100);
    expect(all.matches).toHaveLength(30);
    expect(all.complete).toBe(true);
  });

  it('gives each match its stream position through an index with gaps, or null before the first mark', async () => {
    const text = 'aaa\nbbb find\nccc\nddd find\neee find\n';
    // Offsets 0-3 have no position, 4-16 are positions 1000-1012, 17 on are 9000 on.
    const result = await searchBuffer(bufferFile(text, '4 1000\n17 9000\n'), 'find', 50);
    expect(result.matches.map((m) => m.seq)).toEqual([9009, 9000, 1000]);
    const unknown = await searchBuffer(bufferFile('find\nx\n', '2 50\n'), 'find', 50);
    expect(unknown.matches.map((m) => m.seq)).toEqual([null]);
  });

  it('answers an empty or missing buffer with nothing found', async () => {
    expect(await searchBuffer(bufferFile(''), 'x', 5)).toEqual({ matches: [], complete: true, scannedBytes: 0 });
    expect(await searchBuffer({ log: join(dir, 'none.log'), idx: join(dir, 'none.idx') }, 'x', 5)).toEqual({
      matches: [],
      complete: true,
      scannedBytes: 0,
    });
  });
});
