/**
 * What Claude Code asks, as asks (docs/agents.md "Claude Code", "Asks and answers"): its
 * permission dialog (`PermissionRequest` hook: a tool call that needs the person's yes) and its
 * multiple-choice question (`AskUserQuestion`, which asks through the same hook), with the keys
 * that pick each choice in Claude Code 2.1's dialogs:
 *
 * - permission: `1` is "Yes"; `2` is the "Yes, and don't ask again …" choice, shown when Claude
 *   has suggestions for it (the hook's `permission_suggestions`); Escape is "No" (Claude stops
 *   and waits: "What should Claude do instead?"). Other choices Claude may show (switching to
 *   auto mode) are not offered.
 * - question: a digit picks that option and submits a one-question, one-answer dialog.
 *
 * Claude drops keys that come the moment its dialog opens, so an answer waits until the pane has
 * been quiet for CLAUDE_DIALOG_QUIET_MS; the dialog says nothing when it takes a key but redraws,
 * so an answer lands when the pane draws after the keys.
 */
import type { AskChoiceSpec, AskOpening } from '../asks/ask.js';

/** How long the pane must have been quiet before keys are typed into a dialog (Claude drops keys 50 ms after it shows, takes them at 300). */
export const CLAUDE_DIALOG_QUIET_MS = 400;

const QUIET = { quietMs: CLAUDE_DIALOG_QUIET_MS } as const;

interface Suggestion {
  readonly type?: string;
  readonly mode?: string;
  readonly directories?: readonly string[];
  readonly rules?: readonly { readonly toolName?: string; readonly ruleContent?: string }[];
}

interface Question {
  readonly question: string;
  readonly header: string;
  readonly multiSelect: boolean;
  readonly options: readonly string[];
}

function parse<T>(json: string | undefined): T | null {
  if (json === undefined) return null;
  try {
    return JSON.parse(json) as T;
  } catch {
    return null;
  }
}

/** Claude's words for its "don't ask again" choice, from its first suggestion. */
function alwaysLabel(suggestions: readonly Suggestion[]): string {
  for (const s of suggestions) {
    const rule = s.rules?.[0];
    if (s.type === 'addRules' && rule) return `Yes, and don't ask again for ${rule.ruleContent ?? rule.toolName ?? 'this'}`;
    if (s.type === 'addDirectories' && s.directories?.length) return `Yes, and always allow access to ${s.directories.join(', ')}`;
    if (s.type === 'setMode' && s.mode === 'acceptEdits') return 'Yes, and accept edits for this session';
  }
  return "Yes, and don't ask again for this";
}

/** The permission dialog of a `PermissionRequest` for `tool`. */
export function claudePermission(f: Readonly<Record<string, string>>): AskOpening {
  const tool = f.tool_name || 'tool';
  const suggestions = parse<Suggestion[]>(f.suggestions) ?? [];
  const choices: AskChoiceSpec[] = [
    { id: 'yes', label: 'Yes', keys: [{ type: 'keys', data: '1' }], effect: 'run' },
    ...(suggestions.length > 0
      ? [{ id: 'always', label: alwaysLabel(suggestions), keys: [{ type: 'keys', data: '2' } as const], effect: 'run' as const }]
      : []),
    { id: 'no', label: 'No, and tell Claude what to do differently', keys: [{ type: 'key', name: 'escape' }], effect: 'wait' },
  ];
  return {
    kind: 'permission',
    tool,
    concern: f.concern ?? `use ${tool}`,
    ...(f.detail ? { detail: f.detail } : {}),
    choices,
    readiness: QUIET,
    landing: 'screen',
  };
}

/**
 * The question dialog of `AskUserQuestion`: its options as choices (ids `1`, `2`, …). Only a
 * dialog of one question taking one answer is offered (one digit answers it); null otherwise.
 */
export function claudeQuestion(f: Readonly<Record<string, string>>): AskOpening | null {
  const questions = parse<Question[]>(f.questions);
  const q = questions?.length === 1 ? questions[0]! : null;
  if (!q || q.multiSelect || q.options.length < 1 || q.options.length > 9) return null;
  return {
    kind: 'question',
    tool: f.tool_name || 'AskUserQuestion',
    concern: q.question,
    ...(q.header ? { detail: q.header } : {}),
    choices: q.options.map((label, i) => ({ id: String(i + 1), label, keys: [{ type: 'keys', data: String(i + 1) }], effect: 'resume' })),
    readiness: QUIET,
    landing: 'screen',
  };
}
