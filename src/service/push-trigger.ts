/**
 * When push fires (docs/push.md): the moment a session's agent enters awaiting-input. It is
 * edge-triggered: the same state reported again (an agent reconnecting while it waits) sends
 * nothing; leaving and entering again sends once more. A session that ends is forgotten, so a
 * new session of the same name starts afresh.
 */
import type { AgentStateFact } from '../agent/hub.js';

export interface PushTriggerDeps {
  /** Every agent state report, of every session. */
  readonly subscribeEvery: (listener: (sessionId: string, fact: AgentStateFact) => void) => () => void;
  readonly onSessionEnded: (listener: (sessionId: string) => void) => () => void;
  /** Sends the alert to the devices in the background. */
  readonly awaitingInput: (sessionId: string) => void;
}

/** Starts watching; the returned function stops it. */
export function startPushTrigger(deps: PushTriggerDeps): () => void {
  const last = new Map<string, string>();
  const stopStates = deps.subscribeEvery((id, fact) => {
    const before = last.get(id);
    last.set(id, fact.value);
    if (fact.value === 'awaiting-input' && before !== 'awaiting-input') deps.awaitingInput(id);
  });
  const stopEnded = deps.onSessionEnded((id) => last.delete(id));
  return () => {
    stopStates();
    stopEnded();
    last.clear();
  };
}
