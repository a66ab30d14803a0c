import { afterEach, describe, expect, it, vi } from 'vitest';
import { PaneStream } from '../../src/stream/pane-stream.js';
import { WARM_BYTES_PER_SECOND, WARM_MIN_INTERVAL_MS, WarmCapturePace, WarmSnapshots } from '../../src/stream/warm-snapshots.js';
import type { PaneSnapshot, PaneState } from '../../src/tmux/screen/snapshot.js';

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

  it('paces the warm captures of many panes by their bytes, all panes together', async () => {
    // Twenty panes with full histories all go quiet at once: their captures (1 MiB each) are
    // spread at WARM_BYTES_PER_SECOND, not made back to back (docs/benchmarks.md "The warm-up's load").
    vi.useFakeTimers();
    const panes: WarmSnapshots[] = [];
    try {
      const history = Buffer.alloc(1024 * 1024, 0x61);
      const pace = new WarmCapturePace();
      const started: number[] = [];
      for (let i = 0; i < 20; i++) {
        const stream = new PaneStream({ ringBytes: 64 * 1024, now: () => Date.now() });
        stream.append(Buffer.from(`pane ${i}\n`));
        stream.flush();
        const link = {
          linked: true,
          whenLinked: () => Promise.resolve(),
          capture: (): Promise<PaneSnapshot> => {
            started.push(Date.now());
            return Promise.resolve({ data: history, screen: history.subarray(0, 4096), position: stream.position, state: {} as PaneState });
          },
        };
        const pane = new WarmSnapshots(stream, link, () => Date.now(), true, pace);
        panes.push(pane);
        pane.touched();
      }
      const t0 = Date.now();
      await vi.advanceTimersByTimeAsync(60_000);
      // Every pane was captured once (the pace delays, it drops none)...
      expect(started.length).toBe(20);
      // ...and by any moment, the bytes captured since the first were at most the pace's (one capture of slack).
      for (const [i, at] of started.entries()) {
        expect(i * history.length).toBeLessThanOrEqual(((at - started[0]!) / 1000) * WARM_BYTES_PER_SECOND + history.length);
      }
      // Twenty MiB at the pace take seconds, not the one pass of the quiet timers.
      expect(started.at(-1)! - t0).toBeGreaterThan(((19 - 1) * history.length * 1000) / WARM_BYTES_PER_SECOND);
      expect(started.at(-1)! - t0).toBeLessThan(60_000 - WARM_MIN_INTERVAL_MS);
    } finally {
      for (const p of panes) p.dispose();
      vi.useRealTimers();
    }
  });
});
