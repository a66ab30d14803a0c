/**
 * opencode's stops (docs/agents.md "opencode", "Stops"): a turn that ended on an error opencode
 * gave up on is its `session.error` event, with the error's class (`name`: `APIError`,
 * `ProviderAuthError`, `UnknownError`, ...), its words (`data.message`) and, for an API error, the
 * HTTP status (`data.statusCode`). An error it retries (a 429, a 5xx) is not one: opencode shows
 * its retry (`session.status` `retry`) and goes on. The person pressing Escape
 * (`MessageAbortedError`) is no stop either: the turn simply ended.
 *
 * Pure: no I/O.
 */
import type { StopReport } from '../contract/stops.js';

/** The error of a turn the person interrupted. */
const ABORTED = 'MessageAbortedError';
/** An HTTP status that says a usage or rate limit was reached. */
const LIMIT_STATUS = '429';
/** Words of a provider that says a usage limit was reached (in an error opencode gives up on). */
const LIMIT_WORDS = /usage limit|quota|rate limit/i;

/** The stop a `session.error` report says, or null (an interruption). */
export function opencodeStop(f: Readonly<Record<string, string>>): StopReport | null {
  if (f.error === ABORTED) return null;
  const message = f.message !== undefined && f.message !== '' ? f.message : (f.error ?? 'the model API failed');
  const limit = f.code === LIMIT_STATUS || LIMIT_WORDS.test(message);
  return { kind: limit ? 'usage-limit' : 'error', message };
}
