import { describe, expect, it } from 'vitest';
import { encodeChunkFrame } from '../../src/protocol/frames.js';
import { StreamPosition } from '../../src/reference-client/stream-position.js';

const chunk = (seq: number, text: string): Buffer => encodeChunkFrame(seq, Buffer.from(text));
const applied = (step: ReturnType<StreamPosition['chunk']>): string | null =>
  step === null || step === 'ask-snapshot' ? null : `${step.bytes.toString()}@${step.seq}`;

describe('StreamPosition', () => {
  it('hands on a chunk that continues lastSeq and moves to its end', () => {
    const position = new StreamPosition(3);
    expect(applied(position.chunk(chunk(6, 'def')))).toBe('def@6');
    expect(position.lastSeq).toBe(6);
  });

  it('cuts off the bytes already held, and skips a chunk held whole', () => {
    const position = new StreamPosition(4);
    expect(applied(position.chunk(chunk(6, 'def')))).toBe('ef@6');
    expect(position.chunk(chunk(6, 'def'))).toBeNull();
    expect(position.lastSeq).toBe(6);
  });

  it('applies nothing before a base: a fresh client waits for its snapshot', () => {
    const position = new StreamPosition(null);
    expect(position.chunk(chunk(3, 'abc'))).toBeNull();
    expect(position.lastSeq).toBeNull();
    position.snapshot(3);
    expect(applied(position.chunk(chunk(4, 'd')))).toBe('d@4');
  });

  it('never applies past a gap: asks for a snapshot once, until a base comes', () => {
    const position = new StreamPosition(3);
    expect(position.chunk(chunk(9, 'ghi'))).toBe('ask-snapshot');
    expect(position.chunk(chunk(12, 'jkl'))).toBeNull();
    expect(position.lastSeq).toBe(3);
    position.snapshot(12);
    expect(position.lastSeq).toBe(12);
    expect(position.chunk(chunk(20, 'xyz'))).toBe('ask-snapshot');
  });

  it('asks again after a reconnect, whose resume carries the position', () => {
    const position = new StreamPosition(3);
    expect(position.chunk(chunk(9, 'ghi'))).toBe('ask-snapshot');
    position.reopened();
    expect(position.chunk(chunk(9, 'ghi'))).toBe('ask-snapshot');
  });

  it('skips a binary frame that is not a chunk', () => {
    const position = new StreamPosition(3);
    expect(position.chunk(Buffer.from([1, 2]))).toBeNull();
    expect(position.lastSeq).toBe(3);
  });
});
