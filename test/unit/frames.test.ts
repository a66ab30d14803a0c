import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DomainError } from '../../src/errors.js';
import { domainError } from '../helpers/domain-error.js';
import { decodeChunkFrame, encodeChunkFrame, encodeServerFrame, encodeSnapshotFrame, parseClientFrame } from '../../src/protocol/frames.js';
import { illFormedAt } from '../../src/protocol/well-formed.js';

describe('chunk frames', () => {
  it('round-trip any sequence number below 2^53 and any bytes', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), fc.uint8Array({ maxLength: 300 }), (seq, bytes) => {
        const frame = encodeChunkFrame(seq, Buffer.from(bytes));
        expect(frame.length).toBe(8 + bytes.length);
        const out = decodeChunkFrame(frame);
        expect(out.seq).toBe(seq);
        expect(Buffer.compare(out.data, Buffer.from(bytes))).toBe(0);
      }),
    );
  });

  it('is big-endian u64 on the wire', () => {
    expect(encodeChunkFrame(2 ** 32 + 5, Buffer.from('A')).toString('hex')).toBe('000000010000000541');
    expect(encodeChunkFrame(Number.MAX_SAFE_INTEGER, Buffer.alloc(0)).toString('hex')).toBe('001fffffffffffff');
  });

  it('refuses numbers it cannot carry exactly and frames too short to hold a header', () => {
    expect(() => encodeChunkFrame(2 ** 53, Buffer.alloc(0))).toThrow(domainError('frame-malformed'));
    expect(() => encodeChunkFrame(-1, Buffer.alloc(0))).toThrow(domainError('frame-malformed'));
    expect(() => encodeChunkFrame(1.5, Buffer.alloc(0))).toThrow(domainError('frame-malformed'));
    expect(() => decodeChunkFrame(new Uint8Array(7))).toThrow(domainError('frame-malformed'));
    expect(() => decodeChunkFrame(Buffer.from('0020000000000000', 'hex'))).toThrow(domainError('frame-malformed'));
  });
});

describe('snapshot frames', () => {
  it('are the JSON of a snapshot frame, for any position below 2^53 and any bytes', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), fc.uint8Array({ maxLength: 300 }), (seq, bytes) => {
        const data = Buffer.from(bytes);
        const text = encodeSnapshotFrame(seq, data);
        expect(text).toBe(encodeServerFrame({ type: 'snapshot', seq, data: data.toString('base64') }));
        expect(JSON.parse(text)).toEqual({ type: 'snapshot', seq, data: data.toString('base64') });
      }),
    );
  });
});

describe('client frames', () => {
  it('accepts the five client frames', () => {
    expect(parseClientFrame('{"type":"resume","lastSeq":null}')).toEqual({ type: 'resume', lastSeq: null });
    expect(parseClientFrame('{"type":"resume","lastSeq":9007199254740991}')).toEqual({ type: 'resume', lastSeq: Number.MAX_SAFE_INTEGER });
    expect(parseClientFrame('{"type":"key","name":"enter"}')).toEqual({ type: 'key', name: 'enter' });
    expect(parseClientFrame('{"type":"keys","data":"a;b"}')).toEqual({ type: 'keys', data: 'a;b' });
    expect(parseClientFrame('{"type":"paste","data":"x"}')).toEqual({ type: 'paste', data: 'x' });
    // A surrogate pair is one character: well-formed.
    expect(parseClientFrame('{"type":"keys","data":"\\ud83d\\ude00"}')).toEqual({ type: 'keys', data: '\u{1f600}' });
    expect(parseClientFrame('{"type":"snapshot-request"}')).toEqual({ type: 'snapshot-request' });
  });

  it.each([
    ['not json', 'JSON'],
    ['[1]', 'JSON object'],
    ['"resume"', 'JSON object'],
    ['{"type":"nope"}', 'type'],
    ['{"lastSeq":1}', 'type'],
    ['{"type":"resume"}', 'resume'],
    ['{"type":"resume","lastSeq":-1}', 'lastSeq'],
    ['{"type":"resume","lastSeq":1.5}', 'lastSeq'],
    ['{"type":"resume","lastSeq":"1"}', 'lastSeq'],
    ['{"type":"resume","lastSeq":9007199254740992}', 'lastSeq'],
    ['{"type":"keys","data":5}', 'data'],
    ['{"type":"keys","data":"x","extra":1}', 'keys'],
    ['{"type":"key"}', 'key'],
    ['{"type":"keys","data":"a\\udfffb"}', 'data: text that is not well-formed Unicode'],
    ['{"type":"paste","data":"\\ud83d"}', 'data: text that is not well-formed Unicode'],
  ])('refuses %s, naming what is wrong', (text, mention) => {
    try {
      parseClientFrame(text);
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(DomainError);
      expect((err as DomainError).code).toBe('frame-malformed');
      expect((err as Error).message).toContain(mention);
    }
  });

  it('never throws anything but DomainError on random text', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.json(),
          fc.jsonValue().map((v) => JSON.stringify(v)),
        ),
        (text) => {
          try {
            parseClientFrame(text);
          } catch (err) {
            expect(err).toEqual(domainError('frame-malformed'));
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('well-formed text', () => {
  it('finds the first string, key or value, holding a lone surrogate, by its path', () => {
    expect(illFormedAt({ a: 'x', b: ['\u{1f600}', { c: 'y' }] })).toBeNull();
    expect(illFormedAt('\udfff')).toBe('/');
    expect(illFormedAt({ a: ['ok', 'x\ud800'] })).toBe('/a/1');
    expect(illFormedAt({ ['k\udc00']: 1 })).toBe('/k\ufffd');
    expect(illFormedAt(JSON.parse('{"description":"\\udfff1p"}'))).toBe('/description');
  });

  it('walks a body nested as deep as JSON.parse takes without running out of stack', () => {
    const deep = JSON.parse(`${'['.repeat(100_000)}"\\udfff"${']'.repeat(100_000)}`) as unknown;
    expect(illFormedAt(deep)).toBe(`${'/0'.repeat(100_000)}`);
  });
});
