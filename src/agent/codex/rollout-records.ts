/**
 * What the records of a Codex rollout file (`rollout-<time>-<thread>.jsonl`, one JSON object a
 * line, written as the turn goes) mean as agent state (docs/agents.md "Codex"). Codex 0.169
 * writes, for a turn with a tool call: `event_msg`/`task_started`, the user's `message`, a
 * `function_call` (`name`, `call_id`) when the model asks for the tool, which then runs, its
 * `function_call_output` (same `call_id`) once it ran, the answer, and `event_msg`/`task_complete`.
 *
 * Each `token_count` record carries the account's usage windows (rollout-usage.ts); the turn's
 * start and end, the model it runs (`turn_context`, `thread_settings_applied`), the version of
 * Codex that wrote the file (`session_meta`) and those windows are also handed on as facts, for
 * what Codex shows at a turn's end (rate-limit-nudge.ts).
 *
 * Pure: no I/O. A line too long to keep whole is read from its head alone (`readRolloutHead`):
 * the fields that matter come first in Codex's records (type, payload type, a call's name).
 */
import { stateEvent, type HookOutcome } from '../contract/adapter.js';
import { taskStop, usedUpLimit, type RolloutLimit } from './rollout-stops.js';
import { rolloutRates, type RolloutRates } from './rollout-usage.js';

/** A tool call as its record says it: its id and name, and, for a shell call, the command and why it asks to leave the sandbox. */
export interface RolloutCall {
  readonly id: string;
  readonly name: string;
  readonly command?: string;
  readonly justification?: string;
}

/** What a record tells of the turn and of Codex, beside the state (rate-limit-nudge.ts reads them). */
export interface RolloutFacts {
  /** A turn started (`task_started`), ended (`task_complete`, `turn_aborted`), or ended on a stop (`task_complete` with an `error`). */
  readonly turn?: 'started' | 'ended' | 'stopped';
  /** The model the conversation runs from now on. */
  readonly model?: string;
  /** The version of Codex that made the file (`session_meta`'s `cli_version`). */
  readonly cliVersion?: string;
  /** What a `token_count` record's `rate_limits` says. */
  readonly rates?: RolloutRates;
}

/**
 * What one record means: state events, the prompt it carries (for auto-naming), the account's
 * usage windows, the call it starts, the stop a turn ended on (rollout-stops.ts), a used-up usage
 * window it reports, and its facts.
 */
export type RolloutMeaning = Pick<HookOutcome, 'events' | 'userMessage' | 'stop' | 'usage'> & {
  readonly call?: RolloutCall;
  readonly limit?: RolloutLimit;
  readonly facts?: RolloutFacts;
};

/** Longest command and justification kept of a call. */
const MAX_CALL_TEXT = 2000;

const NOTHING: RolloutMeaning = { events: [] };
/** Tool calls the model makes (each has a `call_id`; the first three have a `name`). */
const CALLS = new Set(['function_call', 'custom_tool_call', 'local_shell_call', 'tool_search_call', 'web_search_call']);
const OUTPUTS = new Set(['function_call_output', 'custom_tool_call_output', 'local_shell_call_output', 'tool_search_output']);

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** A user message's text (its `input_text` parts), when it is a prompt the user typed. */
function promptText(payload: Record<string, unknown>): string | undefined {
  if (payload.role !== 'user' || !Array.isArray(payload.content)) return undefined;
  const text = payload.content
    .map((p: unknown) => (p && typeof p === 'object' && 'text' in p && typeof p.text === 'string' ? p.text : ''))
    .join('');
  // Codex adds its own context as user messages in tags (`<environment_context>`, ...).
  return text === '' || text.startsWith('<') ? undefined : text;
}

/** What one record (parsed) means. */
export function readRolloutRecord(record: unknown): RolloutMeaning {
  if (!record || typeof record !== 'object') return NOTHING;
  const { type, payload } = record as { type?: unknown; payload?: unknown };
  if (!payload || typeof payload !== 'object') return NOTHING;
  const p = payload as Record<string, unknown>;
  const m = meaning(str(type), str(p.type), str(p.name), str(p.call_id), p);
  const kind = str(p.type);
  if (str(type) !== 'response_item' || kind === undefined || !CALLS.has(kind)) return m;
  return { ...m, call: { id: str(p.call_id) ?? '', name: str(p.name) ?? kind, ...callWords(p) } };
}

/** A shell call's command and justification: `exec_command` `{cmd}`, `shell_command` `{command}`, `shell` `{command: argv}`, a local shell's action. */
function callWords(p: Record<string, unknown>): { command?: string; justification?: string } {
  let args: Record<string, unknown> = {};
  try {
    const parsed: unknown = typeof p.arguments === 'string' ? JSON.parse(p.arguments) : p.action;
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) args = parsed as Record<string, unknown>;
  } catch {
    return {};
  }
  const raw = args.cmd ?? args.command;
  const command =
    typeof raw === 'string' ? raw : Array.isArray(raw) && raw.every((w) => typeof w === 'string') ? shellWords(raw) : undefined;
  const justification = str(args.justification);
  return {
    ...(command !== undefined ? { command: command.slice(0, MAX_CALL_TEXT) } : {}),
    ...(justification !== undefined ? { justification: justification.slice(0, MAX_CALL_TEXT) } : {}),
  };
}

/** An argv as a person reads it: `bash -lc 'ls -l'` is `ls -l`, as Codex shows it. */
function shellWords(argv: readonly string[]): string {
  if (argv.length === 3 && /(^|\/)(ba|z)?sh$/.test(argv[0]!) && (argv[1] === '-lc' || argv[1] === '-c')) return argv[2]!;
  return argv.join(' ');
}

function meaning(
  type: string | undefined,
  kind: string | undefined,
  name?: string,
  callId?: string,
  p?: Record<string, unknown>,
): RolloutMeaning {
  if (type === 'event_msg') {
    if (kind === 'task_started') return { events: [stateEvent('agent.start')], facts: { turn: 'started' } };
    // A turn that ended on an API error Codex gave up on: the stop, not a finished turn.
    const stop = kind === 'task_complete' && p ? taskStop(p) : null;
    if (stop !== null) return { events: [], stop, facts: { turn: 'stopped' } };
    // A finished turn, or one the user interrupted (Esc): Codex waits for the user.
    if (kind === 'task_complete' || kind === 'turn_aborted')
      return { events: [stateEvent('agent.end', { idle: true })], facts: { turn: 'ended' } };
    if (kind === 'token_count' && p) return tokenCount(p);
    const settings = kind === 'thread_settings_applied' && p ? p.thread_settings : undefined;
    const model = settings && typeof settings === 'object' ? str((settings as Record<string, unknown>).model) : undefined;
    return model !== undefined ? { events: [], facts: { model } } : NOTHING;
  }
  if (type === 'turn_context' && p && typeof p.model === 'string') return { events: [], facts: { model: p.model } };
  if (type === 'session_meta' && p && typeof p.cli_version === 'string') return { events: [], facts: { cliVersion: p.cli_version } };
  if (type !== 'response_item' || kind === undefined) return NOTHING;
  if (CALLS.has(kind)) return { events: [stateEvent('tool.start', { id: callId ?? '', tool: name ?? kind })] };
  if (OUTPUTS.has(kind)) return { events: [stateEvent('tool.end', { id: callId ?? '' })] };
  const prompt = kind === 'message' && p ? promptText(p) : undefined;
  return prompt !== undefined ? { events: [], userMessage: prompt } : NOTHING;
}

/** A `token_count` record: the usage windows it reports, a used-up one (a usage limit's reset), its rates. */
function tokenCount(p: Record<string, unknown>): RolloutMeaning {
  const limit = usedUpLimit(p);
  const rates = rolloutRates(p);
  return {
    events: [],
    ...(limit !== null ? { limit } : {}),
    ...(rates?.usage ? { usage: rates.usage } : {}),
    ...(rates !== null ? { facts: { rates } } : {}),
  };
}

/** A JSON string literal's value at the start of `rest` (`"..."`), or undefined. */
function literal(rest: string | undefined): string | undefined {
  const m = rest === undefined ? null : /^"((?:[^"\\]|\\.)*)"/.exec(rest);
  if (!m) return undefined;
  try {
    return JSON.parse(`"${m[1]}"`) as string;
  } catch {
    return undefined;
  }
}

/** The value of the first `"key":"..."` in `text`. */
export function firstField(text: string, key: string): string | undefined {
  const at = text.indexOf(`"${key}":`);
  return at < 0 ? undefined : literal(text.slice(at + key.length + 3));
}

/** What a record means, read from the head of a line too long to keep (its call id may be cut off). */
export function readRolloutHead(head: string): RolloutMeaning {
  const type = firstField(head, 'type');
  const at = head.indexOf('"payload":{');
  if (at < 0) return NOTHING;
  const inner = head.slice(at + '"payload":{'.length);
  const kind = /^"type":/.test(inner) ? literal(inner.slice('"type":'.length)) : undefined;
  return meaning(type, kind, firstField(inner, 'name'), firstField(inner, 'call_id'));
}

/** What one line means: parsed whole when it is JSON, else read from its head. */
export function readRolloutLine(line: string): RolloutMeaning {
  try {
    return readRolloutRecord(JSON.parse(line));
  } catch {
    return readRolloutHead(line);
  }
}

/** The thread id and working directory a rollout's first line (`session_meta`) names, read from its head. */
export function readSessionMeta(head: string): { thread: string; cwd: string } | null {
  if (firstField(head, 'type') !== 'session_meta') return null;
  const at = head.indexOf('"payload":{');
  if (at < 0) return null;
  const inner = head.slice(at);
  const thread = firstField(inner, 'id');
  const cwd = firstField(inner, 'cwd');
  return thread !== undefined && cwd !== undefined ? { thread, cwd } : null;
}
