/**
 * What the Live Activity says and spends (docs/push.md "Live Activity"), as pure code: the most
 * urgent session and the counts of the content-state, the words cut, the payload within APNs'
 * 4 KB whatever the text, timestamps strictly increasing within one second, and the hourly cap
 * of priority-10 updates.
 */
import { describe, expect, it } from 'vitest';
import { ActivityBudget, MAX_URGENT_PER_HOUR } from '../../src/push/live-activity-budget.js';
import { contentStateOf, MAX_WORDS_CHARS, urgentIds } from '../../src/push/live-activity-content.js';
import { activityPayload } from '../../src/push/live-activity-payload.js';
import { summaryOf as s } from '../helpers/session-summary.js';

describe('the content-state', () => {
  it('counts working, waiting and stopped agents and puts the most urgent session on the card', () => {
    const sessions = [
      s('a', 'thinking', 1),
      s('b', 'tool', 2),
      s('c', 'awaiting-input', 3),
      s('d', 'awaiting-input', 4, { stop: { id: 'x', kind: 'usage-limit', message: 'limit', resetsAt: '2026-12-01T15:00:00.000Z' } }),
      s('e', 'idle', 5),
    ];
    expect(contentStateOf(sessions)).toEqual({
      working: 2,
      waiting: 1,
      stopped: 1,
      sessionId: 'd',
      name: 'd',
      agent: 'Claude',
      state: 'stopped',
      words: 'limit',
      needsYou: true,
      stop: 'usage-limit',
      resetsAt: Date.parse('2026-12-01T15:00:00.000Z') / 1000,
    });
    // An ask comes before a stop; among two asks the newest.
    const asking = [
      ...sessions,
      s('f', 'awaiting-input', 6, { ask: { id: 'k1', concern: 'rm -rf build' } }),
      s('g', 'awaiting-input', 7, { ask: { id: 'k2', concern: 'npm test' } }),
    ];
    expect(contentStateOf(asking)).toMatchObject({ sessionId: 'g', state: 'asking', words: 'npm test', needsYou: true, waiting: 3 });
    expect(urgentIds(asking)).toEqual(['stop:x', 'ask:k1', 'ask:k2']);
  });

  it("a turn's own end (`done`) is waiting, not a stop that needs the human", () => {
    const done = [s('a', 'awaiting-input', 1, { stop: { id: 'd1', kind: 'done', message: '' } })];
    expect(contentStateOf(done)).toMatchObject({ waiting: 1, stopped: 0, state: 'waiting', needsYou: false });
    expect(contentStateOf(done).stop).toBeUndefined();
    expect(urgentIds(done)).toEqual([]);
  });

  it('no sessions: an empty card', () => {
    expect(contentStateOf([])).toEqual({
      working: 0,
      waiting: 0,
      stopped: 0,
      sessionId: '',
      name: '',
      agent: '',
      state: 'none',
      words: '',
      needsYou: false,
    });
  });

  it('cuts the words, the name and the agent', () => {
    const long = [s('n'.repeat(100), 'awaiting-input', 1, { agent: 'A'.repeat(50), ask: { id: 'k', concern: 'w '.repeat(200) } })];
    const c = contentStateOf(long);
    expect([...c.words].length).toBe(MAX_WORDS_CHARS);
    expect(c.words.endsWith('…')).toBe(true);
    expect([...c.name].length).toBe(64);
    expect([...c.agent].length).toBe(32);
  });
});

describe('the payload', () => {
  it('stays within 4 KB for the worst text (every character escaped in JSON)', () => {
    const nasty = '\u0001'.repeat(5000);
    // The session's id is a session name (64 characters at most, none escaped); its name for the card may be anything.
    const sessions = [s('x'.repeat(64), 'awaiting-input', 1, { name: nasty, agent: nasty, ask: { id: 'k', concern: nasty } })];
    for (const push of [
      { event: 'start' as const, attributes: { daemonId: 'i'.repeat(40), daemonName: nasty.slice(0, 64) } },
      { event: 'update' as const, alert: true },
      { event: 'end' as const, now: false },
    ]) {
      const payload = activityPayload(push, sessions, 1_764_427_200);
      expect(payload.length).toBeLessThanOrEqual(4096);
      const aps = (JSON.parse(payload.toString('utf8')) as { aps: { event: string; timestamp: number } }).aps;
      expect(aps).toMatchObject({ event: push.event, timestamp: 1_764_427_200 });
    }
  });
});

describe('the budget', () => {
  it('gives strictly increasing timestamps, even many within one second', () => {
    let now = 1_764_427_200_500;
    const budget = new ActivityBudget(() => now);
    const stamps = Array.from({ length: 5 }, () => budget.timestamp());
    expect(stamps).toEqual([1_764_427_200, 1_764_427_201, 1_764_427_202, 1_764_427_203, 1_764_427_204]);
    now += 60_000;
    expect(budget.timestamp()).toBe(1_764_427_260);
  });

  it('allows 12 priority-10 updates in any hour, then again as the hour moves on', () => {
    let now = 0;
    const budget = new ActivityBudget(() => now);
    const taken = Array.from({ length: 100 }, () => {
      now += 1000;
      return budget.takeUrgent();
    });
    expect(taken.filter(Boolean).length).toBe(MAX_URGENT_PER_HOUR);
    expect(taken.slice(0, MAX_URGENT_PER_HOUR).every(Boolean)).toBe(true);
    now = 3600_000 + 1000;
    expect(budget.takeUrgent()).toBe(true);
    expect(budget.takeUrgent()).toBe(false);
  });
});
