/**
 * The Live Activity's delays as the tests shorten them (docs/testing.md "Time"):
 * `TETHER_TEST_ACTIVITY_DEBOUNCE_MS` and `TETHER_TEST_ACTIVITY_IDLE_MS`, in place of 2 s and
 * 10 minutes. For tests only.
 */
import type { ActivityDelays } from './live-activity.service.js';

const MIN_MS = 10;
const MAX_MS = 3_600_000;

/** The delays `env` sets: a whole number from 10 to 3600000 each; anything else is refused with one line. */
export function activityDelaysOf(env: NodeJS.ProcessEnv): Partial<ActivityDelays> {
  const debounce = delayOf(env, 'TETHER_TEST_ACTIVITY_DEBOUNCE_MS');
  const idleWhile = delayOf(env, 'TETHER_TEST_ACTIVITY_IDLE_MS');
  return { ...(debounce !== undefined ? { debounce } : {}), ...(idleWhile !== undefined ? { idleWhile } : {}) };
}

function delayOf(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const text = env[name];
  if (text === undefined || text === '') return undefined;
  const ms = Number(text);
  if (!Number.isInteger(ms) || ms < MIN_MS || ms > MAX_MS)
    throw new Error(`${name}: must be a whole number of ms from ${MIN_MS} to ${MAX_MS}, got ${JSON.stringify(text.slice(0, 40))}`);
  return ms;
}
