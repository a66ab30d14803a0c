import { describe, expect, it } from 'vitest';
import { livePaneCounter } from '../../src/runtime/heap.js';

describe('livePaneCounter', () => {
  it('fits the young generation to the number of live panes as they come and go', () => {
    const seen: number[] = [];
    const panes = livePaneCounter((n) => seen.push(n));
    panes.added();
    panes.added();
    panes.removed();
    panes.added();
    expect(seen).toEqual([1, 2, 1, 2]);
  });
});
