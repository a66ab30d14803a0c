import { describe, expect, it } from 'vitest';
import type { AgentStateFact } from '../../src/agent/hub.js';
import { startPushTrigger } from '../../src/service/push-trigger.js';

/** The trigger with its three inputs in a test's hands; `alerts` lists what it sent. */
function harness() {
  let report: ((id: string, fact: AgentStateFact) => void) | null = null;
  let ended: ((id: string) => void) | null = null;
  const alerts: string[] = [];
  const stop = startPushTrigger({
    subscribeEvery: (l) => ((report = l), () => (report = null)),
    onSessionEnded: (l) => ((ended = l), () => (ended = null)),
    awaitingInput: (id) => alerts.push(id),
  });
  return {
    alerts,
    state: (id: string, value: AgentStateFact['value']) => report?.(id, { value, ts: 0 }),
    end: (id: string) => ended?.(id),
    stop,
  };
}

describe('push trigger', () => {
  it('alerts once on entering awaiting-input, not again for the same state, again after leaving it', () => {
    const h = harness();
    h.state('a', 'thinking');
    h.state('a', 'awaiting-input');
    h.state('a', 'awaiting-input'); // the agent reconnected while it waits
    expect(h.alerts).toEqual(['a']);
    h.state('a', 'thinking');
    h.state('a', 'awaiting-input');
    expect(h.alerts).toEqual(['a', 'a']);
  });

  it('keeps sessions apart, forgets an ended one, and sends nothing once stopped', () => {
    const h = harness();
    h.state('a', 'awaiting-input');
    h.state('b', 'awaiting-input');
    h.end('a');
    h.state('a', 'awaiting-input'); // a new session of the same name starts afresh
    expect(h.alerts).toEqual(['a', 'b', 'a']);
    h.stop();
    h.state('c', 'awaiting-input');
    expect(h.alerts).toEqual(['a', 'b', 'a']);
  });
});
