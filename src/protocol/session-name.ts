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

/**
 * The order of the characters a name may hold, as the Unicode collation's root order has them,
 * case aside: `_`, `-`, the digits, then the letters.
 */
const PRIMARY = '_-0123456789abcdefghijklmnopqrstuvwxyz';

/**
 * Sorts session names as the Unicode collation (`localeCompare` in English) does for this
 * alphabet, without loading ICU's collation data into the daemon (~2 MB resident for a sort,
 * docs/benchmarks.md "Memory"): letters ignoring case first, then lower case before upper case
 * at the first place where case differs, then the code units.
 */
export function compareSessionNames(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const d = PRIMARY.indexOf(a[i]!.toLowerCase()) - PRIMARY.indexOf(b[i]!.toLowerCase());
    if (d !== 0) return d;
  }
  if (a.length !== b.length) return a.length - b.length;
  for (let i = 0; i < n; i++) {
    if (a[i] === b[i]) continue;
    const lowerA = a[i] === a[i]!.toLowerCase();
    const lowerB = b[i] === b[i]!.toLowerCase();
    if (lowerA !== lowerB) return lowerA ? -1 : 1;
  }
  return a < b ? -1 : a > b ? 1 : 0;
}
