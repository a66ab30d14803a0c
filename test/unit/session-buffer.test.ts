import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SessionBuffer, type BufferOwner } from '../../src/actors/session-buffer.js';
import { silentLogger } from '../../src/log.js';
import type { DiskBufferLimits } from '../../src/machines/disk-buffer.machine.js';
import { PaneStream } from '../../src/stream/pane-stream.js';

const LIMITS: DiskBufferLimits = {
  sessionCapBytes: 1 << 20,
  globalCapBytes: 1 << 30,
  minFreeBytes: 0,
  resumeMarginBytes: 0,
  idleMs: 1e12,
};

/** The buffers as a whole, as far as one session's buffer sees them: the global room and its reservations. */
function ownerOf(limits: DiskBufferLimits): BufferOwner & { readonly reserved: () => number } {
  let reserved = 0;
  return {
    limits,
    deps: { log: silentLogger },
    globalRoom: () => limits.globalCapBytes - reserved,
    reserve: (bytes) => void (reserved += bytes),
    release: (bytes) => void (reserved -= bytes),
    written: () => undefined,
    reserved: () => reserved,
  };
}

/** Output of a turn: what the pane printed, flushed to the stream's listeners as one chunk. */
function print(stream: PaneStream, text: string): void {
  stream.append(Buffer.from(text));
  stream.flush();
}

/** The `.idx` file as `[file offset, stream position]` lines. */
function indexOf(path: string): [number, number][] {
  return readFileSync(path, 'utf8')
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => l.split(' ').map(Number) as [number, number]);
}

describe('a session buffer', () => {
  let dir: string;
  let paths: { log: string; idx: string };
  const buffers: SessionBuffer[] = [];

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tether-session-buffer-'));
    paths = { log: join(dir, 's.log'), idx: join(dir, 's.idx') };
  });

  afterEach(async () => {
    for (const b of buffers.splice(0)) await b.close(false);
    rmSync(dir, { recursive: true, force: true });
  });

  function bufferOf(limits = LIMITS): { buffer: SessionBuffer; stream: PaneStream; owner: ReturnType<typeof ownerOf> } {
    const owner = ownerOf(limits);
    const buffer = new SessionBuffer('s', paths, 0, owner, limits);
    buffers.push(buffer);
    const stream = new PaneStream({ ringBytes: 1 << 20, now: () => Date.now() });
    buffer.attach(stream);
    return { buffer, stream, owner };
  }

  it('writes a batch as the stream had it, with an index line at its start and wherever the stream jumped inside it', async () => {
    const { buffer, stream, owner } = bufferOf();
    const first = stream.position;
    print(stream, 'one ');
    print(stream, 'two ');
    const jumped = stream.gap();
    print(stream, 'three');
    await buffer.flush();
    expect(readFileSync(paths.log, 'latin1')).toBe('one two three');
    expect(indexOf(paths.idx)).toEqual([
      [0, first],
      [8, jumped],
    ]);

    // The next batch continues the file where the stream continues: no new line.
    print(stream, ' four');
    await buffer.flush();
    expect(readFileSync(paths.log, 'latin1')).toBe('one two three four');
    expect(indexOf(paths.idx)).toHaveLength(2);

    // A jump between two batches: a line at the file's end.
    const again = stream.gap();
    print(stream, '!');
    await buffer.flush();
    expect(indexOf(paths.idx).at(-1)).toEqual([18, again]);
    expect(owner.reserved()).toBe(0);
  });

  it('keeps the bytes it was given, not the buffer: a caller reusing its buffer changes nothing written', async () => {
    const { buffer } = bufferOf();
    const data = Buffer.from('agent output\r\n');
    buffer.chunk({ start: 100, end: 100 + data.length, data });
    data.fill(0x21);
    const large = Buffer.alloc(300_000, 0x61);
    buffer.chunk({ start: 100 + data.length, end: 100 + data.length + large.length, data: large });
    large.fill(0x62);
    await buffer.flush();
    const file = readFileSync(paths.log, 'latin1');
    expect(file.slice(0, 14)).toBe('agent output\r\n');
    expect(file.length).toBe(14 + 300_000);
    expect(/^a+$/.test(file.slice(14))).toBe(true);
    expect(indexOf(paths.idx)).toEqual([[0, 100]]);
  });

  it('cuts a batch to the session cap, indexing only what was written, and then writes nothing', async () => {
    const { buffer, stream, owner } = bufferOf({ ...LIMITS, sessionCapBytes: 10 });
    const first = stream.position;
    print(stream, '0123456');
    stream.gap();
    print(stream, '789abcdef');
    const late = stream.gap();
    print(stream, 'never');
    await buffer.flush();
    expect(readFileSync(paths.log, 'latin1')).toBe('0123456789');
    const index = indexOf(paths.idx);
    expect(index).toHaveLength(2);
    expect(index[0]).toEqual([0, first]);
    expect(index.some(([, position]) => position === late)).toBe(false);
    print(stream, 'more');
    await buffer.flush();
    expect(readFileSync(paths.log, 'latin1')).toBe('0123456789');
    expect(owner.reserved()).toBe(0);
  });
});
