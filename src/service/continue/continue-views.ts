/**
 * Where a session's continue shows on the stream (docs/api.md "Continue"): on its state frames
 * while it waits, with its outcome once, on the frame sent when it is decided. (The session list
 * and `GET /sessions/:id` add it in their routes: src/transport/routes/sessions.routes.ts.)
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
