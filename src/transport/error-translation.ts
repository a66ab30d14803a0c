/**
 * Where a failure becomes words on the wire: an HTTP error body, a WebSocket `error` frame, a
 * close code. Every answer is read off the failure's row in src/errors.ts `ERRORS`, the one
 * table; nothing else in tether maps a failure to a status or a code.
 *
 * Invariant: what is not a `DomainError`, and what the table marks internal, reaches a client
 * only as a generic message; its details are for the log.
 */
import { DomainError, ERRORS, type CloseCode, type FrameErrorCode, type Translation } from '../errors.js';
import type { ErrorFrame } from '../protocol/frames.js';

/** What a client is told of a failure it cannot act on. */
export const INTERNAL_MESSAGE = 'an internal error occurred; the tether log has the details';

/** An HTTP answer to a failure. */
export interface HttpFailure {
  readonly status: number;
  readonly body: { readonly error: string; readonly message: string } & Readonly<Record<string, unknown>>;
  /** Not the client's to read: the caller logs the error. */
  readonly internal: boolean;
}

/** The failure's row, or null for what is not a DomainError (a bug). */
function rowOf(err: unknown): Translation | null {
  return err instanceof DomainError ? ERRORS[err.code] : null;
}

/** A domain field as a request path: a body field (`name` -> `body/name`) unless it names its place (`querystring/lastSeq`). */
function fieldPath(field: string): string {
  return field.includes('/') ? field : `body/${field}`;
}

/** The HTTP status and body `{error, message, ...details}` of a failure. */
export function httpFailure(err: unknown): HttpFailure {
  const row = rowOf(err);
  if (!(err instanceof DomainError) || row === null || row.internal) {
    const internal = row ?? ERRORS.internal;
    return { status: internal.status, body: { error: internal.http, message: INTERNAL_MESSAGE }, internal: true };
  }
  const message = err.field === null ? err.reason : `${fieldPath(err.field)}: ${err.reason}`;
  return { status: row.status, body: { ...err.extra, error: row.http, message }, internal: false };
}

/**
 * The `error` frame of a failure on a stream; `fallback` is the message for one the client may
 * not read (internal, or met only over HTTP), sent under the internal row's code.
 */
export function errorFrame(err: unknown, fallback: string): ErrorFrame {
  const row = rowOf(err);
  if (!(err instanceof DomainError) || row === null || row.internal || row.frame === undefined) {
    return { type: 'error', code: (row?.frame ?? ERRORS.internal.frame) as FrameErrorCode, message: fallback };
  }
  return { type: 'error', code: row.frame as FrameErrorCode, message: err.message };
}

/**
 * How a stream that could not be opened ends: the frame and the close of the failure's row when
 * it has one (the session is gone, or not ready yet); otherwise `stream-unavailable` (try
 * again), and `unforeseen` says the caller should log it.
 */
export function openFailure(err: unknown): { frame: ErrorFrame; close: { code: CloseCode; reason: string }; unforeseen: boolean } {
  const row = rowOf(err);
  if (err instanceof DomainError && row?.close !== undefined) {
    return { frame: errorFrame(err, err.message), close: row.close, unforeseen: false };
  }
  const unavailable = ERRORS['stream-unavailable'];
  return {
    frame: { type: 'error', code: unavailable.frame, message: 'the stream could not be opened now; try again' },
    close: unavailable.close,
    unforeseen: true,
  };
}
