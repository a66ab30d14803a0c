/**
 * The binding window (src/protocol/usage.ts `bindingWindow`, docs/api.md "Usage"): the window that
 * stops the agent first, the one at 100 % (of several, the one that resets last), else the most
 * used (of equals, the one that resets last; a window without a reset resets earliest); null
 * without windows. Whatever order the windows come in.
 */
import { describe, expect, it } from 'vitest';
import { bindingWindow, type UsageWindow } from '../../src/protocol/usage.js';

const at = (hours: number): string => new Date(Date.UTC(2026, 2, 2, 9) + hours * 3_600_000).toISOString();
const win = (name: string, usedPercent: number, resetsInHours?: number): UsageWindow => ({
  name,
  usedPercent,
  ...(resetsInHours !== undefined ? { resetsAt: at(resetsInHours) } : {}),
});
/** The binding window of `windows` in every order they may come in. */
const bindingInEveryOrder = (windows: UsageWindow[]): Set<string | null> => new Set(permutations(windows).map((o) => bindingWindow(o)));
function permutations<T>(xs: T[]): T[][] {
  if (xs.length <= 1) return [xs];
  return xs.flatMap((x, i) => permutations(xs.filter((_, j) => j !== i)).map((rest) => [x, ...rest]));
}

describe('the binding window', () => {
  it('none without windows', () => {
    expect(bindingWindow([])).toBeNull();
  });

  it('the most used window', () => {
    expect(bindingInEveryOrder([win('five_hour', 72, 2), win('seven_day', 40, 100)])).toEqual(new Set(['five_hour']));
    expect(bindingInEveryOrder([win('five_hour', 60, 2), win('seven_day', 91, 100)])).toEqual(new Set(['seven_day']));
    expect(bindingWindow([win('five_hour', 0)])).toBe('five_hour');
  });

  it('a window at 100 wins; of several at 100, the one that resets last', () => {
    expect(bindingInEveryOrder([win('five_hour', 99.9, 200), win('seven_day', 100, 1), win('one_day', 12, 300)])).toEqual(
      new Set(['seven_day']),
    );
    expect(bindingInEveryOrder([win('five_hour', 100, 2), win('seven_day', 100, 100), win('one_day', 100, 20)])).toEqual(
      new Set(['seven_day']),
    );
  });

  it('of equally used windows, the one that resets last; one without a reset counts as resetting first', () => {
    expect(bindingInEveryOrder([win('five_hour', 50, 2), win('seven_day', 50, 100)])).toEqual(new Set(['seven_day']));
    expect(bindingInEveryOrder([win('five_hour', 50, 2), win('seven_day', 50)])).toEqual(new Set(['five_hour']));
  });

  it('leaves the windows as they were', () => {
    const windows = [win('seven_day', 40, 100), win('five_hour', 72, 2)];
    const copy = JSON.parse(JSON.stringify(windows)) as UsageWindow[];
    bindingWindow(windows);
    expect(windows).toEqual(copy);
  });
});
