/**
 * `[agent] command` as a command line: split into words the way a POSIX shell splits them,
 * without running a shell and without expanding anything (docs/configuration.md "[agent]").
 *
 * Invariant: the words are exactly what the text quotes; a character a shell would act on
 * (`$`, a backquote, `|`, `;`, `&`, `<`, `>`, `(`, `)`, a leading `~`, `*`, `?`, `[`) is
 * refused unless it is quoted, so nothing the user wrote is silently read differently from
 * how a shell would read it.
 */
import { DomainError } from '../errors.js';

/** Why a command line cannot be split (`command-line-invalid`): a phrase to follow "the command line has ...". */
const unsplittable = (message: string): DomainError => new DomainError('command-line-invalid', message);

/** Characters a shell would act on when they stand unquoted. */
const SHELL_SPECIAL = new Set(['$', '`', '|', ';', '&', '<', '>', '(', ')', '*', '?', '[']);
/** Inside double quotes a backslash escapes only these (POSIX); before another it stays. */
const DOUBLE_QUOTE_ESCAPABLE = new Set(['$', '`', '"', '\\', '\n']);

/**
 * The words of `text`. Whitespace separates words; `'...'` keeps everything literally;
 * `"..."` keeps everything but `\"`, `\\`, `\$` and `` \` ``; a backslash outside quotes keeps
 * the next character. Throws `command-line-invalid` for an unterminated quote, a trailing
 * backslash, an unquoted shell character, or no words at all.
 */
export function splitCommandLine(text: string): string[] {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  let i = 0;
  const end = (): void => {
    if (inWord) words.push(word);
    word = '';
    inWord = false;
  };
  while (i < text.length) {
    const c = text[i]!;
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
      end();
      i++;
    } else if (c === "'") {
      const close = text.indexOf("'", i + 1);
      if (close < 0) throw unsplittable(`an unterminated ' quote (from character ${i + 1})`);
      word += text.slice(i + 1, close);
      inWord = true;
      i = close + 1;
    } else if (c === '"') {
      let j = i + 1;
      for (;;) {
        if (j >= text.length) throw unsplittable(`an unterminated " quote (from character ${i + 1})`);
        const d = text[j]!;
        if (d === '"') break;
        if (d === '\\' && j + 1 < text.length && DOUBLE_QUOTE_ESCAPABLE.has(text[j + 1]!)) {
          if (text[j + 1] !== '\n') word += text[j + 1];
          j += 2;
        } else if (d === '$' || d === '`') {
          throw unsplittable(`a ${d} inside double quotes (character ${j + 1}): tether expands nothing; use single quotes or \\${d}`);
        } else {
          word += d;
          j++;
        }
      }
      inWord = true;
      i = j + 1;
    } else if (c === '\\') {
      if (i + 1 >= text.length) throw unsplittable('a backslash at the end with nothing to escape');
      if (text[i + 1] !== '\n') {
        word += text[i + 1];
        inWord = true;
      }
      i += 2;
    } else if (c === '#' && !inWord) {
      throw unsplittable(`an unquoted # starting a word (character ${i + 1}), which a shell reads as a comment: quote it to pass it as is`);
    } else if (SHELL_SPECIAL.has(c) || (c === '~' && !inWord)) {
      throw unsplittable(
        `an unquoted ${c} (character ${i + 1}): tether runs the command without a shell (no variables, globs, ~, pipes or redirections); quote it to pass it as is, or use a wrapper script`,
      );
    } else {
      word += c;
      inWord = true;
      i++;
    }
  }
  end();
  if (words.length === 0) throw unsplittable('no words: it must name a program');
  if (words[0] === '') throw unsplittable('an empty program name');
  return words;
}
