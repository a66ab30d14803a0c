/**
 * Codex's notify events as agent state (docs/agents.md "Codex"). Codex 0.169 notifies only at
 * the end of a turn (`agent-turn-complete`), so that is the one state it gives: awaiting-input.
 * It has no signal for a submitted prompt or a tool call (its `hooks.json` hooks run only after
 * a review screen), so a Codex session shows idle, then awaiting-input after each turn.
 *
 * Invariant: a turn of another thread than the session's (Codex names a new conversation with a
 * title-generation thread of its own, which notifies too) changes nothing once the session's
 * thread is known.
 */
import { NO_OUTCOME, stateEvent, type HookOutcome } from '../adapter.js';
import { isConversationId } from '../hook-wire.js';

export { CODEX_NOTIFY_FIELDS } from './notify-fields.js';

/**
 * What one Codex notify means. `knownThread` is the thread the session's Codex reported first
 * (null before any): a turn of another thread is the title generator's and is ignored.
 */
export function readCodexNotify(f: Readonly<Record<string, string>>, knownThread: string | null): HookOutcome {
  if (f.type !== 'agent-turn-complete') return NO_OUTCOME;
  const thread = f['thread-id'];
  if (thread !== undefined && knownThread !== null && thread !== knownThread) return NO_OUTCOME;
  const cwd = f.cwd;
  return {
    events: [stateEvent('agent.end', { idle: true })],
    ...(thread !== undefined && isConversationId(thread) ? { conversation: thread } : {}),
    ...(cwd !== undefined && cwd.startsWith('/') ? { cwd } : {}),
  };
}
