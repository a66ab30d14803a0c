/**
 * The usage book (src/agent/hub/usage-book.ts, docs/api.md "Usage"): what an agent reports of its
 * account's windows is checked before it is kept (a percent out of 0..100 clamped, one that is not
 * a number and a bad name left out with their window, a reset that is not a time left out), each
 * kind of fault logged once per agent kind; a window a report no longer gives keeps its last
 * reading; a window whose reset passed is no longer shown; each agent kind's figures are its newest
 * report's; and a report that changes nothing is no change.
 */
import { describe, expect, it } from 'vitest';
import { checkedWindows, USAGE_FAULTS, UsageBook, type UsageFault } from '../../src/agent/hub/usage-book.js';
import type { UsageReading } from '../../src/agent/contract/usage.js';
import type { LogFn, Logger } from '../../src/log.js';
import type { AgentUsage } from '../../src/protocol/usage.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const T0 = Date.UTC(2026, 2, 2, 9, 0);
const iso = (ms: number): string => new Date(ms).toISOString();

/** A book on a clock the test moves, with what it logged. */
function harness() {
  let clock = T0;
  const logged: { obj: Record<string, unknown>; msg: string }[] = [];
  const warn = ((obj: object | string, msg?: string) => {
    logged.push(typeof obj === 'string' ? { obj: {}, msg: obj } : { obj: obj as Record<string, unknown>, msg: msg ?? '' });
  }) as LogFn;
  const none = (() => undefined) as LogFn;
  const log: Logger = { debug: none, info: none, warn, error: none, child: () => log };
  const book = new UsageBook({ now: () => clock, log });
  const changes: { session: string; usage: AgentUsage }[] = [];
  book.onChange((session, usage) => changes.push({ session, usage }));
  return {
    book,
    logged,
    changes,
    faults: () => logged.map((l) => `${String(l.obj.agent)}:${String(l.obj.fault)}`),
    at: (ms: number) => {
      clock = ms;
    },
    apply: (session: string, agent: string, ...windows: UsageReading[]) => book.apply(session, agent, { windows }),
  };
}

const w = (name: string, usedPercent: number, resetsAt: number | null = null): UsageReading => ({ name, usedPercent, resetsAt });

describe('what an agent reports is checked before it is kept', () => {
  it('clamps a percent below 0 to 0 and above 100 to 100, and keeps one decimal', () => {
    const h = harness();
    const reset = T0 + HOUR;
    const usage = h.apply('s1', 'codex', w('one_day', -30, reset), w('seven_day', 750, reset), w('five_hour', 57.25, reset), w('x1', 0.04));
    expect(usage?.windows).toEqual([
      { name: 'five_hour', usedPercent: 57.3, resetsAt: iso(reset) },
      { name: 'one_day', usedPercent: 0, resetsAt: iso(reset) },
      { name: 'seven_day', usedPercent: 100, resetsAt: iso(reset) },
      { name: 'x1', usedPercent: 0 },
    ]);
    // The one at 100 binds.
    expect(usage?.binding).toBe('seven_day');
    expect(h.faults().sort()).toEqual(['codex:above', 'codex:below']);
  });

  it('leaves out a window whose percent is not a number (NaN, infinite) or whose name is not a short word', () => {
    const h = harness();
    const usage = h.apply(
      's1',
      'claude',
      w('five_hour', Number.NaN, T0 + HOUR),
      w('one_day', Number.POSITIVE_INFINITY),
      w('Five Hour', 10),
      w('', 10),
      w('a'.repeat(33), 10),
      w('seven_day', 40),
    );
    expect(usage?.windows).toEqual([{ name: 'seven_day', usedPercent: 40 }]);
    expect(usage?.binding).toBe('seven_day');
    expect(JSON.stringify(usage)).not.toMatch(/NaN|null|Infinity/);
    expect(h.faults().sort()).toEqual(['claude:name', 'claude:percent']);
    // A window name of 32 characters is a name.
    expect(checkedWindows({ windows: [w('a'.repeat(32), 1)] }, T0).windows).toHaveLength(1);
  });

  it('leaves out a reset that is not a time (not a number, before 2020, more than 400 days ahead), keeping the window', () => {
    const h = harness();
    const usage = h.apply(
      's1',
      'codex',
      w('a', 1, Number.NaN),
      w('b', 2, Date.UTC(2019, 11, 31)),
      w('c', 3, T0 + 401 * DAY),
      w('d', 4, Number.POSITIVE_INFINITY),
      w('e', 5, T0 + 400 * DAY),
      w('f', 6, Date.UTC(2020, 0, 1)),
    );
    expect(usage?.windows).toEqual([
      { name: 'a', usedPercent: 1 },
      { name: 'b', usedPercent: 2 },
      { name: 'c', usedPercent: 3 },
      { name: 'd', usedPercent: 4 },
      { name: 'e', usedPercent: 5, resetsAt: iso(T0 + 400 * DAY) },
      { name: 'f', usedPercent: 6, resetsAt: iso(Date.UTC(2020, 0, 1)) },
    ]);
    expect(h.faults()).toEqual(['codex:reset']);
  });

  it('logs each kind of fault once per agent kind, naming the session, the agent and the fault', () => {
    const h = harness();
    h.apply('s1', 'claude', w('five_hour', 150));
    h.apply('s1', 'claude', w('five_hour', 160));
    h.apply('s2', 'claude', w('five_hour', 170));
    h.apply('s3', 'codex', w('five_hour', 180));
    h.apply('s3', 'codex', w('five_hour', Number.NaN));
    h.apply('s3', 'codex', w('seven_day', Number.NaN));
    expect(h.faults()).toEqual(['claude:above', 'codex:above', 'codex:percent', 'codex:vanished']);
    expect(h.logged[0]).toEqual({
      obj: { session: 's1', agent: 'claude', fault: 'above' },
      msg: expect.stringContaining(USAGE_FAULTS.above) as string,
    });
    for (const fault of Object.keys(USAGE_FAULTS) as UsageFault[]) expect(USAGE_FAULTS[fault]).toMatch(/^a /);
  });
});

describe('what the book keeps', () => {
  it('a window a report no longer gives keeps its last reading (logged once)', () => {
    const h = harness();
    const five = T0 + 2 * HOUR;
    const week = T0 + 5 * DAY;
    h.apply('s1', 'claude', w('five_hour', 42, five), w('seven_day', 17, week));
    const usage = h.apply('s1', 'claude', w('five_hour', 43, five));
    expect(usage?.windows).toEqual([
      { name: 'five_hour', usedPercent: 43, resetsAt: iso(five) },
      { name: 'seven_day', usedPercent: 17, resetsAt: iso(week) },
    ]);
    expect(h.book.of('s1')?.windows).toEqual(usage?.windows);
    h.apply('s1', 'claude', w('five_hour', 44, five));
    expect(h.faults()).toEqual(['claude:vanished']);
    // A report of another agent kind on the session (an extension's) starts afresh: nothing carried over.
    expect(h.apply('s1', 'pi', w('five_hour', 10, five))?.windows).toEqual([{ name: 'five_hour', usedPercent: 10, resetsAt: iso(five) }]);
  });

  it('a window whose reset passed is left out of the session and the account, and the binding is of what is left', () => {
    const h = harness();
    const five = T0 + HOUR;
    const week = T0 + 5 * DAY;
    h.apply('s1', 'claude', w('five_hour', 90, five), w('seven_day', 40, week));
    expect(h.book.of('s1')?.binding).toBe('five_hour');
    h.at(five - 1);
    expect(h.book.of('s1')?.windows.map((x) => x.name)).toEqual(['five_hour', 'seven_day']);
    h.at(five);
    expect(h.book.of('s1')).toMatchObject({ windows: [{ name: 'seven_day', usedPercent: 40, resetsAt: iso(week) }], binding: 'seven_day' });
    expect(h.book.account()).toMatchObject([{ agent: 'claude', windows: [{ name: 'seven_day' }], binding: 'seven_day' }]);
    // A report after the reset that does not give the window: it is not carried over, and nothing vanished.
    expect(h.apply('s1', 'claude', w('seven_day', 41, week))?.windows).toEqual([
      { name: 'seven_day', usedPercent: 41, resetsAt: iso(week) },
    ]);
    expect(h.faults()).toEqual([]);
    // Every window past its reset: the agent has no figures on the account, the session none shown.
    h.at(week);
    expect(h.book.account()).toEqual([]);
    expect(h.book.of('s1')).toBeNull();
    // A window without a reset never passes.
    h.apply('s2', 'codex', w('five_hour', 5));
    h.at(week + 365 * DAY);
    expect(h.book.of('s2')?.windows).toEqual([{ name: 'five_hour', usedPercent: 5 }]);
  });

  it("each agent kind's figures are its newest report's, from any of its sessions; a deleted session's stay", () => {
    const h = harness();
    const five = T0 + 2 * HOUR;
    h.apply('s1', 'claude', w('five_hour', 40, five));
    h.at(T0 + MINUTE);
    h.apply('s2', 'claude', w('five_hour', 60, five));
    h.apply('s3', 'codex', w('five_hour', 10, five));
    expect(h.book.account().map((u) => `${u.agent}:${u.windows[0]?.usedPercent}:${u.observedAt}`)).toEqual([
      `claude:60:${iso(T0 + MINUTE)}`,
      `codex:10:${iso(T0 + MINUTE)}`,
    ]);
    h.at(T0 + 2 * MINUTE);
    h.apply('s1', 'claude', w('five_hour', 45, five));
    expect(h.book.account()[0]).toMatchObject({ agent: 'claude', windows: [{ usedPercent: 45 }], observedAt: iso(T0 + 2 * MINUTE) });
    // Each session keeps its own.
    expect(h.book.of('s2')?.windows[0]?.usedPercent).toBe(60);
    // A report of a new session whose every window is left out does not replace the account's figures.
    h.apply('s4', 'claude', w('five_hour', Number.NaN));
    expect(h.book.of('s4')).toBeNull();
    expect(h.book.account()[0]).toMatchObject({ agent: 'claude', windows: [{ usedPercent: 45 }] });
    h.book.forget('s1');
    expect(h.book.of('s1')).toBeNull();
    expect(h.book.account()[0]).toMatchObject({ agent: 'claude', windows: [{ usedPercent: 45 }] });
    expect(h.book.of('never')).toBeNull();
  });

  it('`apply` returns null, and tells no listener, when the report changes no window', () => {
    const h = harness();
    const five = T0 + 2 * HOUR;
    const first = h.apply('s1', 'claude', w('five_hour', 42, five), w('seven_day', 17));
    expect(first).not.toBeNull();
    expect(h.changes).toEqual([{ session: 's1', usage: first }]);
    h.at(T0 + MINUTE);
    // The same figures, later, in another order: nothing changed.
    expect(h.apply('s1', 'claude', w('seven_day', 17), w('five_hour', 42, five))).toBeNull();
    // A figure clamped to what is kept already is no change either.
    expect(h.apply('s1', 'claude', w('five_hour', 42.01, five), w('seven_day', 17))).toBeNull();
    expect(h.changes).toHaveLength(1);
    // The same figures on another session are that session's change.
    expect(h.apply('s2', 'claude', w('five_hour', 42, five), w('seven_day', 17))).not.toBeNull();
    // A new reset is a change.
    expect(h.apply('s1', 'claude', w('five_hour', 42, five + HOUR), w('seven_day', 17))?.windows[0]?.resetsAt).toBe(iso(five + HOUR));
    expect(h.changes.map((c) => c.session)).toEqual(['s1', 's2', 's1']);
  });

  it('the undo of `onChange` stops the calls', () => {
    const h = harness();
    const seen: string[] = [];
    const undo = h.book.onChange((session) => seen.push(session));
    h.apply('s1', 'claude', w('five_hour', 1));
    undo();
    h.apply('s1', 'claude', w('five_hour', 2));
    expect(seen).toEqual(['s1']);
    expect(h.changes).toHaveLength(2);
  });

  // The account once took a session's whole usage, windows it kept from before included: a bad
  // report of one session then put its older figure over another session's newer one.
  it("the account's windows are each the newest any session reported, never a session's older kept one", () => {
    const h = harness();
    const five = T0 + 2 * HOUR;
    h.apply('s2', 'claude', w('five_hour', 60, five));
    h.at(T0 + MINUTE);
    h.apply('s1', 'claude', w('five_hour', 75, five));
    h.at(T0 + 2 * MINUTE);
    h.apply('s2', 'claude', w('five_hour', Number.NaN, five));
    expect(h.book.of('s2')?.windows[0]?.usedPercent).toBe(60);
    expect(h.book.account()).toMatchObject([{ agent: 'claude', windows: [{ usedPercent: 75 }], observedAt: iso(T0 + MINUTE) }]);
  });
});
