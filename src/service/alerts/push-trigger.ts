/**
 * When push fires (docs/push.md "When"), for the kinds `[push] events` names:
 *   - awaiting-input: the moment a session's agent enters awaiting-input, and each new ask it
 *     waits on (docs/push.md "Asks"), with the ask. Edge-triggered: the same state reported
 *     again (an agent reconnecting while it waits, an ask answered while the agent still waits)
 *     sends nothing; leaving and entering again, or a new ask, sends once more. A session that
 *     ends is forgotten, so a new session of the same name starts afresh.
 *     A stop whose kind is pushed as its own alert (a usage limit, an API error the agent gave
 *     up on: src/push/stop-meanings.ts, docs/push.md "Stops") is pushed instead, once per stop
 *     (its id: a second report of the same stop sends nothing); a turn that ended (`done`) keeps
 *     the "waiting" alert, an exit the agent-exited one.
 *     A usage limit whose reset passed with nothing scheduled and the agent still stopped
 *     (docs/push.md "Limit reset") is pushed once: the agent can go on.
 *   - prompt-failed: a prompt sent from a phone that the agent did not take (docs/api.md
 *     "Prompts"), once per prompt.
 * And, whatever `[push] events` says, a usage window crossing one of `[push] usage_thresholds`
 * (docs/push.md "Usage"): an empty list of thresholds is what turns those off.
 *   - agent-exited: an agent that exited with a non-zero status or was killed by a signal (the
 *     actors report each exit once); a clean exit (status 0: stop-meanings.ts's isCleanExit,
 *     which the card follows too) sends nothing.
 *   - unrestorable: a session that could not be restored (reported once per reason until the
 *     session runs again, however often its retry fails the same way).
 */
import type { SessionAttention } from '../../actors/attention.js';
import type { AgentStateFact } from '../../protocol/frames.js';
import type { PushEvent } from '../../config/schema.js';
import type { PushAlert, SessionLabel } from '../../push/push.service.js';
import { isCleanExit, STOP_MEANINGS } from '../../push/stop-meanings.js';
import type { PromptRecord } from '../../protocol/prompt.js';
import type { UsageWarning } from './usage-warnings.js';

export interface PushTriggerDeps {
  /** The kinds to push (`[push] events`). */
  readonly events: readonly PushEvent[];
  /** Every agent state report, of every session. */
  readonly subscribeEvery: (listener: (sessionId: string, fact: AgentStateFact) => void) => () => void;
  readonly onSessionEnded: (listener: (sessionId: string) => void) => () => void;
  /** Agent exits and failed restores, each once per occurrence. */
  readonly onAttention: (listener: (sessionId: string, attention: SessionAttention) => void) => () => void;
  /** Each usage limit whose reset passed with nothing scheduled, once (src/service/continue/limit-reset.ts). */
  readonly onLimitReset?: (listener: (sessionId: string, stopId: string) => void) => () => void;
  /** Each prompt from a phone that failed, once (src/service/prompts/prompts.service.ts). */
  readonly onPromptFailed?: (listener: (sessionId: string, prompt: PromptRecord) => void) => () => void;
  /** Each usage window that crossed a threshold, once per threshold and reset period (src/service/alerts/usage-warnings.ts). */
  readonly onUsageWarning?: (listener: (warning: UsageWarning) => void) => () => void;
  /** Sends a usage warning to the devices in the background. */
  readonly sendUsage?: (warning: UsageWarning) => void;
  /** Sends the alert to the devices in the background; `label` names a session tmux does not have. */
  readonly send: (sessionId: string, alert: PushAlert, label?: SessionLabel) => void;
}

/** The alert an attention is worth, or null (a clean exit). */
function alertFor(
  attention: SessionAttention,
): { alert: Extract<PushAlert, { kind: 'agent-exited' | 'unrestorable' }>; label?: SessionLabel } | null {
  if (attention.kind === 'unrestorable') {
    return {
      alert: { kind: 'unrestorable', reason: attention.reason },
      label: { name: attention.name, description: attention.description },
    };
  }
  if (isCleanExit(attention.status, attention.signal)) return null;
  return { alert: { kind: 'agent-exited', status: attention.status, signal: attention.signal } };
}

/** Starts watching; the returned function stops it. */
export function startPushTrigger(deps: PushTriggerDeps): () => void {
  const wanted = new Set<PushEvent>(deps.events);
  const last = new Map<string, { value: string; ask: string | null; stop: string | null }>();
  const stopStates = deps.subscribeEvery((id, fact) => {
    const before = last.get(id);
    const ask = fact.ask?.id ?? null;
    const stop = fact.stop !== undefined && STOP_MEANINGS[fact.stop.kind].pushed === 'stop' ? fact.stop : null;
    const pushedStop = stop?.id ?? before?.stop ?? null;
    last.set(id, { value: fact.value, ask: ask ?? (fact.value === before?.value ? before.ask : null), stop: pushedStop });
    if (fact.value !== 'awaiting-input' || !wanted.has('awaiting-input')) return;
    if (stop !== null) {
      if (stop.id !== before?.stop) deps.send(id, { kind: 'stopped', stop });
      return;
    }
    const entered = before?.value !== 'awaiting-input';
    const asked = ask !== null && ask !== before?.ask;
    if (entered || asked) deps.send(id, { kind: 'awaiting-input', ...(fact.ask ? { ask: fact.ask } : {}) });
  });
  const stopEnded = deps.onSessionEnded((id) => last.delete(id));
  const stopAttention = deps.onAttention((id, attention) => {
    const what = alertFor(attention);
    if (what === null || !wanted.has(what.alert.kind)) return;
    deps.send(id, what.alert, what.label);
  });
  const stopResets = deps.onLimitReset?.((id, stopId) => {
    if (wanted.has('awaiting-input')) deps.send(id, { kind: 'limit-reset', stopId });
  });
  const stopPrompts = deps.onPromptFailed?.((id, prompt) => {
    if (wanted.has('prompt-failed')) deps.send(id, { kind: 'prompt-failed', promptId: prompt.id, reason: prompt.reason ?? 'unknown' });
  });
  const stopUsage = deps.onUsageWarning?.((warning) => deps.sendUsage?.(warning));
  return () => {
    stopUsage?.();
    stopPrompts?.();
    stopResets?.();
    stopStates();
    stopEnded();
    stopAttention();
    last.clear();
  };
}
