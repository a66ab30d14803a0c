/**
 * Codex's account usage windows as its rollout file says them (docs/agents.md "Usage"): each
 * `event_msg`/`token_count` record (one for each model answer of a turn) carries `rate_limits`
 * with a `primary` and a `secondary` window (`used_percent`, `window_minutes`, `resets_at` in unix
 * seconds), as the answer's `x-codex-*` headers gave them; a window Codex did not get is `null`.
 * The figures are handed on as Codex wrote them (150 %, -5 %, an absurd reset): the hub checks
 * them. The same record says what Codex 0.169's "Approaching rate limits" dialog goes by
 * (rate-limit-nudge.ts): a window at 90 % or more as a whole number, the limit it is about
 * (`limit_id`), and whether the workspace has credits.
 *
 * Pure: no I/O.
 */
import { windowName, type UsageReading, type UsageReport } from '../contract/usage.js';

/**
 * The percent at which Codex readies its dialog: it hands a window's `used_percent` to its screen
 * rounded to a whole number (`.round() as i32`, half away from zero) and compares that with 90.0,
 * so 89.5 does and 89.49 does not (measured: 89.4 and 89.49 no dialog, 89.5 and 89.6 the dialog).
 */
export const NUDGE_ROUNDED_PERCENT = 90;

/** What one `token_count` record's `rate_limits` says. */
export interface RolloutRates {
  /** Its windows as Codex wrote them, or null when it gave none (no headers on the answer). */
  readonly usage: UsageReport | null;
  /** A window of Codex's own limit (`limit_id` `codex`, or none) at the dialog's threshold. */
  readonly high: boolean;
  /** `credits.has_credits`, when the record says it; null when `credits` is absent (Codex keeps the last one). */
  readonly credits: boolean | null;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A window's figures: its percent (NaN when not a number), its reset (epoch ms, or null), and its length. */
function reading(which: 'primary' | 'secondary', w: Record<string, unknown>): UsageReading {
  const minutes = w.window_minutes;
  const used = w.used_percent;
  const reset = w.resets_at;
  return {
    name: typeof minutes === 'number' && Number.isInteger(minutes) && minutes > 0 ? windowName(minutes) : which,
    usedPercent: typeof used === 'number' ? used : Number.NaN,
    resetsAt: typeof reset === 'number' && Number.isFinite(reset) ? reset * 1000 : null,
  };
}

/** Whether a percent, as Codex rounds it for its screen, is at the dialog's threshold. */
export function atNudgeThreshold(usedPercent: number): boolean {
  // Rust's round() takes .5 away from zero and `as i32` saturates: for the percents that matter, Math.round.
  return Number.isFinite(usedPercent) ? Math.round(usedPercent) >= NUDGE_ROUNDED_PERCENT : false;
}

/** What a `token_count` payload's `rate_limits` says, or null when it has none. */
export function rolloutRates(payload: Record<string, unknown>): RolloutRates | null {
  const limits = payload.rate_limits;
  if (!isRecord(limits)) return null;
  const windows: UsageReading[] = [];
  for (const which of ['primary', 'secondary'] as const) {
    const w = limits[which];
    if (isRecord(w) && 'used_percent' in w) windows.push(reading(which, w));
  }
  const id = limits.limit_id;
  const codexLimit = id === undefined || id === null || (typeof id === 'string' && id.toLowerCase() === 'codex');
  const credits = isRecord(limits.credits) ? limits.credits.has_credits === true : null;
  return {
    usage: windows.length > 0 ? { windows } : null,
    high: codexLimit && windows.some((w) => atNudgeThreshold(w.usedPercent)),
    credits,
  };
}
