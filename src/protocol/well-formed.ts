/**
 * Text that cannot be kept as itself: a string holding a lone surrogate (JSON's `"\ud800"`
 * without its pair) has no UTF-8 form, so tmux, a file or a terminal would hold U+FFFD in its
 * place and tether would answer something other than what it stored. Bodies and frames holding
 * one are refused (docs/api.md), whatever field it is in.
 *
 * Invariant: the walk is iterative (a body may nest as deep as JSON.parse allows) and reads own
 * keys and values only.
 */

/** A lone surrogate: in a `u` regular expression a surrogate pair is one code point, so only an unpaired half matches. */
const LONE_SURROGATE = /\p{Cs}/u;

/** The path (`/a/0/b`) of the first string, key or value, of `value` that holds a lone surrogate; null when there is none. */
export function illFormedAt(value: unknown): string | null {
  const todo: [unknown, string][] = [[value, '']];
  for (let next = todo.pop(); next !== undefined; next = todo.pop()) {
    const [v, at] = next;
    if (typeof v === 'string') {
      if (LONE_SURROGATE.test(v)) return at === '' ? '/' : at;
      continue;
    }
    if (typeof v !== 'object' || v === null) continue;
    for (const [k, child] of Object.entries(v)) {
      const here = `${at}/${k.replace(/\p{Cs}/gu, '\ufffd')}`;
      if (LONE_SURROGATE.test(k)) return here;
      todo.push([child, here]);
    }
  }
  return null;
}

/** What a refusal says of the string at `at`. */
export const illFormedMessage = (at: string): string =>
  `${at}: text that is not well-formed Unicode (a lone surrogate, which has no UTF-8 form)`;
