/**
 * What tether's Claude Code hook program passes on (Claude's documented names; nothing else
 * leaves the hook): a fixed list of short string fields of the hook's input, and a few derived
 * from the tool's input that a question needs (docs/agents.md "Claude Code"): what the tool is
 * about (`concern`: the command, the path, the URL), its `detail` (the command's description),
 * a multiple-choice question's questions and options (`questions`, compact JSON), the answer a
 * question got (`answer`), and the permission dialog's suggestions (`suggestions`, compact JSON).
 *
 * Invariant: imports only the hook wire (with its questions), which imports nothing else (the
 * hook program loads it on every event Claude waits on, and loads the wire anyway to send its
 * report); every derived field is a string that fits MAX_HOOK_FIELD_CHARS, as JSON that still parses.
 */
import { hookQuestionsJson } from '../wire/hook-questions.js';
import { fittedJson as fitted, isRecord, pickHookFields, textOf as text } from '../wire/hook-wire.js';

export const CLAUDE_HOOK_FIELDS: readonly string[] = [
  'hook_event_name',
  'session_id',
  'cwd',
  'source',
  'prompt',
  'tool_name',
  'tool_use_id',
  'notification_type',
  'message',
  'transcript_path',
  'error',
  'last_assistant_message',
];

/** Tool input keys that say what a tool call is about, in the order they are looked for. */
const CONCERN_KEYS = ['command', 'file_path', 'notebook_path', 'url', 'query', 'pattern', 'path', 'description', 'prompt'] as const;

/** The fields derived from a hook input's `tool_input`, `tool_response` and `permission_suggestions`. */
export function derivedClaudeFields(input: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (!isRecord(input)) return out;
  const tool = isRecord(input.tool_input) ? input.tool_input : null;
  if (tool) {
    const key = CONCERN_KEYS.find((k) => typeof tool[k] === 'string');
    if (key !== undefined) out.concern = text(tool[key], 2000)!;
    const detail = key === 'command' ? text(tool.description, 1000) : key === 'url' ? text(tool.prompt, 1000) : null;
    if (detail !== null) out.detail = detail;
    if (Array.isArray(tool.questions)) {
      const json = hookQuestionsJson(tool.questions, false);
      if (json !== null) out.questions = json;
    }
    // A question's answer, as Claude records it after the dialog (`answers`: question -> label).
    const answers = isRecord(tool.answers)
      ? tool.answers
      : isRecord(input.tool_response) && isRecord(input.tool_response.answers)
        ? input.tool_response.answers
        : null;
    const first = answers ? Object.values(answers).find((v) => typeof v === 'string') : undefined;
    if (typeof first === 'string') out.answer = first.slice(0, 1000);
  }
  if (Array.isArray(input.permission_suggestions)) {
    const json = fitted((max) =>
      (input.permission_suggestions as unknown[])
        .filter(isRecord)
        .slice(0, 8)
        .map((s) => ({
          type: text(s.type, 64) ?? '',
          ...(typeof s.mode === 'string' ? { mode: s.mode.slice(0, 64) } : {}),
          ...(Array.isArray(s.directories) ? { directories: s.directories.slice(0, 4).map((d) => text(d, max * 5) ?? '') } : {}),
          ...(Array.isArray(s.rules)
            ? {
                rules: s.rules
                  .filter(isRecord)
                  .slice(0, 4)
                  .map((r) => ({
                    toolName: text(r.toolName, 64) ?? '',
                    ...(typeof r.ruleContent === 'string' ? { ruleContent: r.ruleContent.slice(0, max) } : {}),
                  })),
              }
            : {}),
        })),
    );
    if (json !== null) out.suggestions = json;
  }
  return out;
}

/** The event of the report tether's statusLine program sends (statusline.ts): Claude's usage windows, no state. */
export const STATUS_LINE_EVENT = 'StatusLine';

/** The usage windows Claude Code hands its statusLine (`rate_limits.<name>`), as tether reads them. */
export const CLAUDE_USAGE_WINDOWS = ['five_hour', 'seven_day'] as const;

/** The fields of a `StatusLine` report: the event, the conversation, and each window's `<name>_used` and `<name>_resets`. */
export const CLAUDE_STATUSLINE_FIELDS: readonly string[] = [
  'hook_event_name',
  'session_id',
  'cwd',
  ...CLAUDE_USAGE_WINDOWS.flatMap((name) => [`${name}_used`, `${name}_resets`]),
];

/** Longest figure passed on (a percent, unix seconds): anything longer is no figure. */
const MAX_FIGURE_CHARS = 64;

/** A figure of Claude's as text: a number as JS writes it, a string as it came (cut), anything else empty. */
function figure(v: unknown): string {
  if (typeof v === 'number') return String(v);
  return typeof v === 'string' ? v.slice(0, MAX_FIGURE_CHARS) : '';
}

/**
 * The `StatusLine` report of a statusLine input: `used_percentage` and `resets_at` of each window
 * in `rate_limits` as text, with the session's id and directory. Null when the input gives no
 * window (Claude's first run at start-up, an API key login, an answer without the headers).
 */
export function claudeStatusLineFields(input: unknown): Record<string, string> | null {
  if (!isRecord(input) || !isRecord(input.rate_limits)) return null;
  const limits = input.rate_limits;
  const windows = CLAUDE_USAGE_WINDOWS.filter((name) => isRecord(limits[name]));
  if (windows.length === 0) return null;
  const out: Record<string, string> = { hook_event_name: STATUS_LINE_EVENT, ...pickHookFields(input, ['session_id', 'cwd']) };
  for (const name of windows) {
    const w = limits[name] as Record<string, unknown>;
    out[`${name}_used`] = figure(w.used_percentage);
    out[`${name}_resets`] = figure(w.resets_at);
  }
  return out;
}
