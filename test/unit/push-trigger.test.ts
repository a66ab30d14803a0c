import { describe, expect, it } from 'vitest';
import { ExitWitness, type SessionAttention } from '../../src/actors/attention.js';
import { parsePaneState } from '../../src/tmux/pane/pane-watch.js';
import type { AgentStateFact } from '../../src/protocol/frames.js';
import { PUSH_EVENTS, type PushEvent } from '../../src/config/schema.js';
import type { PushAlert, SessionLabel } from '../../src/push/push.service.js';
import { startPushTrigger } from '../../src/service/alerts/push-trigger.js';

/** The trigger with its inputs in a test's hands; `alerts` lists what it sent. */
function harness(events: readonly PushEvent[] = PUSH_EVENTS) {
  let report: ((id: string, fact: AgentStateFact) => void) | null = null;
  let ended: ((id: string) => void) | null = null;
  let attention: ((id: string, a: SessionAttention) => void) | null = null;
  const sent: { id: string; alert: PushAlert; label?: SessionLabel }[] = [];
  const stop = startPushTrigger({
    events,
    subscribeEvery: (l) => ((report = l), () => (report = null)),
    onSessionEnded: (l) => ((ended = l), () => (ended = null)),
    onAttention: (l) => ((attention = l), () => (attention = null)),
    send: (id, alert, label) => sent.push({ id, alert, ...(label ? { label } : {}) }),
  });
  return {
    sent,
    alerts: () => sent.map((s) => s.id),
    kinds: () => sent.map((s) => `${s.id}:${s.alert.kind}`),
    state: (id: string, value: AgentStateFact['value'], ask?: string) =>
      report?.(id, {
        value,
        ts: 0,
        ...(ask ? { ask: { id: ask, kind: 'permission', agent: 'claude', concern: 'x', choices: [], askedAt: '' } } : {}),
      }),
    end: (id: string) => ended?.(id),
    exited: (id: string, status: number | null, signal: number | null = null) => attention?.(id, { kind: 'agent-exited', status, signal }),
    unrestorable: (id: string, reason: string, description = '') =>
      attention?.(id, { kind: 'unrestorable', reason, name: id, description }),
    stop,
  };
}

describe('push trigger', () => {
  it('alerts once on entering awaiting-input, not again for the same state, again after leaving it', () => {
    const h = harness();
    h.state('a', 'thinking');
    h.state('a', 'awaiting-input');
    h.state('a', 'awaiting-input'); // the agent reconnected while it waits
    expect(h.alerts()).toEqual(['a']);
    h.state('a', 'thinking');
    h.state('a', 'awaiting-input');
    expect(h.alerts()).toEqual(['a', 'a']);
  });

  it('an ask alerts with the ask, entering awaiting-input or while in it; the same ask, or its answer, does not alert again', () => {
    const h = harness();
    h.state('a', 'tool');
    h.state('a', 'awaiting-input', 'k1'); // the agent asks: enters awaiting-input with the ask
    h.state('a', 'awaiting-input', 'k1'); // reported again
    h.state('a', 'awaiting-input'); // answered, the agent still waits (a refusal)
    expect(h.sent.map((x) => (x.alert.kind === 'awaiting-input' ? x.alert.ask?.id : null))).toEqual(['k1']);
    h.state('a', 'awaiting-input', 'k2'); // asked again: a new ask
    h.state('a', 'tool');
    h.state('a', 'awaiting-input'); // the turn's end after an allow: a new entry
    expect(h.sent.map((x) => (x.alert.kind === 'awaiting-input' ? (x.alert.ask?.id ?? 'wait') : null))).toEqual(['k1', 'k2', 'wait']);
  });

  it('keeps sessions apart, forgets an ended one, and sends nothing once stopped', () => {
    const h = harness();
    h.state('a', 'awaiting-input');
    h.state('b', 'awaiting-input');
    h.end('a');
    h.state('a', 'awaiting-input'); // a new session of the same name starts afresh
    expect(h.alerts()).toEqual(['a', 'b', 'a']);
    h.stop();
    h.state('c', 'awaiting-input');
    h.exited('c', 3);
    h.unrestorable('c', 'gone');
    expect(h.alerts()).toEqual(['a', 'b', 'a']);
  });

  it('an agent that exited non-zero or was killed alerts with what happened; a clean exit, or one of unknown outcome, does not', () => {
    const h = harness();
    h.exited('a', 0);
    h.exited('a', null);
    h.exited('a', 3);
    h.exited('b', null, 9);
    expect(h.sent).toEqual([
      { id: 'a', alert: { kind: 'agent-exited', status: 3, signal: null } },
      { id: 'b', alert: { kind: 'agent-exited', status: null, signal: 9 } },
    ]);
  });

  it('a session that could not be restored alerts with the reason, naming it from its record', () => {
    const h = harness();
    h.unrestorable('r3', 'its directory /w/r3 is gone', 'fix the parser');
    expect(h.sent).toEqual([
      {
        id: 'r3',
        alert: { kind: 'unrestorable', reason: 'its directory /w/r3 is gone' },
        label: { name: 'r3', description: 'fix the parser' },
      },
    ]);
  });

  it('sends only the kinds [push] events names', () => {
    const only = (events: PushEvent[]) => {
      const h = harness(events);
      h.state('a', 'awaiting-input');
      h.exited('a', 3);
      h.unrestorable('b', 'gone');
      return h.kinds();
    };
    expect(only(['awaiting-input', 'agent-exited', 'unrestorable'])).toEqual(['a:awaiting-input', 'a:agent-exited', 'b:unrestorable']);
    expect(only(['agent-exited'])).toEqual(['a:agent-exited']);
    expect(only(['awaiting-input', 'unrestorable'])).toEqual(['a:awaiting-input', 'b:unrestorable']);
    expect(only([])).toEqual([]);
  });
});

describe('exit witness: which pane deaths are told', () => {
  const dead = (pid: number, deadTime: number, status: number | null, signal: number | null = null) =>
    ({ dead: true, status, pid, signal, deadTime }) as const;

  it('tells a death once, once its outcome is known, and a respawned program dying again anew', () => {
    const w = new ExitWitness(1000);
    const rt = {};
    expect(w.observe(rt, dead(10, 1005, null))).toBeNull(); // tmux has no status yet
    expect(w.observe(rt, dead(10, 1005, 3))).toEqual({ kind: 'agent-exited', status: 3, signal: null });
    expect(w.observe(rt, dead(10, 1005, 3))).toBeNull(); // looked at again (a new link, the next tick)
    expect(w.observe(rt, dead(11, 1009, null, 9))).toEqual({ kind: 'agent-exited', status: null, signal: 9 });
    expect(w.observe({}, dead(10, 1005, 3))).not.toBeNull(); // another session (runtime) of the same name
  });

  it('does not tell a death from before the daemon started; without a death time, only a program it saw run', () => {
    const w = new ExitWitness(1000);
    expect(w.observe({}, dead(10, 999, 3))).toBeNull();
    const rt = {};
    expect(w.observe(rt, { dead: true, status: 3, pid: 10, signal: null, deadTime: null })).toBeNull();
    expect(w.observe(rt, { dead: false, status: null, pid: 12, signal: null, deadTime: null })).toBeNull();
    expect(w.observe(rt, { dead: true, status: 3, pid: 12, signal: null, deadTime: null })).not.toBeNull();
  });

  it('reads tmux 3.3a lines: an exit status, or a signal', () => {
    expect(parsePaneState('1:3:8340::1795619863\n')).toEqual({ dead: true, status: 3, pid: 8340, signal: null, deadTime: 1795619863 });
    expect(parsePaneState('1::8336:9:1795619863')).toEqual({ dead: true, status: null, pid: 8336, signal: 9, deadTime: 1795619863 });
    expect(parsePaneState('0::8400::')).toEqual({ dead: false, status: null, pid: 8400, signal: null, deadTime: null });
  });
});

describe('push trigger: stops (docs/push.md "Stops")', () => {
  const stopFact = (id: string, kind: 'done' | 'usage-limit' | 'error'): AgentStateFact => ({
    value: 'awaiting-input',
    ts: 0,
    stop: { id, kind, agent: 'claude', message: 'words', stoppedAt: '2026-11-28T13:00:00.000Z' },
  });
  function stopsHarness() {
    let report: ((id: string, fact: AgentStateFact) => void) | null = null;
    const sent: PushAlert[] = [];
    startPushTrigger({
      events: PUSH_EVENTS,
      subscribeEvery: (l) => ((report = l), () => (report = null)),
      onSessionEnded: () => () => undefined,
      onAttention: () => () => undefined,
      send: (_id, alert) => sent.push(alert),
    });
    return { sent, fact: (f: AgentStateFact) => report?.('a', f) };
  }

  it('a usage limit or an error alerts once with the stop, instead of "waiting"; a second report of it sends nothing', () => {
    const h = stopsHarness();
    h.fact({ value: 'thinking', ts: 0 });
    h.fact(stopFact('s1', 'usage-limit'));
    h.fact(stopFact('s1', 'usage-limit'));
    expect(h.sent.map((a) => (a.kind === 'stopped' ? `${a.kind}:${a.stop.id}` : a.kind))).toEqual(['stopped:s1']);
    h.fact({ value: 'thinking', ts: 0 });
    h.fact(stopFact('s2', 'error'));
    expect(h.sent.map((a) => (a.kind === 'stopped' ? `${a.kind}:${a.stop.id}` : a.kind))).toEqual(['stopped:s1', 'stopped:s2']);
  });

  it('a turn that ended (done) keeps the "waiting" alert, and no second one', () => {
    const h = stopsHarness();
    h.fact({ value: 'thinking', ts: 0 });
    h.fact(stopFact('d1', 'done'));
    expect(h.sent).toEqual([{ kind: 'awaiting-input' }]);
  });

  it('with awaiting-input not pushed, a stop is not pushed either', () => {
    let report: ((id: string, fact: AgentStateFact) => void) | null = null;
    const sent: PushAlert[] = [];
    startPushTrigger({
      events: ['agent-exited'],
      subscribeEvery: (l) => ((report = l), () => (report = null)),
      onSessionEnded: () => () => undefined,
      onAttention: () => () => undefined,
      send: (_id, alert) => sent.push(alert),
    });
    report!('a', stopFact('s1', 'usage-limit'));
    expect(sent).toEqual([]);
  });
});
