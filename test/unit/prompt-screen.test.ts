/**
 * Whether a prompt still shows in its agent's input box (src/service/prompts/prompt-screen.ts): the one
 * look tether takes at the screen for a prompt, to decide the one more Enter. Agents wrap the text,
 * draw it in a box, behind a marker, or show a paste as a placeholder; only the bottom rows count,
 * never the text further up (the conversation, where a prompt the agent took is shown again).
 */
import { describe, expect, it } from 'vitest';
import { PROMPT_BOX_ROWS, screenShowsPrompt } from '../../src/service/prompts/prompt-screen.js';

/** `text` cut into rows of `width` characters. */
const wrapped = (text: string, width: number): string[] => {
  const rows: string[] = [];
  for (let i = 0; i < text.length; i += width) rows.push(text.slice(i, i + width));
  return rows;
};

/** A screen of `rows`, padded with blank rows below to `height`, as capture-pane gives it. */
const screen = (rows: readonly string[], height = rows.length + 3): string =>
  [...rows, ...Array.from({ length: Math.max(0, height - rows.length) }, () => '')].join('\n');

const PROMPT = 'add tests for the login page, then run them and fix what fails';
/** A conversation above the input box. */
const conversation = Array.from({ length: 30 }, (_, i) => `⏺ line ${i} of what the agent said before`);

describe('screenShowsPrompt', () => {
  it.each([
    ['on one row behind a marker', [...conversation, `> ${PROMPT}`]],
    ['wrapped over rows at 20 columns', [...conversation, ...wrapped(`> ${PROMPT}`, 20)]],
    ['wrapped where a word breaks', [...conversation, '> add tests for the lo', 'gin page, then run them and', ' fix what fails']],
    [
      "in a box of box-drawing characters (Claude's, Gemini's)",
      [
        ...conversation,
        '╭──────────────────────────────────────╮',
        `│ > ${PROMPT.slice(0, 34)} │`,
        `│   ${PROMPT.slice(34)}${' '.repeat(34 - PROMPT.slice(34).length)} │`,
        '╰──────────────────────────────────────╯',
        '  ? for shortcuts',
      ],
    ],
    ['with only its end showing (its start scrolled out of the box)', [...conversation, `│ …${PROMPT.slice(30)} │`]],
    ['with only its start showing (its end cut by the box)', [...conversation, `│ > ${PROMPT.slice(0, 30)}… │`]],
    ['above a status line and blank rows', [...conversation, `> ${PROMPT}`, '', '  esc to interrupt', '', '']],
  ])('finds the prompt %s', (_what, rows) => {
    expect(screenShowsPrompt(screen(rows), PROMPT)).toBe(true);
  });

  it.each([
    ['[Pasted text #1 +2 lines]', "Claude Code's"],
    ['[Pasted Content 3000 chars]', "Gemini CLI's"],
    ['[paste #1 3000 chars]', "opencode's"],
    ['[Pasted ~3 lines]', "Codex's"],
  ])('counts a paste placeholder %s (%s) as the prompt', (placeholder) => {
    const long = `${'a long pasted stack trace line\n'.repeat(40)}what is wrong?`;
    expect(screenShowsPrompt(screen([...conversation, `│ > ${placeholder} │`]), long)).toBe(true);
  });

  it('finds a prompt of several lines drawn line by line', () => {
    const text = 'first line of the prompt here\nsecond line of the prompt\nthird and last line of it';
    expect(screenShowsPrompt(screen([...conversation, ...text.split('\n').map((l) => `│ ${l}`)]), text)).toBe(true);
  });

  it('matches composed and decomposed accents alike', () => {
    const text = 'répare le café et le résumé de la page';
    expect(screenShowsPrompt(screen([...conversation, `> ${text.normalize('NFD')}`]), text)).toBe(true);
  });

  it.each([
    ['an empty input box', [...conversation, '╭────────╮', '│ >      │', '╰────────╯']],
    ['a blank screen', []],
    ['another prompt in the box', [...conversation, '> fix the signup form and its validation messages']],
    [
      'the prompt only far above the bottom rows (the conversation, where the agent shows what it took)',
      [`> ${PROMPT}`, ...conversation, '╭────────╮', '│ >      │', '╰────────╯'],
    ],
  ])('does not find it in %s', (_what, rows) => {
    expect(screenShowsPrompt(screen(rows), PROMPT)).toBe(false);
  });

  it("looks at the prompt's own rows and PROMPT_BOX_ROWS more at the bottom, blank rows below left out", () => {
    const below = (n: number) => Array.from({ length: n }, (_, i) => `status row ${i}`);
    // One row of prompt: it and PROMPT_BOX_ROWS rows count.
    expect(screenShowsPrompt(screen([...conversation, `> ${PROMPT}`, ...below(PROMPT_BOX_ROWS)], 80), PROMPT)).toBe(true);
    expect(screenShowsPrompt(screen([...conversation, `> ${PROMPT}`, ...below(PROMPT_BOX_ROWS + 1)], 80), PROMPT)).toBe(false);
  });

  it('a blank prompt never shows', () => {
    expect(screenShowsPrompt(screen([...conversation, '> ']), ' \n ')).toBe(false);
  });
});
