import { afterEach, describe, expect, it } from 'vitest';
import { PaneStream } from '../../src/stream/pane-stream.js';
import { WarmSnapshots } from '../../src/stream/warm-snapshots.js';
import type { PaneSnapshot, PaneState } from '../../src/tmux/snapshot.js';

describe('warm snapshots', () => {
  let warm: WarmSnapshots | null = null;
  afterEach(() => warm?.dispose());

  it('let go of a capture as soon as the ring has moved past it', async () => {
    // A busy pane's capture (its whole history) can serve no snapshot once the ring no longer
    // holds the bytes after it. Kept until the next capture, which a pane that keeps printing
    // never gets, it was a few MB a busy session for hours (docs/benchmarks.md).
    const stream = new PaneStream({ ringBytes: 64 * 1024, now: () => Date.now() });
    const history = Buffer.alloc(512 * 1024, 0x61);
    const link = {
      linked: true,
      whenLinked: () => Promise.resolve(),
      capture: (): Promise<PaneSnapshot> =>
        Promise.resolve({ data: history, screen: history.subarray(0, 4096), position: stream.position, state: {} as PaneState }),
    };
    warm = new WarmSnapshots(stream, link, () => Date.now(), true);
    await warm.snapshot(); // a phone asked: tmux captured, and the capture is kept warm
    expect(warm.bytes).toBe(history.length + 4096);

    stream.append(Buffer.alloc(1024, 0x62));
    stream.flush();
    warm.touched();
    expect(warm.bytes).toBe(history.length + 4096); // the ring still holds what follows it: still useful

    for (let i = 0; i < 100; i++) {
      stream.append(Buffer.alloc(1024, 0x63));
      stream.flush();
      warm.touched();
    }
    expect(stream.ring.start).toBeGreaterThan(0);
    expect(warm.bytes).toBe(0);
  });
});
