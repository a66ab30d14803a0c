/**
 * When a stream client counts as behind: a queue that stays full (a slow link), or one past
 * the memory bound; never a fast reader's momentary stall.
 */
import { describe, expect, it } from 'vitest';
import { QueueLag } from '../../src/stream/queue-lag.js';

const MARKS = { high: 16_000, low: 500, maxLagMs: 2000 };

describe('QueueLag', () => {
  it('a reader that stalls for a moment and drains again is never behind, however often', () => {
    const lag = new QueueLag(MARKS);
    for (let t = 0; t < 60_000; t += 1000) {
      // 900 ms with a full-ish queue, then drained.
      for (let dt = 0; dt < 900; dt += 10) expect(lag.behind(15_000, t + dt)).toBe(false);
      expect(lag.behind(100, t + 950)).toBe(false);
    }
  });

  it('a queue that stays over the low mark longer than the lag bound is behind', () => {
    const lag = new QueueLag(MARKS);
    expect(lag.behind(600, 0)).toBe(false);
    expect(lag.behind(5000, 1000)).toBe(false);
    expect(lag.behind(800, 2000)).toBe(false);
    expect(lag.behind(800, 2001)).toBe(true);
  });

  it('past the high mark a client is behind at once: memory stays bounded whatever the time', () => {
    const lag = new QueueLag(MARKS);
    expect(lag.behind(16_001, 0)).toBe(true);
  });

  it('reset forgets how long the queue was full (a client starting over from a snapshot)', () => {
    const lag = new QueueLag(MARKS);
    expect(lag.behind(600, 0)).toBe(false);
    lag.reset();
    expect(lag.behind(600, 2500)).toBe(false);
    expect(lag.behind(600, 4400)).toBe(false);
    expect(lag.behind(600, 4501)).toBe(true);
  });
});
