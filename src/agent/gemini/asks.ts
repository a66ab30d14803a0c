/**
 * What Gemini CLI asks, as asks (docs/agents.md "Gemini CLI", "Asks and answers"): its
 * confirmation of a tool call (its `Notification` hook of type `ToolPermission`, which runs as
 * the dialog shows) and its `ask_user` question (the same notification; the questions and their
 * options come from the `BeforeTool` hook of that call), with the keys that pick each choice in
 * Gemini CLI 0.61's dialogs:
 *
 * - confirmation ("Allow execution of [Shell]?"): `1` is "Allow once", `2` "Allow for this
 *   session" (a digit answers at once, no Enter); Escape is "No, suggest changes" (Gemini cancels
 *   the call and waits for the person).
 * - question: a digit picks that option and submits a one-question form.
 *
 * Gemini draws its dialog as the notification runs, so an answer waits until the pane has been
 * quiet for GEMINI_DIALOG_QUIET_MS; the dialog redraws when it takes a key, so an answer lands
 * when the pane draws after the keys.
 */
import type { AskOpening } from '../asks/ask.js';

/** How long the pane must have been quiet before keys are typed into a dialog. */
export const GEMINI_DIALOG_QUIET_MS = 400;
/** Gemini CLI's question tool. */
export const GEMINI_QUESTION_TOOL = 'ask_user';

const QUIET = { quietMs: GEMINI_DIALOG_QUIET_MS } as const;

interface Question {
  readonly question: string;
  readonly header: string;
  readonly type: string;
  readonly multiSelect: boolean;
  readonly options: readonly string[];
}

/** Gemini's confirmation of a call of `tool` (`concern`: its command or path). */
export function geminiPermission(tool: string, concern: string | undefined, detail: string | undefined): AskOpening {
  return {
    kind: 'permission',
    tool,
    concern: concern ?? `use ${tool}`,
    ...(detail ? { detail } : {}),
    choices: [
      { id: 'yes', label: 'Allow once', keys: [{ type: 'keys', data: '1' }], effect: 'run' },
      { id: 'always', label: 'Allow for this session', keys: [{ type: 'keys', data: '2' }], effect: 'run' },
      { id: 'no', label: 'No, suggest changes', keys: [{ type: 'key', name: 'escape' }], effect: 'wait' },
    ],
    readiness: QUIET,
    landing: 'screen',
  };
}

/**
 * The form of an `ask_user` call (`questions`: the JSON the hook program derived): its options
 * as choices (ids `1`, `2`, …). Only a form of one choice question taking one answer is offered
 * (one digit submits it); null otherwise.
 */
export function geminiQuestion(questions: string | undefined): AskOpening | null {
  let parsed: Question[] | null;
  try {
    parsed = questions !== undefined ? (JSON.parse(questions) as Question[]) : null;
  } catch {
    parsed = null;
  }
  const q = parsed?.length === 1 ? parsed[0]! : null;
  if (!q || q.multiSelect || (q.type !== '' && q.type !== 'choice') || q.options.length < 1 || q.options.length > 9) return null;
  return {
    kind: 'question',
    tool: GEMINI_QUESTION_TOOL,
    concern: q.question,
    ...(q.header ? { detail: q.header } : {}),
    choices: q.options.map((label, i) => ({ id: String(i + 1), label, keys: [{ type: 'keys', data: String(i + 1) }], effect: 'resume' })),
    readiness: QUIET,
    landing: 'screen',
  };
}
