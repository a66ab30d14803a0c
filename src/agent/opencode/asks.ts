/**
 * What opencode asks, as asks (docs/agents.md "Asks and answers"): its permission prompt
 * (`permission.asked`: a command, an edit, a fetch under `permission: "ask"`) and its question
 * tool (`question.asked`) of one question with options.
 *
 * Keys in opencode 1.18's permission prompt ("Allow once  Allow always  Reject", the first
 * selected): Enter allows once; Right then Enter picks "Allow always", which asks to confirm, and
 * Enter confirms; Escape rejects (opencode refuses the call and ends its turn). In its question,
 * each option is numbered and its digit picks and submits it. The prompt is drawn by opencode's
 * terminal UI once the event reached it, so keys wait for the pane to be quiet; opencode says
 * when it took them (`permission.replied`, `question.replied`).
 */
import type { AskOpening } from '../asks/ask.js';

/**
 * How long the pane must have been quiet before keys are typed: the plugin's report comes as
 * opencode publishes the event, before its terminal UI has drawn the prompt, and a key typed
 * before that goes to the prompt's input instead.
 */
export const OPENCODE_DIALOG_QUIET_MS = 300;

/** "Allow always": Right to it, Enter to pick it, Enter to confirm. */
const ALWAYS_KEYS = ['right', 'enter', 'enter'] as const;

/** opencode's permission prompt: what it asks to do (`permission`: `bash`, `edit`, `webfetch` ...). */
export function opencodePermission(permission: string, concern: string | undefined): AskOpening {
  return {
    kind: 'permission',
    tool: permission,
    concern: concern ?? permission,
    choices: [
      { id: 'once', label: 'Allow once', keys: [{ type: 'key', name: 'enter' }], effect: 'run' },
      { id: 'always', label: 'Allow always', keys: ALWAYS_KEYS.map((name) => ({ type: 'key', name })), effect: 'run' },
      // opencode refuses the call and ends its turn: it waits for the person.
      { id: 'reject', label: 'Reject', keys: [{ type: 'key', name: 'escape' }], effect: 'wait' },
    ],
    readiness: { quietMs: OPENCODE_DIALOG_QUIET_MS },
    landing: 'report',
  };
}

/** One question of opencode's question tool, as its plugin reports it. */
export interface OpencodeQuestion {
  readonly question: string;
  readonly header?: string;
  readonly options: readonly string[];
  readonly multiple?: boolean;
}

/** The questions of a report (`questions`, JSON), or [] when they do not read. */
export function readQuestions(json: string | undefined): OpencodeQuestion[] {
  if (json === undefined) return [];
  try {
    const v: unknown = JSON.parse(json);
    if (!Array.isArray(v)) return [];
    return v.flatMap((q: unknown) => {
      const o = q && typeof q === 'object' ? (q as Record<string, unknown>) : {};
      if (typeof o.question !== 'string' || !Array.isArray(o.options)) return [];
      return [
        {
          question: o.question,
          header: typeof o.header === 'string' ? o.header : '',
          options: o.options.map(String),
          multiple: o.multiple === true,
        },
      ];
    });
  } catch {
    return [];
  }
}

/**
 * opencode's question as an ask: only one question taking one answer of at most nine options
 * (its digits); null for another (several questions, several answers: the person answers at the
 * terminal).
 */
export function opencodeQuestion(questions: readonly OpencodeQuestion[]): AskOpening | null {
  const q = questions[0];
  if (questions.length !== 1 || q === undefined || q.multiple === true || q.options.length === 0 || q.options.length > 9) return null;
  return {
    kind: 'question',
    concern: q.question,
    ...(q.header ? { detail: q.header } : {}),
    choices: q.options.map((label, i) => ({ id: String(i + 1), label, keys: [{ type: 'keys', data: String(i + 1) }], effect: 'resume' })),
    readiness: { quietMs: OPENCODE_DIALOG_QUIET_MS },
    landing: 'report',
  };
}
