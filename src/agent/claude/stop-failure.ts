/**
 * Why Claude Code stopped a turn on an API error (docs/agents.md "Stops"): its `StopFailure`
 * hook says the error's class (`rate_limit`, `server_error`, `authentication_failed`, ...) and
 * the words Claude showed; a usage limit and a plain 429 are both `rate_limit` there. Claude
 * writes the failed answer into its transcript as an assistant record with `isApiErrorMessage`,
 * and for a usage limit `apiError: "usage_limit_reached"` with `apiErrorParams.rate_limit_info`
 * (`status`, `resetsAt` in epoch seconds, `rateLimitType`): that record tells them apart and
 * gives the reset.
 *
 * Claude runs the hook a moment before it writes that record: the transcript is looked at every
 * STOP_TRANSCRIPT_POLL_MS until its last failed answer says the hook's words, for at most
 * STOP_TRANSCRIPT_WAIT_MS.
 *
 * Invariant: at most STOP_TRANSCRIPT_TAIL_BYTES of the transcript's end are read a look, and
 * only what follows the record the session's previous stop was read from (its words may be the
 * same); a transcript that cannot be read, or has no new such record in time, leaves the hook's
 * own words to decide (a usage limit then has no reset).
 */
import { open } from 'node:fs/promises';
import type { StopReport } from '../contract/stops.js';

/** How much of the transcript's end is read for the failed answer's record. */
export const STOP_TRANSCRIPT_TAIL_BYTES = 256 * 1024;
/** How often, and for how long, the transcript is looked at for the record. */
export const STOP_TRANSCRIPT_POLL_MS = 100;
export const STOP_TRANSCRIPT_WAIT_MS = 3000;

/** The failed answer's record as Claude writes it (the fields read). */
interface ApiErrorRecord {
  readonly isApiErrorMessage?: boolean;
  readonly message?: { readonly content?: readonly { readonly text?: string }[] };
  readonly apiError?: string;
  readonly apiErrorParams?: { readonly rate_limit_info?: { status?: string; resetsAt?: number; rateLimitType?: string } };
}

/** A failed answer's record and where it ends in the transcript (bytes). */
interface FoundRecord {
  readonly record: ApiErrorRecord;
  readonly end: number;
}

/** The last record of the transcript's end that is a failed answer and ends after byte `after`, or null. */
async function lastApiError(transcript: string, after: number): Promise<FoundRecord | null> {
  let buf: Buffer;
  let from: number;
  try {
    const file = await open(transcript, 'r');
    try {
      const { size } = await file.stat();
      // A transcript shorter than what was read before is another file: read its end afresh.
      from = Math.max(size >= after ? after : 0, size - STOP_TRANSCRIPT_TAIL_BYTES);
      const { bytesRead, buffer } = await file.read(Buffer.alloc(size - from), 0, size - from, from);
      buf = buffer.subarray(0, bytesRead);
    } finally {
      await file.close();
    }
  } catch {
    return null;
  }
  for (let end = buf.length; end > 0;) {
    const start = buf.lastIndexOf(0x0a, end - 1) + 1;
    const line = buf.subarray(start, end).toString('utf8');
    if (line.includes('"isApiErrorMessage":true')) {
      try {
        return { record: JSON.parse(line) as ApiErrorRecord, end: from + Math.min(end + 1, buf.length) }; // past its newline
      } catch {
        return null; // the first line of the tail, cut, or a line still being written
      }
    }
    end = start - 1;
  }
  return null;
}

/** The failed answer's record whose words are `words` (the hook's) and which ends after byte `after`, once Claude wrote it; null when it did not in time. */
async function recordOf(transcript: string, words: string, after: number): Promise<FoundRecord | null> {
  for (let waited = 0; ; waited += STOP_TRANSCRIPT_POLL_MS) {
    const found = await lastApiError(transcript, after);
    const text = found?.record.message?.content?.map((c) => c.text ?? '').join('') ?? null;
    if (found !== null && (words === '' || text === words)) return found;
    if (waited >= STOP_TRANSCRIPT_WAIT_MS) return null;
    await new Promise((resolve) => setTimeout(resolve, STOP_TRANSCRIPT_POLL_MS));
  }
}

/** Words of Claude's that say a usage limit ("You've hit your 5-hour limit · resets 2:08pm"). */
const USAGE_LIMIT_WORDS = /\bhit your\b.*\blimit\b|\busage limit\b/i;

/** Where the failed answer last read for a stop ended: its transcript and byte (a later stop reads only what follows). */
export interface StopFailureMark {
  readonly transcript: string;
  readonly end: number;
}

/**
 * What a `StopFailure` report (its hook fields) means, with its transcript read past `mark` (the
 * record the session's previous stop was read from: two usage limits whose words are alike,
 * "resets 7:30pm" twice in one minute, are two records), and the mark for the next one.
 */
export async function readClaudeStopFailure(
  f: Readonly<Record<string, string>>,
  mark: StopFailureMark | null,
): Promise<{ stop: StopReport; mark: StopFailureMark | null }> {
  const message = f.last_assistant_message || f.error || 'API error';
  const transcript = f.transcript_path?.startsWith('/') ? f.transcript_path : null;
  const after = mark !== null && mark.transcript === transcript ? mark.end : 0;
  const found = transcript !== null ? await recordOf(transcript, f.last_assistant_message ?? '', after) : null;
  const record = found?.record ?? null;
  const next = found !== null ? { transcript: transcript!, end: found.end } : mark;
  const info = record?.apiErrorParams?.rate_limit_info;
  const usage =
    record !== null ? record.apiError === 'usage_limit_reached' || info?.status === 'rejected' : USAGE_LIMIT_WORDS.test(message);
  if (!usage) return { stop: { kind: 'error', message }, mark: next };
  const resetsAt = typeof info?.resetsAt === 'number' && info.resetsAt > 0 ? info.resetsAt * 1000 : undefined;
  const stop: StopReport = {
    kind: 'usage-limit',
    message,
    ...(resetsAt !== undefined ? { resetsAt } : {}),
    ...(typeof info?.rateLimitType === 'string' ? { limit: info.rateLimitType } : {}),
  };
  return { stop, mark: next };
}
