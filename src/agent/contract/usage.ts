/**
 * An agent's account usage windows as its adapter read them (docs/agents.md "Usage"): how much of
 * each limit (the 5-hour one, the weekly one) is used and when it resets, before tether checks
 * them (src/agent/hub/usage-book.ts clamps a percent out of 0..100, leaves out a reset that is not
 * a time and a window whose percent is not a number, and logs each kind of fault once).
 *
 * Window names: Claude Code's own (`five_hour`, `seven_day`); a window known only by its length
 * (Codex's `window_minutes`, the `x-codex-*` headers) is named by it, `windowName`.
 */

/** One window as the agent said it. */
export interface UsageReading {
  readonly name: string;
  /** Percent used, as the agent gave it (NaN when it was not a number). */
  readonly usedPercent: number;
  /** When the window resets, epoch ms; null when the agent did not say (or said something that is not a time). */
  readonly resetsAt: number | null;
}

/** Every window one report of the agent gave (a window it did not give keeps its last reading). */
export interface UsageReport {
  readonly windows: readonly UsageReading[];
}

/** A window's name from its length in minutes: `five_hour` (300), `seven_day` (10080), `one_day` (1440), else `<minutes>_minutes`. */
export function windowName(minutes: number): string {
  switch (minutes) {
    case 300:
      return 'five_hour';
    case 1440:
      return 'one_day';
    case 10080:
      return 'seven_day';
    default:
      return `${minutes}_minutes`;
  }
}

/** A number an agent wrote as text (`"57"`, `"0.42"`); NaN for anything else (`"abc"`, `""`). */
export function numberOf(text: string | undefined | null): number {
  if (text === undefined || text === null || text.trim() === '') return Number.NaN;
  const n = Number(text);
  return Number.isFinite(n) ? n : Number.NaN;
}

/** Unix seconds an agent wrote (a number or its text) as epoch ms; null when it is not a number. */
export function epochMsOfSeconds(value: unknown): number | null {
  const n = typeof value === 'number' ? value : typeof value === 'string' ? numberOf(value) : Number.NaN;
  return Number.isFinite(n) ? n * 1000 : null;
}
