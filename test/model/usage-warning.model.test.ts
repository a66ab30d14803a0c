/**
 * Model-based test of the usage-warning machine (docs/contract.md "Usage warning"): paths planned
 * with xstate/graph to take every transition (test/helpers/transitions.ts), each run against the
 * REAL usage warnings (src/service/alerts/usage-warnings.ts) fed by a real usage book
 * (src/agent/hub/usage-book.ts) through its `onChange`, on a clock the test moves.
 *
 * A model event is one report of the agent's windows: the 5-hour window's percent, what it says
 * of the window's reset (the period's reset again, a reset five hours after it, none), and whether
 * the clock has passed the period's reset. The model logic turns it into the machine's
 * `usage.reported` from where the model is (its clock and the period's reset), so a path is a
 * story with the clock only ever moving on; each report also carries the weekly window, under
 * every threshold and a little higher each time (an agent reports both at every answer), and the
 * reports come from two sessions of the one agent in turn (the limits are the account's: one
 * machine per agent kind and window).
 *
 * After each step, what the person would get is what the table says, from where the machine was:
 * a warning exactly when the report reaches a threshold higher than any warned in the period, or
 * any threshold in a new period (the reset passed, or the window now resets well after it), with
 * the highest threshold reached, the reported percent and reset, and time-sensitive at 95 and over;
 * nothing otherwise, and never of the weekly window. "Where the machine was" is its state, the
 * highest threshold warned and the period's reset it keeps. The real machine is in the model's
 * state, and the session shows the figures reported. Besides the planned paths, every report that
 * can come in every state the model reaches (the shortest path there, then the report) is run the
 * same way.
 */
import { describe, expect, it } from 'vitest';
import { getShortestPaths } from 'xstate/graph';
import { initialTransition, transition, type ActorLogic, type InspectionEvent, type SnapshotFrom } from 'xstate';
import { UsageBook } from '../../src/agent/hub/usage-book.js';
import { silentLogger } from '../../src/log.js';
import { PERIOD_SLACK_MS, usageWarningMachine, type UsageWarningInput } from '../../src/machines/usage-warning.machine.js';
import { TIME_SENSITIVE_PERCENT, UsageWarnings, type UsageWarning } from '../../src/service/alerts/usage-warnings.js';
import { describeTransition, TransitionCoverage, transitionCoveringPaths, UNPLANNED } from '../helpers/transitions.js';

type MachineSnap = SnapshotFrom<typeof usageWarningMachine>;

const THRESHOLDS = [80, 95];
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
/** The test clock's start, and the weekly window's reset (beyond every path's end). */
const T0 = Date.UTC(2026, 2, 2, 9, 0);
const WEEK_RESET = T0 + 6 * 24 * HOUR;
/** The first reset said, after the report that says it; the next period's, after the period's. */
const FIRST_RESET_IN = 2 * HOUR;
const NEXT_PERIOD_IN = 5 * HOUR;
/** Under both thresholds; the first; under the next; the second. */
const PERCENTS = [50, 83, 86, 96];

/**
 * One report: the 5-hour window's percent; its reset (`same`: the period's, or a first one when
 * none is known; `later`: five hours after the period's; `none`: not said); `past`: the clock has
 * passed the period's reset (else it moves a minute on, still before it).
 */
interface ModelEvent {
  readonly type: 'model.report';
  readonly usedPercent: number;
  readonly reset: 'same' | 'later' | 'none';
  readonly past: boolean;
}

/** The machine and the clock the model keeps beside it. */
interface ModelSnap {
  readonly status: 'active';
  readonly output: undefined;
  readonly error: undefined;
  readonly machine: MachineSnap;
  readonly clock: number;
}

/** Where the clock is against the period's reset: none known, before it, passed. */
function phaseOf(s: { machine: MachineSnap; clock: number }): 'none' | 'ahead' | 'passed' {
  const period = s.machine.context.resetsAt;
  return period === null ? 'none' : s.clock >= period ? 'passed' : 'ahead';
}

/** The report a model event is, from where the model is: its time and the window's reset (epoch ms). */
function reportOf(s: { machine: MachineSnap; clock: number }, e: ModelEvent): { at: number; resetsAt: number | null } {
  const period = s.machine.context.resetsAt;
  const at = e.past ? Math.max(s.clock, period!) + MINUTE : s.clock + MINUTE;
  const resetsAt = e.reset === 'none' ? null : e.reset === 'same' ? (period ?? at + FIRST_RESET_IN) : period! + NEXT_PERIOD_IN;
  return { at, resetsAt };
}

const machineEvent = (s: ModelSnap, e: ModelEvent) => ({ type: 'usage.reported' as const, usedPercent: e.usedPercent, ...reportOf(s, e) });

/** The machine, stepped by model events (each one `usage.reported` at the model's clock). */
const modelLogic: ActorLogic<ModelSnap, ModelEvent, UsageWarningInput> = {
  transition: (s, e, scope) => {
    const ev = machineEvent(s, e);
    const machine = usageWarningMachine.transition(s.machine, ev, scope as never);
    return { ...s, machine, clock: ev.at };
  },
  getInitialSnapshot: (scope, input) => ({
    status: 'active',
    output: undefined,
    error: undefined,
    machine: usageWarningMachine.getInitialSnapshot(scope as never, input),
    clock: T0,
  }),
  getPersistedSnapshot: (s) => s,
};

/** The reports that can come from where the model is. */
function eventsOf(s: { machine: MachineSnap; clock: number }): ModelEvent[] {
  const phase = phaseOf(s);
  const kinds: { reset: ModelEvent['reset']; past: boolean }[] = [
    ...(phase !== 'passed'
      ? [
          { reset: 'same' as const, past: false },
          { reset: 'none' as const, past: false },
        ]
      : []),
    ...(phase === 'ahead' ? [{ reset: 'later' as const, past: false }] : []),
    ...(phase !== 'none'
      ? [
          { reset: 'later' as const, past: true },
          { reset: 'none' as const, past: true },
        ]
      : []),
  ];
  return PERCENTS.flatMap((usedPercent) => kinds.map((k) => ({ type: 'model.report' as const, usedPercent, ...k })));
}

/** What decides the machine's next step: its state, the highest threshold warned, where the clock is against the period's reset. */
const serializeState = (s: ModelSnap): string => JSON.stringify([s.machine.value, s.machine.context.warned, phaseOf(s)]);

const traversal = { events: eventsOf, serializeState, input: { thresholds: THRESHOLDS } };
const covering = transitionCoveringPaths<ModelSnap, ModelEvent, UsageWarningInput>(modelLogic as never, traversal, usageWarningMachine);
const coverage = new TransitionCoverage(usageWarningMachine);

const label = (e: ModelEvent): string =>
  `${e.usedPercent} %${e.past ? ' past the reset' : ''}${e.reset === 'later' ? ', resets 5 h later' : e.reset === 'none' ? ', no reset' : ''}`;

/** The highest threshold `percent` reaches, or 0. */
const reached = (percent: number): number => THRESHOLDS.filter((t) => percent >= t).at(-1) ?? 0;

/**
 * What docs/contract.md "Usage warning" says a report does, from where the machine is (its state,
 * the highest threshold warned, the period's reset): the state it goes to, and the threshold it
 * warns of, or null.
 */
function tableSays(
  from: { value: string; warned: number; resetsAt: number | null },
  report: { usedPercent: number; resetsAt: number | null; at: number },
): { to: 'armed' | 'warned'; warn: number | null } {
  const reach = reached(report.usedPercent);
  // armed --a report [at or above a threshold]--> warned; below every threshold, armed stays.
  if (from.value === 'armed') return reach > 0 ? { to: 'warned', warn: reach } : { to: 'armed', warn: null };
  const newPeriod =
    from.resetsAt !== null &&
    (report.at >= from.resetsAt || (report.resetsAt !== null && report.resetsAt > from.resetsAt + PERIOD_SLACK_MS));
  // warned --a report [a new period, at or above a threshold]--> warned; [a new period]--> armed.
  if (newPeriod) return reach > 0 ? { to: 'warned', warn: reach } : { to: 'armed', warn: null };
  // warned --a report [at or above a higher threshold]--> warned; [under the next threshold]: nothing.
  return { to: 'warned', warn: reach > from.warned ? reach : null };
}

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

/** The real usage warnings on a real usage book, on the test's clock; what they warned, and the 5-hour machine's snapshots. */
function realSystem() {
  let clock = T0;
  const book = new UsageBook({ now: () => clock, log: silentLogger });
  let fiveHour = null as MachineSnap | null;
  const watchFiveHour = (ev: InspectionEvent) => {
    coverage.inspect(ev);
    if (ev.type === '@xstate.snapshot') fiveHour = ev.snapshot as MachineSnap;
  };
  const service = new UsageWarnings({
    thresholds: THRESHOLDS,
    onUsage: (listener) => book.onChange(listener),
    now: () => clock,
    // Only the 5-hour window's machine counts towards the coverage: the weekly one stays under the thresholds.
    inspect: (_agent, window) => (window === 'five_hour' ? watchFiveHour : undefined),
  });
  const warnings: UsageWarning[] = [];
  service.onWarning((w) => warnings.push(w));
  return {
    book,
    service,
    warnings,
    setClock: (at: number) => {
      clock = at;
    },
    /** The 5-hour machine's snapshot since the last call (null when it took no event). */
    takeFiveHour: () => {
      const snap = fiveHour;
      fiveHour = null;
      return snap;
    },
  };
}

/** Runs model events one by one against the model and the real system, checking each step. */
function run(events: readonly ModelEvent[], states?: readonly ModelSnap[]): void {
  const real = realSystem();
  let model: { machine: MachineSnap; clock: number } = {
    machine: initialTransition(usageWarningMachine, { thresholds: THRESHOLDS })[0],
    clock: T0,
  };
  for (const [i, event] of events.entries()) {
    const report = reportOf(model, event);
    const from = model.machine;
    const says = tableSays(
      { value: String(from.value), warned: from.context.warned, resetsAt: from.context.resetsAt },
      { ...report, usedPercent: event.usedPercent },
    );
    model = usageWarningStep(model, event);
    const planned = states?.[i];
    if (planned) expect(model.machine.value, 'the model replayed as planned').toBe(planned.machine.value);

    // The agent reports, from one session or the other: the 5-hour window as the step says, the weekly one a little higher.
    const before = real.warnings.length;
    real.setClock(report.at);
    const weekly = 10 + i / 10;
    const shown = real.book.apply(`s${(i % 2) + 1}`, 'claude', {
      windows: [
        { name: 'five_hour', usedPercent: event.usedPercent, resetsAt: report.resetsAt },
        { name: 'seven_day', usedPercent: weekly, resetsAt: WEEK_RESET },
      ],
    });
    const step = `step ${i + 1} (${label(event)})`;
    expect(shown, `${step}: the report changed the session's windows`).not.toBeNull();

    // What the person gets: the table's warning, exactly.
    const threshold = says.warn;
    expect(real.warnings.slice(before), `${step}: the warnings`).toEqual(
      threshold === null
        ? []
        : [
            {
              agent: 'claude',
              window: 'five_hour',
              threshold,
              usedPercent: event.usedPercent,
              // The period's reset, as the machine holds it once warned (a report that says none leaves the period's).
              resetsAt: iso(model.machine.context.resetsAt),
              timeSensitive: event.usedPercent >= TIME_SENSITIVE_PERCENT,
            },
          ],
    );
    // The machine said the same as the table; the real one is where the model is.
    expect(model.machine.value, `${step}: the model against the table`).toBe(says.to);
    const machine = real.takeFiveHour();
    expect(machine?.value, `${step}: the real machine`).toBe(model.machine.value);
    expect(machine?.context.warned).toBe(model.machine.context.warned);
    expect(machine?.context.resetsAt).toBe(model.machine.context.resetsAt);
    // The session shows what was reported.
    expect(real.book.of(`s${(i % 2) + 1}`)?.windows).toEqual([
      { name: 'five_hour', usedPercent: event.usedPercent, ...(report.resetsAt !== null ? { resetsAt: iso(report.resetsAt) } : {}) },
      { name: 'seven_day', usedPercent: weekly, resetsAt: iso(WEEK_RESET) },
    ]);
  }
  expect(real.warnings.every((w) => w.window === 'five_hour')).toBe(true);
  real.service.stop();
}

describe('usage-warning machine, model-based, against the real usage warnings fed by a real usage book', () => {
  it('plans a path for every transition', () => {
    expect(covering.unplanned.map(describeTransition), UNPLANNED).toEqual([]);
  });

  for (const path of covering.paths) {
    const steps = path.steps.filter((s) => (s.event.type as string) !== 'xstate.init');
    it(`${steps.map((s) => label(s.event)).join(' -> ')} => ${String(path.state.machine.value)}`, () => {
      run(
        steps.map((s) => s.event),
        steps.map((s) => s.state),
      );
    });
  }

  it('every report from every state the model reaches does what the table says', () => {
    // The shortest path to each state, then each report that can come there: every row, from every
    // combination of the highest threshold warned and where the clock is against the period's reset.
    const toStates = getShortestPaths(modelLogic as never, traversal as never) as unknown as { steps: { event: ModelEvent }[] }[];
    let runs = 0;
    for (const path of toStates) {
      const events = path.steps.map((s) => s.event).filter((e) => (e.type as string) !== 'xstate.init');
      const there = events.reduce(usageWarningStep, {
        machine: initialTransition(usageWarningMachine, { thresholds: THRESHOLDS })[0],
        clock: T0,
      });
      for (const e of eventsOf(there)) {
        run([...events, e]);
        runs++;
      }
    }
    console.log(`usage-warning: ${toStates.length} model states, ${runs} reports checked against the table`);
    expect(toStates.length).toBeGreaterThanOrEqual(2 * 3);
  });

  it('the real usage warnings took every transition of the machine', () => {
    console.log(coverage.report());
    expect(coverage.uncovered().map(describeTransition), coverage.report()).toEqual([]);
  });
});

/** The model stepped outside the graph (xstate's pure transition: nothing to inspect). */
function usageWarningStep(s: { machine: MachineSnap; clock: number }, e: ModelEvent): { machine: MachineSnap; clock: number } {
  const ev = { type: 'usage.reported' as const, usedPercent: e.usedPercent, ...reportOf(s, e) };
  return { machine: transition(usageWarningMachine, s.machine, ev)[0], clock: ev.at };
}
