/**
 * The variables only tests set (docs/testing.md "Time"): intervals of the product a test need not
 * wait out. `tether serve` reads them from its environment and hands the daemon their values; no
 * other code reads them. Unset or empty: the product's own value. Anything else is refused with
 * one line naming the variable.
 */
import type { ActivityDelays } from '../push/live-activity.service.js';
import { CliError } from '../runtime/fail.js';

/** A whole number of ms from `min` to `max` in `env[name]`; undefined when unset or empty. */
function wholeMs(env: NodeJS.ProcessEnv, name: string, min: number, max: number): number | undefined {
  const text = env[name];
  if (text === undefined || text === '') return undefined;
  const ms = Number(text);
  if (!Number.isInteger(ms) || ms < min || ms > max)
    throw new CliError(`${name}: must be a whole number of ms from ${min} to ${max}, got ${JSON.stringify(text.slice(0, 40))}`);
  return ms;
}

/**
 * `TETHER_TEST_RESTORE_RETRY_MS`: how often sessions that could not be restored are checked again,
 * in place of the 5 s a user's daemon takes.
 */
export const restoreRetryMs = (env: NodeJS.ProcessEnv): number | undefined => wholeMs(env, 'TETHER_TEST_RESTORE_RETRY_MS', 10, 600_000);

/**
 * `TETHER_TEST_ACTIVITY_DEBOUNCE_MS` and `TETHER_TEST_ACTIVITY_IDLE_MS`: the Live Activity's
 * debounce and idle while, in place of 2 s and 10 minutes.
 */
export function activityDelaysOf(env: NodeJS.ProcessEnv): Partial<ActivityDelays> {
  const debounce = wholeMs(env, 'TETHER_TEST_ACTIVITY_DEBOUNCE_MS', 10, 3_600_000);
  const idleWhile = wholeMs(env, 'TETHER_TEST_ACTIVITY_IDLE_MS', 10, 3_600_000);
  return { ...(debounce !== undefined ? { debounce } : {}), ...(idleWhile !== undefined ? { idleWhile } : {}) };
}
