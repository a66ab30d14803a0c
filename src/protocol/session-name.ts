/**
 * Session names (docs/api.md, "Sessions"): 1 to 64 letters, digits, `_` or `-`. The one pattern
 * every layer checks: the routes' schemas, the tmux layer, the disk buffer's file names, the
 * agent socket and the CLI.
 */
export const SESSION_NAME_PATTERN = '^[A-Za-z0-9_-]{1,64}$';
export const SESSION_NAME_RE = new RegExp(SESSION_NAME_PATTERN);
/** The rule in words, for error messages. */
export const SESSION_NAME_RULE = '1-64 letters, digits, "_" or "-"';

/** True for 1-64 letters, digits, `_` or `-`. */
export function isValidSessionName(name: string): boolean {
  return SESSION_NAME_RE.test(name);
}
