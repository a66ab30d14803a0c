/**
 * The pane stream coalesces a turn's output into one chunk, but sends the first output after
 * input at once (src/stream/pane-stream.ts `expectEcho`): a keystroke's echo does not wait for
 * the end of the turn.
 */
import { describe, expect, it } from 'vitest';
import { PaneStream } from '../../src/stream/pane-stream.js';
import type { RingChunk } from '../../src/stream/ring.js';

function listened(): { stream: PaneStream; chunks: string[] } {
  const stream = new PaneStream({ ringBytes: 64 * 1024, now: () => Date.UTC(2026, 0, 1) });
  const chunks: string[] = [];
  stream.subscribe({ chunk: (c: RingChunk) => chunks.push(c.data.toString('latin1')), gap: () => undefined });
  return { stream, chunks };
}

const turn = () => new Promise((r) => setImmediate(r));

describe('the first output after input', () => {
  it('goes out as it is appended; what follows in the turn is coalesced as before', async () => {
    const { stream, chunks } = listened();
    const start = stream.position;
    stream.expectEcho();
    stream.append(Buffer.from('a'));
    expect(chunks).toEqual(['a']);
    stream.append(Buffer.from('b'));
    stream.append(Buffer.from('c'));
    expect(chunks).toEqual(['a']);
    await turn();
    expect(chunks).toEqual(['a', 'bc']);
    expect(stream.ring.end).toBe(start + 3);
  });

  it('is once per input: output with no input before it waits for the end of the turn', async () => {
    const { stream, chunks } = listened();
    stream.append(Buffer.from('x'));
    expect(chunks).toEqual([]);
    await turn();
    expect(chunks).toEqual(['x']);
    stream.expectEcho();
    stream.expectEcho();
    stream.append(Buffer.from('y'));
    stream.append(Buffer.from('z'));
    expect(chunks).toEqual(['x', 'y']);
    await turn();
    expect(chunks).toEqual(['x', 'y', 'z']);
  });

  it('keeps the order when output of the turn was already waiting', async () => {
    const { stream, chunks } = listened();
    stream.append(Buffer.from('1'));
    stream.expectEcho();
    stream.append(Buffer.from('2'));
    expect(chunks).toEqual(['12']);
    await turn();
    expect(chunks).toEqual(['12']);
  });
});
