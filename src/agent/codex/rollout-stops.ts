/**
 * Codex's stops as its rollout file says them (docs/agents.md "Stops"). A turn that ended on an
 * API error Codex gave up on is an `event_msg`/`task_complete` whose `error` has the words Codex
 * showed (`message`) and their class (`codex_error_info`: `usage_limit_exceeded`,
 * `internal_server_error`, `server_overloaded`, `response_too_many_failed_attempts`, ...). The
 * reset of a usage limit is in the `token_count` record Codex writes before it: `rate_limits`
 * with a `primary` and a `secondary` window (`used_percent`, `window_minutes`, `resets_at` in
 * epoch seconds); the window that is used up is the limit.
 *
 * Pure: no I/O.
 */
import type { StopReport } from '../contract/stops.js';

/** A usage window of Codex's as its `token_count` record says it, when it is used up. */
export interface RolloutLimit {
  /** Its reset, epoch ms. */
  readonly resetsAt: number;
  /** Which limit, named by its window (`five_hour`, `seven_day`, else `<n>_minutes`). */
  readonly limit: string;
}

/** Codex's error class for a usage limit. */
const USAGE_LIMIT_INFO = 'usage_limit_exceeded';

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A window's name from its length. */
function windowName(minutes: unknown): string {
  if (minutes === 300) return 'five_hour';
  if (minutes === 7 * 24 * 60) return 'seven_day';
  return typeof minutes === 'number' ? `${minutes}_minutes` : 'usage';
}

/** The used-up window of a `token_count` payload's `rate_limits`, or null (none is used up, or none said). */
export function usedUpLimit(payload: Record<string, unknown>): RolloutLimit | null {
  const limits = payload.rate_limits;
  if (!isRecord(limits)) return null;
  for (const key of ['primary', 'secondary']) {
    const w = limits[key];
    if (!isRecord(w) || typeof w.used_percent !== 'number' || w.used_percent < 100) continue;
    if (typeof w.resets_at !== 'number' || !Number.isFinite(w.resets_at)) continue;
    return { resetsAt: w.resets_at * 1000, limit: windowName(w.window_minutes) };
  }
  return null;
}

/** The stop a `task_complete` payload says (its `error`), or null (the turn ended well). */
export function taskStop(payload: Record<string, unknown>): StopReport | null {
  const error = payload.error;
  if (!isRecord(error)) return null;
  const message = typeof error.message === 'string' && error.message !== '' ? error.message : 'the model API failed';
  return { kind: error.codex_error_info === USAGE_LIMIT_INFO ? 'usage-limit' : 'error', message };
}

/** A usage limit's stop with the reset the file said before it (when the stop has none of its own). */
export function withLimit(stop: StopReport, limit: RolloutLimit | null): StopReport {
  if (stop.kind !== 'usage-limit' || limit === null || stop.resetsAt !== undefined) return stop;
  return { ...stop, resetsAt: limit.resetsAt, limit: limit.limit };
}
