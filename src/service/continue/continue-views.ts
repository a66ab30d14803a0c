/**
 * Where a session's continue shows (docs/api.md "Continue"): in the session list and
 * `GET /sessions/:id` (`continue`, null when none), and on the stream's state frames while it
 * waits, with its outcome once, on the frame sent when it is decided.
 *
 * Invariant: these views add the schedule to what they wrap and change nothing else.
 */
import type { ContinueSchedule } from '../../protocol/continue.js';
import type { AgentStateFact } from '../../protocol/frames.js';
import type { AgentStateSource } from '../../stream/stream-hub.js';

/** What the views read of the continue service. */
export interface ContinueView {
  of(id: string): ContinueSchedule | null;
  onChange(id: string, listener: (schedule: ContinueSchedule) => void): () => void;
}

/** A list or a single session, each item with its `continue`. */
export function withContinues<T extends { id: string }>(
  sessions: { list(): Promise<T[]>; get(id: string): Promise<T> },
  continues: Pick<ContinueView, 'of'>,
): { list(): Promise<(T & { continue: ContinueSchedule | null })[]>; get(id: string): Promise<T & { continue: ContinueSchedule | null }> } {
  const add = (item: T) => ({ ...item, continue: continues.of(item.id) });
  return {
    list: async () => (await sessions.list()).map(add),
    get: async (id) => add(await sessions.get(id)),
  };
}

/** The agent states of `states`, each with the session's continue while it waits; a decision is told once on its own frame. */
export function statesWithContinue(states: AgentStateSource, continues: ContinueView): AgentStateSource {
  const waiting = (id: string, fact: AgentStateFact): AgentStateFact => {
    const schedule = continues.of(id);
    return schedule?.status === 'waiting' ? { ...fact, continue: schedule } : fact;
  };
  return {
    current: (id) => {
      const fact = states.current(id);
      return fact && waiting(id, fact);
    },
    subscribe: (id, listener) => {
      const stopStates = states.subscribe(id, (fact) => listener(waiting(id, fact)));
      const stopContinue = continues.onChange(id, (schedule) => {
        const fact = states.current(id);
        if (fact) listener({ ...fact, continue: schedule });
      });
      return () => {
        stopStates();
        stopContinue();
      };
    },
  };
}
