/**
 * Claude Code's hook events as agent state (docs/agents.md "Claude Code"): the fields the hook
 * program passes on, and what each event means. Claude waits on its hooks, so the program only
 * copies `CLAUDE_HOOK_FIELDS` and the meaning is decided here, in the daemon; the same for the
 * usage windows tether's statusLine program passes on (`StatusLine`, docs/agents.md "Usage").
 *
 * Invariant: an event tether does not know, or one that says nothing about the state, changes
 * nothing (a `StatusLine` report carries windows, never a state event); a conversation id is kept
 * only in a shape safe for `--resume <id>`.
 */
import { NO_OUTCOME, stateEvent, type HookOutcome } from '../contract/adapter.js';
import { epochMsOfSeconds, numberOf, type UsageReading, type UsageReport } from '../contract/usage.js';
import { isConversationId } from '../wire/hook-wire.js';
import { claudePermission, claudeQuestion } from './asks.js';
import { CLAUDE_USAGE_WINDOWS, STATUS_LINE_EVENT } from './hook-fields.js';

/** Claude Code's multiple-choice question tool. */
export const QUESTION_TOOL = 'AskUserQuestion';

/** The hook events tether's settings file subscribes to. */
export const CLAUDE_HOOK_EVENTS = [
  'SessionStart',
  'UserPromptSubmit',
  'PreToolUse',
  'PostToolUse',
  'PostToolUseFailure',
  'PermissionRequest',
  'Notification',
  'Stop',
  'StopFailure',
  'SessionEnd',
] as const;

/** Notification types that mean Claude waits for the person (a permission, a question). */
const WAITING_NOTIFICATIONS = new Set(['permission_prompt', 'elicitation_dialog']);
/** Used when Claude gives a tool call no id (older versions): calls then pair by order. */
const UNNAMED_TOOL_CALL = 'claude-tool';

function facts(f: Readonly<Record<string, string>>): Omit<HookOutcome, 'events'> {
  const id = f.session_id;
  const cwd = f.cwd;
  return {
    ...(id !== undefined && isConversationId(id) ? { conversation: id } : {}),
    ...(cwd !== undefined ? { cwd } : {}),
  };
}

/** Whether a Notification is Claude asking the person something. */
function isQuestion(f: Readonly<Record<string, string>>): boolean {
  const type = f.notification_type;
  if (type !== undefined) return WAITING_NOTIFICATIONS.has(type);
  // Versions without notification_type: the permission notice says so in its message.
  return /\bpermission\b/i.test(f.message ?? '');
}

/** Claude Code's tags around a long paste (`<pasted_content id="2f3c">` ... `</pasted_content id="2f3c">`). */
const PASTE_TAG = /<\/?pasted_content(?: id="[^"]*")?>/g;

/** A prompt as the person sent it: Claude Code 2.1 hands a long paste on inside tags of its own (measured). */
export function pastedAsTyped(prompt: string): string {
  return prompt.replace(PASTE_TAG, '').trim();
}

/**
 * The windows of a `StatusLine` report: each window's percent as Claude gave it (already a
 * percent, rounded here to 0.1; NaN when it is not a number) and its reset (unix seconds, as
 * epoch ms; null when it is not a number). Null when it names no window. Not clamped: the hub does.
 */
export function claudeUsage(f: Readonly<Record<string, string>>): UsageReport | null {
  const windows: UsageReading[] = [];
  for (const name of CLAUDE_USAGE_WINDOWS) {
    const used = f[`${name}_used`];
    if (used === undefined) continue;
    windows.push({ name, usedPercent: Math.round(numberOf(used) * 10) / 10, resetsAt: epochMsOfSeconds(f[`${name}_resets`]) });
  }
  return windows.length > 0 ? { windows } : null;
}

/** What one Claude Code hook report means; `asking`: a question of Claude's is open (its later notices change nothing). */
export function readClaudeHook(f: Readonly<Record<string, string>>, asking = false): HookOutcome {
  const base = facts(f);
  const waiting = (asks: string | undefined): HookOutcome => ({
    ...base,
    events: [stateEvent('agent.end', { idle: true })],
    ...(asks ? { asks } : {}),
  });
  switch (f.hook_event_name) {
    case 'SessionStart':
      // After a compaction Claude goes on with its turn: only a new, resumed or cleared session is ready.
      return { ...base, events: f.source === 'compact' ? [] : [stateEvent('agent.ready')] };
    case 'UserPromptSubmit':
      return { ...base, events: [stateEvent('agent.start')], ...(f.prompt ? { userMessage: pastedAsTyped(f.prompt) } : {}) };
    case 'PreToolUse':
      return { ...base, events: [stateEvent('tool.start', { id: f.tool_use_id || UNNAMED_TOOL_CALL, tool: f.tool_name || 'tool' })] };
    case 'PostToolUse':
    case 'PostToolUseFailure':
      return { ...base, events: [stateEvent('tool.end', { id: f.tool_use_id || UNNAMED_TOOL_CALL })] };
    case 'PermissionRequest': {
      // The dialog is on screen now (the hook runs while it shows): the ask, with its choices.
      const asks = f.tool_name ? `permission to use ${f.tool_name}` : 'a permission';
      const ask = f.tool_name === QUESTION_TOOL ? claudeQuestion(f) : claudePermission(f);
      return ask ? { ...base, events: [], ask, asks } : waiting(f.tool_name === QUESTION_TOOL ? 'a question' : asks);
    }
    case 'Notification':
      // The permission notice comes seconds after the dialog it is about: the open ask says more.
      return isQuestion(f) && !asking ? waiting(f.message) : { ...base, events: [] };
    case 'Stop':
      return waiting(undefined);
    case 'StopFailure':
      // The turn ended on an API error: the stop is read with the transcript (reader.ts), not here.
      return { ...base, events: [] };
    case 'SessionEnd':
      return { ...base, events: [], gone: true };
    case STATUS_LINE_EVENT: {
      // Claude runs its statusLine after each answer, mid-turn too: the windows, never a state.
      const usage = claudeUsage(f);
      return { ...base, events: [], ...(usage !== null ? { usage } : {}) };
    }
    default:
      return base.conversation !== undefined || base.cwd !== undefined ? { ...base, events: [] } : NO_OUTCOME;
  }
}
