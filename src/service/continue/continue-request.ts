/**
 * What a `POST /sessions/:id/continue` asks for (docs/api.md "Continue"), checked against the
 * session's stop and the clock: when it is due, what it types, which stop it answers. The body's
 * shape (its fields, their types and lengths) is the route schema's; the rules that need the
 * time, the stop or more than a schema says are here.
 *
 * Invariant: a request that passes is typed as given, within MAX_CONTINUE_TEXT_CHARS, without a
 * control character (the text is typed as keys, then Enter: a newline or an escape in it would
 * act before the person's Enter), and due no later than MAX_CONTINUE_AHEAD_MS from now.
 */
import { DomainError } from '../../errors.js';
import { DEFAULT_CONTINUE_TEXT, MAX_CONTINUE_AHEAD_MS, MAX_CONTINUE_TEXT_CHARS, RESET_MARGIN_MS } from '../../protocol/continue.js';
import type { Stop } from '../../protocol/stop.js';
import { hasControlChar } from '../../protocol/text.js';
import { STOP_MEANINGS } from '../../push/stop-meanings.js';

/** An ISO 8601 date and time with its offset (`Z` or `±hh:mm`), as `Date` reads it exactly. */
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2})$/;

/** A checked continue request. */
export interface ContinueRequest {
  /** When it is due, epoch ms. */
  readonly at: number;
  readonly text: string;
  /** The stop the agent is in now (the one it answers), or null. */
  readonly stopId: string | null;
}

const invalid = (field: string, reason: string) => new DomainError('invalid', reason, { field });

/** When `at` (`"reset"` or an ISO time) makes the continue due; throws `no-usage-limit` or `invalid`. */
function dueAt(at: string, stop: Stop | null, now: number): number {
  if (at === 'reset') {
    const resets = stop !== null && STOP_MEANINGS[stop.kind].continueAble && stop.resetsAt !== undefined ? Date.parse(stop.resetsAt) : NaN;
    if (Number.isNaN(resets)) throw new DomainError('no-usage-limit', 'the agent is not stopped on a usage limit with a known reset time');
    // A reset already passed: due now (the limit is lifted).
    return Math.max(resets + RESET_MARGIN_MS, now);
  }
  const time = ISO_TIME.test(at) ? Date.parse(at) : NaN;
  if (Number.isNaN(time)) throw invalid('at', 'must be "reset" or an ISO 8601 time with its offset (2026-01-01T09:00:00Z)');
  if (time <= now) throw invalid('at', 'is in the past');
  return time;
}

/** Checks a continue request of a session whose agent is in `stop` (or none) at `now`. */
export function checkContinueRequest(body: { at: string; text?: string }, stop: Stop | null, now: number): ContinueRequest {
  const text = body.text ?? DEFAULT_CONTINUE_TEXT;
  if ([...text].length > MAX_CONTINUE_TEXT_CHARS) throw invalid('text', `must be at most ${MAX_CONTINUE_TEXT_CHARS} characters`);
  if (hasControlChar(text))
    throw invalid('text', 'must not contain control characters (a newline, a tab, an escape): Enter is typed after it');
  if (text.trim() === '') throw invalid('text', 'must not be blank');
  const at = dueAt(body.at, stop, now);
  // A seven-day limit may reset almost 7 days ahead: its margin is allowed on top.
  if (at > now + MAX_CONTINUE_AHEAD_MS + (body.at === 'reset' ? RESET_MARGIN_MS : 0)) throw invalid('at', 'is more than 7 days ahead');
  return { at, text, stopId: stop?.id ?? null };
}
