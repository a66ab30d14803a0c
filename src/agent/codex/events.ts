/**
 * Codex's notify events as agent state (docs/agents.md "Codex"). Codex 0.169 notifies only at
 * the end of a turn (`agent-turn-complete`), so that is the one state it gives: awaiting-input.
 * It has no signal for a submitted prompt or a tool call (its `hooks.json` hooks run only after
 * a review screen), so a Codex session shows idle, then awaiting-input after each turn.
 *
 * Invariant: a turn of another thread than the session's (Codex names a new conversation with a
 * title-generation thread of its own, which notifies too, and may finish first) changes nothing:
 * the notify program says whether the thread was saved (`saved`), and an unsaved one is ignored;
 * without that field, a thread other than the first one known is ignored.
 */
import { NO_OUTCOME, stateEvent, type HookOutcome } from '../contract/adapter.js';
import { isConversationId } from '../wire/hook-wire.js';

/**
 * What one Codex notify means. A thread reported as not saved (`saved: "false"`) is the title
 * generator's and is ignored; so is, without that field, a thread other than `knownThread` (the
 * one the session's Codex reported first, null before any).
 */
export function readCodexNotify(f: Readonly<Record<string, string>>, knownThread: string | null): HookOutcome {
  if (f.type !== 'agent-turn-complete') return NO_OUTCOME;
  const thread = f['thread-id'];
  // A thread Codex did not save is its title generator's (the notify program looked).
  if (f.saved === 'false') return NO_OUTCOME;
  if (thread !== undefined && knownThread !== null && thread !== knownThread) return NO_OUTCOME;
  const cwd = f.cwd;
  return {
    events: [stateEvent('agent.end', { idle: true })],
    ...(thread !== undefined && isConversationId(thread) ? { conversation: thread } : {}),
    ...(cwd !== undefined ? { cwd } : {}),
  };
}
