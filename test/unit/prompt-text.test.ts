/**
 * A prompt's text (src/protocol/prompt.ts, docs/api.md "Prompts"): what `checkPromptText` lets
 * through and how it folds line ends, when an agent's report is the prompt (`reportIsPrompt`,
 * with the agents' own ways of reporting it: cut, trailing space, Claude's paste tags read away by
 * `pastedAsTyped`), and the digest a retry's text is compared by, which tmux keeps across versions.
 */
import { describe, expect, it } from 'vitest';
import { pastedAsTyped } from '../../src/agent/claude/events.js';
import { DomainError } from '../../src/errors.js';
import {
  checkPromptText,
  isPromptId,
  MAX_PROMPT_CHARS,
  MIN_CUT_REPORT_CHARS,
  promptDigest,
  reportIsPrompt,
} from '../../src/protocol/prompt.js';

/** The error `fn` throws. */
function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  throw new Error('nothing was thrown');
}

/** A long prompt of words, `chars` characters. */
const longPrompt = (chars: number): string =>
  'please refactor the parser module and keep its tests green '.repeat(chars / 10).slice(0, chars);

describe('checkPromptText', () => {
  it.each([
    ['empty', ''],
    ['spaces', '   '],
    ['tabs and newlines', '\t\n\r\n \t'],
    ['a no-break space and an em space', '\u00a0\u2003'],
  ])('refuses a blank text (%s), naming the field', (_what, text) => {
    const err = thrown(() => checkPromptText(text));
    expect(err).toBeInstanceOf(DomainError);
    expect(err).toMatchObject({ code: 'invalid', field: 'text' });
    expect((err as DomainError).reason).toMatch(/blank/);
  });

  it.each([
    ['an escape (colours)', 'red \u001b[31mtext'],
    ['a NUL', 'a\u0000b'],
    ['a bell', 'ding\u0007'],
    ['a backspace', 'ab\bc'],
    ['a vertical tab', 'a\u000bb'],
    ['a form feed', 'a\u000cb'],
    ['DEL', 'a\u007f'],
    ['a C1 control (NEL)', 'a\u0085b'],
    ['a C1 CSI', 'a\u009b31m'],
    ['a control among good lines', 'line one\nline \u001b two'],
  ])('refuses a control character: %s', (_what, text) => {
    const err = thrown(() => checkPromptText(text));
    expect(err).toMatchObject({ code: 'invalid', field: 'text' });
    expect((err as DomainError).reason).toMatch(/control/);
  });

  it.each([
    ['a tab', 'a\tb', 'a\tb'],
    ['LF', 'one\ntwo', 'one\ntwo'],
    ['CRLF, folded to LF', 'one\r\ntwo\r\n', 'one\ntwo\n'],
    ['a lone CR, taken as LF', 'one\rtwo', 'one\ntwo'],
    ['CR CR LF: a CR, then a CRLF', 'a\r\r\nb', 'a\n\nb'],
    ['text around blank lines', '\n\nfix it\n\n', '\n\nfix it\n\n'],
    ['emoji and accents', 'répare 😀', 'répare 😀'],
  ])('takes %s', (_what, text, typed) => {
    expect(checkPromptText(text)).toBe(typed);
  });

  it('counts characters as code points: 100,000 of them pass, one more does not', () => {
    expect(MAX_PROMPT_CHARS).toBe(100_000);
    expect(checkPromptText('a'.repeat(MAX_PROMPT_CHARS))).toHaveLength(MAX_PROMPT_CHARS);
    expect(thrown(() => checkPromptText('a'.repeat(MAX_PROMPT_CHARS + 1)))).toMatchObject({ code: 'invalid', field: 'text' });
    // 100,000 emoji are 200,000 UTF-16 units, and still 100,000 characters.
    const emoji = '😀'.repeat(MAX_PROMPT_CHARS);
    expect(emoji.length).toBe(2 * MAX_PROMPT_CHARS);
    expect(checkPromptText(emoji)).toBe(emoji);
    expect(thrown(() => checkPromptText(`${emoji}x`))).toMatchObject({ code: 'invalid', field: 'text' });
  });

  it('counts the length after folding: 100,000 CRLF line ends are 100,000 characters', () => {
    expect(checkPromptText(`x${'\r\n'.repeat(MAX_PROMPT_CHARS - 1)}`)).toHaveLength(MAX_PROMPT_CHARS);
  });
});

describe('isPromptId', () => {
  it.each([
    ['phone-7f3a', true],
    ['A.b_c-9', true],
    ['x'.repeat(64), true],
    ['x'.repeat(65), false],
    ['', false],
    ['has space', false],
    ['slash/id', false],
    ['émoji', false],
  ])('%s: %s', (id, ok) => {
    expect(isPromptId(id)).toBe(ok);
  });
});

describe('reportIsPrompt: is what the agent reported the prompt typed?', () => {
  const long = longPrompt(3000);
  it.each([
    ['the same text', 'fix the login page', 'fix the login page', true],
    ['other white space (runs, tabs, newlines, ends)', 'fix  the\nlogin\tpage', '  fix the login page\n', true],
    ['CRLF against LF', 'one\ntwo', 'one\r\ntwo', true],
    ['the trailing space opencode adds', 'fix the login page', 'fix the login page ', true],
    ['NFC against NFD', 'répare le café', 're\u0301pare le cafe\u0301', true],
    ['a report cut at 1000 characters, the start of the prompt', long, long.slice(0, MIN_CUT_REPORT_CHARS), true],
    ['a report cut at 2000 characters with an ellipsis (pi)', long, `${long.slice(0, 2000)}…`, true],
    ['a report cut at 4096 characters (a hook field)', longPrompt(6000), longPrompt(6000).slice(0, 4096), true],
    ['a cut report shorter than 1000 characters', long, long.slice(0, MIN_CUT_REPORT_CHARS - 1), false],
    ['a long report that is not the start of the prompt', long, long.slice(1, 1500), false],
    ['a long report of another text', long, `${'x'.repeat(1200)}`, false],
    ['a short different text', 'fix the login page', 'fix the signup page', false],
    ['a short start of the prompt', 'fix the login page', 'fix the', false],
    ['a report longer than the prompt', 'fix the login page', 'fix the login page now', false],
    ['an empty report', 'fix the login page', '', false],
    ['a blank report', 'fix the login page', ' \n\t', false],
  ])('%s: %s', (_what, sent, reported, is) => {
    expect(reportIsPrompt(sent, reported)).toBe(is);
  });

  it("reads Claude's long paste as typed once its tags are read away", () => {
    const paste = longPrompt(2500);
    const hook = `<pasted_content id="2f3c">${paste}</pasted_content id="2f3c">`;
    expect(reportIsPrompt(paste, hook)).toBe(false);
    expect(pastedAsTyped(hook)).toBe(paste);
    expect(reportIsPrompt(paste, pastedAsTyped(hook))).toBe(true);
    // Tags without an id, white space around them, text typed before the paste.
    expect(pastedAsTyped(`\n<pasted_content>${paste}</pasted_content>\n`)).toBe(paste);
    const typed = `look at this: ${paste}`;
    expect(reportIsPrompt(typed, pastedAsTyped(`look at this: <pasted_content id="a1">${paste}</pasted_content id="a1">`))).toBe(true);
    // A prompt without tags is left as it is.
    expect(pastedAsTyped('fix the <b>login</b> page')).toBe('fix the <b>login</b> page');
  });
});

describe('promptDigest', () => {
  it('is stable: the same value for the same text in every version (tmux keeps it)', () => {
    expect(promptDigest('')).toBe('0.ztntfp');
    expect(promptDigest('hello')).toBe('5.m3bicr');
    expect(promptDigest('fix the login page')).toBe('i.fy6qwx');
    expect(promptDigest('é😀')).toBe('3.j37d7l');
    expect(promptDigest('fix the login page')).toBe(promptDigest(['fix', 'the', 'login', 'page'].join(' ')));
  });

  it('tells texts apart: a character, its place, the length', () => {
    const digests = ['fix the login page', 'fix the login pagE', 'fix the logni page', 'fix the login page ', 'fix the login pag'].map(
      promptDigest,
    );
    expect(new Set(digests).size).toBe(digests.length);
  });

  it('fits what tmux keeps of it (at most 32 characters), even for the longest prompt', () => {
    const digest = promptDigest('😀'.repeat(MAX_PROMPT_CHARS));
    expect(digest).toMatch(/^[0-9a-z]+\.[0-9a-z]+$/);
    expect(digest.length).toBeLessThanOrEqual(32);
  });
});
