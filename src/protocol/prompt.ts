/**
 * A prompt sent from a phone (docs/api.md "Prompts"): its limits, the rules its text and id keep,
 * and how the text an agent reported is known to be the prompt's. Its statuses, reasons and shape
 * are the prompt machine's (src/machines/prompt.machine.ts). Plain code, so the running code and
 * the schemas share it without loading TypeBox.
 *
 * Invariant: a text that passes `checkPromptText` is what is typed: 1 to MAX_PROMPT_CHARS
 * characters, not blank, line ends as LF, no control character but tab and LF.
 */
import { DomainError } from '../errors.js';
import { hasControlChar } from './text.js';

export { PROMPT_FAIL_REASONS, PROMPT_STATUSES, type PromptRecord, type PromptStatus } from '../machines/prompt.machine.js';

/** The longest prompt, in characters (code points). */
export const MAX_PROMPT_CHARS = 100_000;
/** A client's id for a prompt: what a retry after a lost answer sends again. */
export const PROMPT_ID_PATTERN = '^[A-Za-z0-9._-]{1,64}$';
const PROMPT_ID_RE = new RegExp(PROMPT_ID_PATTERN);
/** Prompts queued in one session at most (a further one is refused). */
export const MAX_QUEUED_PROMPTS = 20;
/** Decided prompts a session lists (`GET /sessions/:id/prompts`), the newest. */
export const LISTED_DECIDED_PROMPTS = 20;
/** Ids of older decided prompts remembered, so that a retry of one is never typed again. */
export const REMEMBERED_PROMPT_IDS = 500;

const invalid = (field: string, reason: string) => new DomainError('invalid', reason, { field });

/** Whether `id` is a prompt id a client may choose. */
export const isPromptId = (id: string): boolean => PROMPT_ID_RE.test(id);

/** The text to type: line ends folded to LF; throws `invalid` (field `text`) for one that breaks a rule. */
export function checkPromptText(text: string): string {
  const folded = text.replace(/\r\n?/g, '\n');
  // Every control character but tab and newline (line ends are folded to LF first) is refused.
  if (hasControlChar(folded.replace(/[\t\n]/g, '')))
    throw invalid('text', 'must not contain control characters (an escape, a NUL, ...): only tab and newlines');
  let chars = 0;
  for (const _ of folded) if (++chars > MAX_PROMPT_CHARS) throw invalid('text', `must be at most ${MAX_PROMPT_CHARS} characters`);
  if (folded.trim() === '') throw invalid('text', 'must not be blank');
  return folded;
}

/** The text as compared: Unicode NFC, every run of white space one space, trimmed. */
export function comparableText(text: string): string {
  return text.normalize('NFC').replace(/\s+/gu, ' ').trim();
}

/**
 * Fewest characters of a reported text that confirm a longer prompt: agents report a prompt cut
 * (pi's extension at 2000 characters, a hook's field at 4096), so a report that is the start of
 * the prompt and at least this long is the prompt.
 */
export const MIN_CUT_REPORT_CHARS = 1000;

/** Whether `reported` (what the agent said the user submitted) is the prompt `sent`. */
export function reportIsPrompt(sent: string, reported: string): boolean {
  const a = comparableText(sent);
  const b = comparableText(reported);
  if (b === '') return false;
  if (a === b) return true;
  return b.length >= MIN_CUT_REPORT_CHARS && a.startsWith(b.replace(/…$/u, ''));
}

/** A short, stable digest of a prompt's text (FNV-1a over its UTF-16 units), to tell a retry from another text. */
export function promptDigest(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return `${text.length.toString(36)}.${h.toString(36)}`;
}
