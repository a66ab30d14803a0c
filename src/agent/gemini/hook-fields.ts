/**
 * What tether's Gemini CLI hook program passes on (Gemini CLI 0.61's names; nothing else leaves
 * the hook): a fixed list of short string fields of the hook's input, and a few derived ones an
 * ask needs (docs/agents.md "Gemini CLI"): what the tool call is about (`concern`: the command,
 * the path), its `detail` (the command's description), the kind of confirmation a Notification is
 * about (`confirm`: `exec`, `edit`, `mcp`, `ask_user`, ...), and an `ask_user` call's questions
 * with their option labels (`questions`, compact JSON).
 *
 * Invariant: imports only the hook wire (with its questions), which imports nothing else (the
 * hook program loads it on every event Gemini waits on, and loads the wire anyway to send its
 * report); every derived field is a string that fits the hook wire's field limit, as JSON that still parses.
 */
import { hookQuestionsJson } from '../wire/hook-questions.js';
import { isRecord, textOf as text } from '../wire/hook-wire.js';

/** The hook events tether's settings subscribe to. */
export const GEMINI_HOOK_EVENTS = [
  'SessionStart',
  'BeforeAgent',
  'BeforeTool',
  'AfterTool',
  'AfterAgent',
  'Notification',
  'SessionEnd',
] as const;

export const GEMINI_HOOK_FIELDS: readonly string[] = [
  'hook_event_name',
  'session_id',
  'cwd',
  'source',
  'reason',
  'prompt',
  'tool_name',
  'notification_type',
  'message',
  'transcript_path',
];

/** Tool input keys that say what a tool call is about, in the order they are looked for. */
const CONCERN_KEYS = ['command', 'file_path', 'absolute_path', 'path', 'url', 'pattern', 'query', 'description'] as const;

/** The fields derived from a hook input's `tool_input` and `details`. */
export function derivedGeminiFields(input: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (!isRecord(input)) return out;
  const details = isRecord(input.details) ? input.details : null;
  if (details) {
    const type = text(details.type, 64);
    if (type !== null) out.confirm = type;
    const concern = text(details.command, 2000) ?? text(details.fileName, 2000) ?? text(details.toolName, 2000);
    if (concern !== null) out.concern = concern;
  }
  const tool = isRecord(input.tool_input) ? input.tool_input : null;
  if (!tool) return out;
  const key = CONCERN_KEYS.find((k) => typeof tool[k] === 'string');
  if (key !== undefined && out.concern === undefined) out.concern = text(tool[key], 2000)!;
  const detail = key === 'command' ? text(tool.description, 1000) : null;
  if (detail !== null) out.detail = detail;
  if (Array.isArray(tool.questions)) {
    const json = hookQuestionsJson(tool.questions, true);
    if (json !== null) out.questions = json;
  }
  return out;
}
