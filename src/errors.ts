/**
 * The one way tether fails, and the one table that says how each failure reaches a client.
 *
 * Every layer throws a `DomainError`: a code of this registry, a message that reads on its own,
 * optional details. Nothing below the transports knows HTTP statuses, frame codes or close
 * codes; the transports (src/transport/errors.plugin.ts for HTTP, src/transport/stream/stream.plugin.ts
 * for WebSocket) look the code up in `ERRORS` and nowhere else. docs/api.md lists the wire's
 * codes; test/unit/error-registry.test.ts keeps the registry, the table and the docs in step.
 */

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
export type CloseCode = (typeof CLOSE_CODES)[keyof typeof CLOSE_CODES];

/** How one code reaches a client: one row of the table. */
export interface Translation {
  /** The HTTP status of the error body. */
  readonly status: number;
  /** The error body's `error`. */
  readonly http: string;
  /**
   * The WebSocket `error` frame's `code`; none for a failure only HTTP routes meet (a stream
   * that met one would say what it says of a bug).
   */
  readonly frame?: string;
  /** Where the failure ends a stream as it opens: the close code it ends with, and its reason. */
  readonly close?: { readonly code: CloseCode; readonly reason: string };
  /**
   * A failure that is not the client's to read (a bug, a broken file, tmux's own words): the
   * client gets a generic message and the log the details.
   */
  readonly internal?: true;
}

/** The row of every failure a client cannot act on: a 500, or `input-failed` on a stream. */
const INTERNAL = { status: 500, http: 'internal-error', frame: 'input-failed', internal: true } as const;

/**
 * THE table: every code tether throws, with its translation. A code a client can act on has its
 * own row; an internal one shares `INTERNAL`, so the client is told as little as for a bug.
 */
export const ERRORS = {
  /** A value that does not fit (a session name, an input's field, NUL where it cannot go). */
  invalid: { status: 400, http: 'bad-request', frame: 'bad-frame' },
  /** A client frame that is not JSON, not an object, or not one of the frame types. */
  'frame-malformed': { status: 400, http: 'bad-request', frame: 'bad-frame' },
  'unknown-key': { status: 400, http: 'bad-request', frame: 'unknown-key' },
  /** No token, a wrong or revoked one; on `POST /pair` a wrong, used or expired pairing token. */
  unauthorized: { status: 401, http: 'unauthorized' },
  /** No such route, or nothing under that name (an `/ops` chart). */
  'not-found': { status: 404, http: 'not-found' },
  'session-not-found': {
    status: 404,
    http: 'session-not-found',
    frame: 'session-ended',
    close: { code: CLOSE_CODES.sessionEnded, reason: 'session ended' },
  },
  'session-exists': { status: 409, http: 'session-exists', frame: 'input-failed' },
  /** Input to a session whose agent exited: respawn it first. */
  'session-exited': { status: 409, http: 'session-exited', frame: 'session-exited' },
  /** A respawn of a session whose agent runs. */
  'session-running': { status: 409, http: 'session-running', frame: 'session-running' },
  /** An answer to an ask the session never had (details: none). */
  'ask-not-found': { status: 404, http: 'ask-not-found', frame: 'ask-not-found' },
  /** An answer to an ask already answered (by whom), answered at the terminal, or left by the agent (details: `closed`). */
  'ask-closed': { status: 409, http: 'ask-closed', frame: 'ask-closed' },
  /** Live Activity tokens of a token whose device never registered (no APNs environment to push to). */
  'device-not-registered': { status: 409, http: 'device-not-registered' },
  /** An answer that could not be typed: the agent's screen did not settle on its dialog (nothing was typed). */
  'ask-not-ready': { status: 409, http: 'ask-not-ready', frame: 'ask-not-ready' },
  /** A continue at the reset of a session whose agent is not stopped on a usage limit with a known reset (docs/api.md "Continue"). */
  'no-usage-limit': { status: 409, http: 'no-usage-limit' },
  /** A DELETE of a session's continue when none waits (docs/api.md "Continue"). */
  'continue-not-found': { status: 404, http: 'continue-not-found' },
  /** A prompt whose client id was sent before with another text (docs/api.md "Prompts"). */
  'prompt-id-conflict': { status: 409, http: 'prompt-id-conflict', frame: 'prompt-id-conflict' },
  /** A prompt sent to a session that has MAX_QUEUED_PROMPTS waiting already. */
  'prompt-queue-full': { status: 409, http: 'prompt-queue-full', frame: 'prompt-queue-full' },
  /** A DELETE of a prompt the session never had (or no longer remembers). */
  'prompt-not-found': { status: 404, http: 'prompt-not-found' },
  /** A DELETE of a prompt being typed or decided: only a queued one can be cancelled. */
  'prompt-not-queued': { status: 409, http: 'prompt-not-queued' },
  /** A request that did not arrive whole in time (node's HTTP server's own timeouts). */
  'request-timeout': { status: 408, http: 'request-timeout' },
  /** A worktree that cannot be made: its branch is checked out elsewhere, exists already (with `from`), or its folder is taken. */
  'worktree-conflict': { status: 409, http: 'worktree-conflict' },
  /** Removing a worktree would lose uncommitted changes or unpushed commits (`force` not given); the message lists them. */
  'work-would-be-lost': { status: 409, http: 'work-would-be-lost' },
  /** The changes of a session whose directory is not in a git repository. */
  'not-a-repository': { status: 409, http: 'not-a-repository' },
  /** A body past its limit (a request body, an upload past `[uploads] max_mb`, a text frame). */
  'too-large': { status: 413, http: 'payload-too-large', frame: 'payload-too-large' },
  /** A history range of which the disk buffer holds nothing (details: `held`, the ranges it holds). */
  'range-not-held': { status: 416, http: 'range-not-held' },
  /** Request headers past node's limit (16 KiB). */
  'headers-too-large': { status: 431, http: 'headers-too-large' },
  'rate-limited': { status: 429, http: 'rate-limited' },
  /** tmux cannot be reached, the session is not linked now, or tmux failed to create it. */
  'tmux-unavailable': { status: 503, http: 'tmux-unavailable', frame: 'tmux-unavailable' },
  /**
   * A stream cannot be opened on a session that is there but not ready for clients (being
   * created): try again. Only the stream raises it; over HTTP it is a 503 like tmux's.
   */
  'stream-unavailable': {
    status: 503,
    http: 'tmux-unavailable',
    frame: 'stream-unavailable',
    close: { code: CLOSE_CODES.tryAgainLater, reason: 'try again later' },
  },
  /** git cannot be run, failed where it should not, or ran past its time. */
  'git-unavailable': { status: 503, http: 'git-unavailable' },
  /** Too many searches wait already, or a search failed or ran out of time. */
  'search-unavailable': { status: 503, http: 'search-unavailable' },
  /** tmux could not give a snapshot of the pane (the link is down, a reply was unreadable). */
  'snapshot-failed': { ...INTERNAL, frame: 'snapshot-failed' },
  /** Anything not foreseen: a bug. */
  internal: INTERNAL,
  /** tmux's control-mode stream broke its own rules: a line or a reply past its limit, a cut-off end. */
  'control-line-too-long': INTERNAL,
  'control-reply-too-large': INTERNAL,
  'control-unexpected-end': INTERNAL,
  /** A command over a control client that is closed, full, or refused by tmux. */
  'control-failed': INTERNAL,
  /** An agent's line on the agent socket: too long, or not a message tether knows. */
  'agent-line-too-long': INTERNAL,
  'agent-bad-message': INTERNAL,
  /** The agent socket cannot be served (too long a path, another daemon on it). */
  'agent-socket-unusable': INTERNAL,
  /** No program to run as the agent. */
  'agent-not-found': INTERNAL,
  /** A configured command line that cannot be split into words. */
  'command-line-invalid': INTERNAL,
  /** A file of the data dir cannot be read or written, is locked by another process, or is corrupt. */
  'store-io': INTERNAL,
  'store-locked': INTERNAL,
  'store-corrupt': INTERNAL,
  /** A session record that does not fit its schema (a bug in the writer). */
  'record-invalid': INTERNAL,
  /** `tether auth`: a token name that does not fit, one that is taken, or no such token. */
  'token-name-invalid': INTERNAL,
  'token-name-taken': INTERNAL,
  'token-not-found': INTERNAL,
  /** The TLS certificate cannot be made or read. */
  'certificate-unusable': INTERNAL,
  /** `[push]` cannot work: keys missing, or the `.p8` key unusable. */
  'push-config-invalid': INTERNAL,
  /** The daemon's port is taken. */
  'port-in-use': INTERNAL,
} as const satisfies Record<string, Translation>;

/** Every code tether throws. */
export type ErrorCode = keyof typeof ERRORS;
type Row = (typeof ERRORS)[ErrorCode];
/** Codes of HTTP error bodies `{error, message}`. */
export type HttpErrorCode = Row['http'];
/** Codes of WebSocket `error` frames. */
export type FrameErrorCode = Extract<Row, { frame: string }>['frame'];

const ROWS: readonly Translation[] = Object.values(ERRORS);

/** Every HTTP error code with its status, as the table gives them (docs/api.md lists them). */
export const HTTP_ERRORS: Readonly<Record<HttpErrorCode, number>> = Object.fromEntries(ROWS.map((r) => [r.http, r.status])) as Record<
  HttpErrorCode,
  number
>;

/** Every WebSocket error-frame code, as the table gives them (docs/api.md lists them). */
export const FRAME_ERRORS: readonly FrameErrorCode[] = [
  ...new Set(ROWS.flatMap((r) => (r.frame === undefined ? [] : [r.frame as FrameErrorCode]))),
];

/** What a failure may carry beside its message. */
export interface ErrorDetails {
  /**
   * The value at fault (`name`, `data`, `querystring/lastSeq`): the message is prefixed with it,
   * which a transport spells its own way (`body/name` over HTTP).
   */
  readonly field?: string;
  /** Facts a client may read beside the message (HTTP: more fields of the error body). */
  readonly extra?: Readonly<Record<string, unknown>>;
  /** The failure underneath (logged, never sent). */
  readonly cause?: unknown;
}

/** The one error tether throws: a registered code, a message that reads on its own, details. */
export class DomainError extends Error {
  readonly code: ErrorCode;
  readonly field: string | null;
  /** The message without the field. */
  readonly reason: string;
  readonly extra: Readonly<Record<string, unknown>> | null;
  constructor(code: ErrorCode, message: string, details: ErrorDetails = {}) {
    const field = details.field ?? null;
    super(field === null ? message : `${field}: ${message}`, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = 'DomainError';
    this.code = code;
    this.field = field;
    this.reason = message;
    this.extra = details.extra ?? null;
  }
}

/** A data-dir file that cannot be written, or whose lock another process holds (src/files.ts reports through it). */
export const storeFailure = (code: 'io' | 'locked', message: string): DomainError =>
  code === 'io' ? new DomainError('store-io', message) : new DomainError('store-locked', message);

/** Whether `err` is a DomainError of `code`. */
export function isDomainError(err: unknown, code: ErrorCode): err is DomainError {
  return err instanceof DomainError && err.code === code;
}
