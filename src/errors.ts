/**
 * The one registry of error codes tether speaks: HTTP error bodies, WebSocket error frames and
 * close codes, the domain's refusals (which each transport names its own way), and the typed
 * errors codecs throw. docs/api.md lists them; test/unit/error-registry.test.ts keeps the two
 * in step.
 */

/** Codes of HTTP error bodies `{error, message}`, with their status. */
export const HTTP_ERRORS = {
  'bad-request': 400,
  unauthorized: 401,
  'session-not-found': 404,
  'not-found': 404,
  'session-exists': 409,
  'session-exited': 409,
  'session-running': 409,
  'payload-too-large': 413,
  'range-not-held': 416,
  'rate-limited': 429,
  'internal-error': 500,
  'tmux-unavailable': 503,
  'search-unavailable': 503,
} as const;
export type HttpErrorCode = keyof typeof HTTP_ERRORS;

/** Codes of WebSocket `error` frames. */
export const FRAME_ERRORS = [
  'bad-frame',
  'unknown-key',
  'payload-too-large',
  'session-ended',
  'stream-unavailable',
  'session-exited',
  'session-running',
  'snapshot-failed',
  'tmux-unavailable',
  'input-failed',
] as const;
export type FrameErrorCode = (typeof FRAME_ERRORS)[number];

/** WebSocket close codes tether sends. */
export const CLOSE_CODES = {
  /** The client's token was revoked. */
  tokenRevoked: 4401,
  /** The session was deleted. */
  sessionEnded: 4404,
  /** A message over the size limit. */
  tooBig: 1009,
  /** The daemon is stopping. */
  goingAway: 1001,
  /**
   * The stream could not be opened for now (the session is being created or restored, tmux did
   * not answer): the session is there, the client tries again (1013 Try Again Later).
   */
  tryAgainLater: 1013,
} as const;

/**
 * The domain's refusals (sessions, input, tmux), raised below the transports, and how each
 * transport names them: an HTTP error code, a WebSocket error-frame code.
 */
export const DOMAIN_ERRORS = {
  /** A value that does not fit (a session name, an input's field, NUL where it cannot go). */
  invalid: { http: 'bad-request', frame: 'bad-frame' },
  'unknown-key': { http: 'bad-request', frame: 'unknown-key' },
  'session-not-found': { http: 'session-not-found', frame: 'session-ended' },
  'session-exists': { http: 'session-exists', frame: 'input-failed' },
  /** Input to a session whose agent exited: respawn it first. */
  'session-exited': { http: 'session-exited', frame: 'session-exited' },
  /** A respawn of a session whose agent runs. */
  'session-running': { http: 'session-running', frame: 'session-running' },
  'tmux-unavailable': { http: 'tmux-unavailable', frame: 'tmux-unavailable' },
  /** A body past its limit (an upload past `[uploads] max_mb`). */
  'too-large': { http: 'payload-too-large', frame: 'payload-too-large' },
  /**
   * A stream cannot be opened on a session that is there but not ready for clients (being
   * created): try again. Only the stream raises it; over HTTP it would be a 503 like tmux's.
   */
  'stream-unavailable': { http: 'tmux-unavailable', frame: 'stream-unavailable' },
} as const satisfies Record<string, { http: HttpErrorCode; frame: FrameErrorCode }>;
export type DomainErrorCode = keyof typeof DOMAIN_ERRORS;

/**
 * A refusal in the domain's terms. `field` names the value at fault (`name`, `data`), which a
 * transport prefixes its own way (`body/name` over HTTP); `message` reads on its own.
 */
export class DomainError extends Error {
  readonly code: DomainErrorCode;
  readonly field: string | null;
  /** The message without the field. */
  readonly reason: string;
  constructor(code: DomainErrorCode, message: string, field: string | null = null) {
    super(field === null ? message : `${field}: ${message}`);
    this.name = 'DomainError';
    this.code = code;
    this.field = field;
    this.reason = message;
  }
}

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
