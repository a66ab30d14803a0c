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
 * Invariant: at most STOP_TRANSCRIPT_TAIL_BYTES of the transcript's end are read a look; a
 * transcript that cannot be read, or has no such record in time, leaves the hook's own words to
 * decide (a usage limit then has no reset).
 */
import { open } from 'node:fs/promises';
import type { StopReport } from '../contract/stops.js';

/** How much of the transcript's end is read for the failed answer's record. */
export const STOP_TRANSCRIPT_TAIL_BYTES = 256 * 1024;
/** How often, and for how long, the transcript is looked at for the record. */
export const STOP_TRANSCRIPT_POLL_MS = 100;
export const STOP_TRANSCRIPT_WAIT_MS = 1500;

/** The failed answer's record as Claude writes it (the fields read). */
interface ApiErrorRecord {
  readonly isApiErrorMessage?: boolean;
  readonly message?: { readonly content?: readonly { readonly text?: string }[] };
  readonly apiError?: string;
  readonly apiErrorParams?: { readonly rate_limit_info?: { status?: string; resetsAt?: number; rateLimitType?: string } };
}

/** The last record of the transcript's end that is a failed answer, or null. */
async function lastApiError(transcript: string): Promise<ApiErrorRecord | null> {
  let text: string;
  try {
    const file = await open(transcript, 'r');
    try {
      const { size } = await file.stat();
      const from = Math.max(0, size - STOP_TRANSCRIPT_TAIL_BYTES);
      const buf = Buffer.alloc(size - from);
      const { bytesRead } = await file.read(buf, 0, buf.length, from);
      text = buf.subarray(0, bytesRead).toString('utf8');
    } finally {
      await file.close();
    }
  } catch {
    return null;
  }
  const lines = text.split('\n');
  for (let i = lines.length - 1; i >= 0; i--) {
    if (!lines[i]!.includes('"isApiErrorMessage":true')) continue;
    try {
      return JSON.parse(lines[i]!) as ApiErrorRecord;
    } catch {
      return null; // the first line of the tail, cut
    }
  }
  return null;
}

/** The failed answer's record whose words are `words` (the hook's), once Claude wrote it; null when it did not in time. */
async function recordOf(transcript: string, words: string): Promise<ApiErrorRecord | null> {
  for (let waited = 0; ; waited += STOP_TRANSCRIPT_POLL_MS) {
    const record = await lastApiError(transcript);
    const text = record?.message?.content?.map((c) => c.text ?? '').join('') ?? null;
    if (record !== null && (words === '' || text === words)) return record;
    if (waited >= STOP_TRANSCRIPT_WAIT_MS) return null;
    await new Promise((resolve) => setTimeout(resolve, STOP_TRANSCRIPT_POLL_MS));
  }
}

/** Words of Claude's that say a usage limit ("You've hit your 5-hour limit · resets 2:08pm"). */
const USAGE_LIMIT_WORDS = /\bhit your\b.*\blimit\b|\busage limit\b/i;

/** What a `StopFailure` report (its hook fields) means, with its transcript read. */
export async function readClaudeStopFailure(f: Readonly<Record<string, string>>): Promise<StopReport> {
  const message = f.last_assistant_message || f.error || 'API error';
  const transcript = f.transcript_path?.startsWith('/') ? f.transcript_path : null;
  const record = transcript !== null ? await recordOf(transcript, f.last_assistant_message ?? '') : null;
  const info = record?.apiErrorParams?.rate_limit_info;
  const usage =
    record !== null ? record.apiError === 'usage_limit_reached' || info?.status === 'rejected' : USAGE_LIMIT_WORDS.test(message);
  if (!usage) return { kind: 'error', message };
  const resetsAt = typeof info?.resetsAt === 'number' && info.resetsAt > 0 ? info.resetsAt * 1000 : undefined;
  return {
    kind: 'usage-limit',
    message,
    ...(resetsAt !== undefined ? { resetsAt } : {}),
    ...(typeof info?.rateLimitType === 'string' ? { limit: info.rateLimitType } : {}),
  };
}
