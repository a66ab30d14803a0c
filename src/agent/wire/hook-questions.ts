/**
 * A multiple-choice tool call's questions as a hook program passes them on (`questions`,
 * compact JSON): the same shape whichever agent asked, so that each adapter's asks read them the
 * same way. Claude Code's `AskUserQuestion` and Gemini CLI's `ask_user` both carry a
 * `questions` array of `{ question, header, multiSelect, options: [{ label }] }`; Gemini adds a
 * `type`.
 *
 * Invariant: imports only the hook wire; the JSON fits MAX_HOOK_FIELD_CHARS and still parses.
 */
import { fittedJson, isRecord, textOf } from './hook-wire.js';

/** At most this many questions are passed on, and this many options of each. */
const MAX_QUESTIONS = 4;
const MAX_OPTIONS = 12;

/**
 * The `questions` field for a tool input's `questions` array (its first MAX_QUESTIONS, their
 * texts cut to fit), with each question's `type` where `withType`; null when it cannot fit.
 */
export function hookQuestionsJson(raw: readonly unknown[], withType: boolean): string | null {
  const questions = raw.filter(isRecord).slice(0, MAX_QUESTIONS);
  return fittedJson((max) =>
    questions.map((q) => ({
      question: textOf(q.question, max * 5) ?? '',
      header: textOf(q.header, max) ?? '',
      ...(withType ? { type: textOf(q.type, 16) ?? '' } : {}),
      multiSelect: q.multiSelect === true,
      options: (Array.isArray(q.options) ? q.options : [])
        .slice(0, MAX_OPTIONS)
        .map((o) => (isRecord(o) ? (textOf(o.label, max) ?? '') : '')),
    })),
  );
}
