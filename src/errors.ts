/**
 * The one registry of error codes tether speaks: HTTP error bodies, WebSocket error frames,
 * and the typed errors codecs throw. docs/api.md lists them; a test keeps the two in step.
 */

/** Codes of HTTP error bodies `{error, message}`, with their status. */
export const HTTP_ERRORS = {
  'bad-request': 400,
  unauthorized: 401,
  'session-not-found': 404,
  'not-found': 404,
  'session-exists': 409,
  'payload-too-large': 413,
  'rate-limited': 429,
  'internal-error': 500,
  'tmux-unavailable': 503,
} as const;
export type HttpErrorCode = keyof typeof HTTP_ERRORS;

/** Codes of WebSocket `error` frames. */
export const FRAME_ERRORS = ['bad-frame', 'unknown-key', 'payload-too-large', 'session-ended', 'snapshot-failed'] as const;
export type FrameErrorCode = (typeof FRAME_ERRORS)[number];

/** WebSocket close codes tether uses beyond the standard ones. */
export const CLOSE_CODES = { tokenRevoked: 4401, sessionDeleted: 4404, tooBig: 1009 } as const;

/** Codes of protocol errors raised by codecs (control mode, frames). */
export type ProtocolErrorCode =
  'control-line-too-long' | 'control-reply-too-large' | 'control-unexpected-end' | 'frame-malformed' | 'frame-too-large';

/** A codec's refusal of its input: typed by `code`, never a bare Error. */
export class ProtocolError extends Error {
  readonly code: ProtocolErrorCode;
  constructor(code: ProtocolErrorCode, message: string) {
    super(message);
    this.name = 'ProtocolError';
    this.code = code;
  }
}

/** An HTTP-facing failure with its registered code; transport maps it to the error body. */
export class ApiError extends Error {
  readonly code: HttpErrorCode;
  readonly status: number;
  constructor(code: HttpErrorCode, message: string) {
    super(message);
    this.name = 'ApiError';
    this.code = code;
    this.status = HTTP_ERRORS[code];
  }
}
