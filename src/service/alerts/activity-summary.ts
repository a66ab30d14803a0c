/**
 * The summary the Live Activity shows (docs/push.md "Live Activity"): every session's agent state,
 * its ask and its stop, with the session's name and the agent's label, kept from the agent hub's
 * reports and handed whole to the driver at each change.
 *
 * Invariants: a report that changes nothing the card shows (the same state again) hands nothing
 * on; a session that ends leaves the summary; a session's name is read once (it is looked up
 * when its first report comes, and the summary waits for it).
 */
import type { AgentStateFact } from '../../protocol/frames.js';
import type { SessionSummary } from '../../push/live-activity-content.js';

/** An agent state report, with its ask and its stop. */
export type ActivityFact = AgentStateFact;

export interface ActivitySummaryDeps {
  readonly subscribeEvery: (listener: (sessionId: string, fact: ActivityFact) => void) => () => void;
  readonly onSessionEnded: (listener: (sessionId: string) => void) => () => void;
  /** The session's name and its agent's label, or null when it is gone. */
  readonly describe: (sessionId: string) => Promise<{ name: string; agentLabel: string } | null>;
  /** Gets the whole summary after each change. */
  readonly changed: (sessions: readonly SessionSummary[]) => void;
  readonly now: () => number;
}

/** The binding window of the agent's usage, as the card shows it; undefined without one. */
function bindingOf(fact: ActivityFact): SessionSummary['usage'] {
  const w = fact.usage?.windows.find((x) => x.name === fact.usage?.binding);
  return w === undefined
    ? undefined
    : { window: w.name, usedPercent: w.usedPercent, ...(w.resetsAt !== undefined ? { resetsAt: w.resetsAt } : {}) };
}

/** What tells one report from another on the card. */
const shownOf = (fact: ActivityFact): string => {
  const u = bindingOf(fact);
  const usage = u === undefined ? '' : `${u.window}:${u.usedPercent}:${u.resetsAt ?? ''}`;
  return `${fact.value}\u0000${fact.ask?.id ?? ''}\u0000${fact.stop?.id ?? ''}\u0000${fact.stop?.resetsAt ?? ''}\u0000${usage}`;
};

/** Starts keeping the summary; the returned function stops it. */
export function startActivitySummary(deps: ActivitySummaryDeps): () => void {
  const sessions = new Map<string, SessionSummary>();
  const shown = new Map<string, string>();
  const labels = new Map<string, { name: string; agentLabel: string }>();
  let stopped = false;
  const publish = () => {
    if (!stopped) deps.changed([...sessions.values()]);
  };
  const put = (id: string, fact: ActivityFact, label: { name: string; agentLabel: string }) => {
    const usage = bindingOf(fact);
    sessions.set(id, {
      sessionId: id,
      name: label.name,
      agent: label.agentLabel,
      state: fact.value,
      ...(fact.ask !== undefined ? { ask: { id: fact.ask.id, concern: fact.ask.concern } } : {}),
      ...(fact.stop !== undefined ? { stop: fact.stop } : {}),
      ...(usage !== undefined ? { usage } : {}),
      changedAt: deps.now(),
    });
    publish();
  };
  const stopStates = deps.subscribeEvery((id, fact) => {
    const key = shownOf(fact);
    if (shown.get(id) === key) return;
    shown.set(id, key);
    const label = labels.get(id);
    if (label) return put(id, fact, label);
    void deps
      .describe(id)
      .then((found) => {
        // Only the newest report is put, once its name is known.
        if (!found || stopped || shown.get(id) !== key) return;
        labels.set(id, found);
        put(id, fact, found);
      })
      .catch(() => undefined);
  });
  const stopEnded = deps.onSessionEnded((id) => {
    shown.delete(id);
    labels.delete(id);
    if (sessions.delete(id)) publish();
  });
  return () => {
    stopped = true;
    stopStates();
    stopEnded();
  };
}
