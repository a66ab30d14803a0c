/**
 * Whether a prompt still shows in its agent's input box after Enter (docs/agents.md "Typing a
 * prompt"): the one thing tether reads off the screen for a prompt, and only to decide the one more
 * Enter, never to confirm it (the agent's own report does that). An agent clears its input box the
 * moment it takes a prompt, so a prompt whose text is still at the bottom of the screen, with no
 * report from the agent, was not submitted (Codex and Gemini CLI took the Enter as a newline).
 *
 * The look is forgiving of how agents draw: the text may wrap, sit inside a box (`│`), behind a
 * marker (`>`), or be shown as a paste's placeholder (`[Pasted text #1 +2 lines]`). So white space
 * and box-drawing characters are left out on both sides, and the start or the end of the prompt
 * (PROMPT_FRAGMENT_CHARS of it) showing in the bottom rows counts, as does a paste's placeholder.
 * A wrong "shows" costs an Enter on an empty input box, which no agent acts on.
 */

/** Characters of the prompt's start or end looked for. */
export const PROMPT_FRAGMENT_CHARS = 24;
/** Rows at the bottom of the screen looked at, beyond the prompt's own lines. */
export const PROMPT_BOX_ROWS = 12;

/** What agents show in place of a pasted text: `[Pasted text #1 +2 lines]`, `[Pasted Content 3000 chars]`, `[paste #1 ...]`. */
const PASTE_PLACEHOLDER = /\[past(?:e|ed)\b/i;
/** White space and the box-drawing block (U+2500 to U+257F). */
const LEFT_OUT = /[\s\u2500-\u257f]+/gu;

const squeezed = (text: string) => text.normalize('NFC').replace(LEFT_OUT, '');

/** Whether `screen` (a capture of the visible pane, rows by LF) shows `text` in its bottom rows. */
export function screenShowsPrompt(screen: string, text: string): boolean {
  const rows = screen.split('\n');
  while (rows.length > 0 && rows[rows.length - 1]!.trim() === '') rows.pop();
  const lines = text.split('\n').length;
  const bottom = rows.slice(-(lines + PROMPT_BOX_ROWS));
  if (bottom.some((row) => PASTE_PLACEHOLDER.test(row))) return true;
  const shown = squeezed(bottom.join(''));
  const chars = [...squeezed(text)];
  if (chars.length === 0) return false;
  const head = chars.slice(0, PROMPT_FRAGMENT_CHARS).join('');
  const tail = chars.slice(-PROMPT_FRAGMENT_CHARS).join('');
  return shown.includes(head) || shown.includes(tail);
}
