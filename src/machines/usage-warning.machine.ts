/**
 * The warning when an agent's usage window crosses a threshold (docs/contract.md "Usage warning",
 * docs/push.md "Usage"): one actor per agent kind and window (the limits are the account's), fed
 * every report of that window by the usage warnings (src/service/alerts/usage-warnings.ts), which push
 * what it emits.
 *
 * States: `armed` (no threshold crossed in this reset period) and `warned` (the highest threshold
 * crossed so far in this period is `warned`). A report at or above a threshold higher than any
 * warned in the period emits `usage.warned` for the highest one it reaches; a report below (86 %
 * after the 80 % warning, under 95) emits nothing. A new period (the reset passed, or the window
 * resets later than the period's reset by more than PERIOD_SLACK_MS: a new window) arms every
 * threshold again.
 *
 * Invariants: pure (times come in on events, epoch ms); at most one warning per threshold per
 * window per reset period; thresholds are the input's, ascending.
 */
import { assign, emit, setup } from 'xstate';

/** How much later a reported reset may be than the period's before it counts as a new period (a report's rounding, a clock). */
export const PERIOD_SLACK_MS = 10 * 60 * 1000;

export interface UsageWarningInput {
  /** The thresholds, in percent, ascending (`[push] usage_thresholds`). */
  readonly thresholds: readonly number[];
}

export interface UsageWarningContext {
  readonly thresholds: readonly number[];
  /** The reset of the period the warnings so far belong to, epoch ms, or null when none was said. */
  resetsAt: number | null;
  /** The highest threshold warned in this period; 0 when none. */
  warned: number;
}

export type UsageWarningEvent =
  /** The window's figure in a report (`resetsAt` and `at`, when it came: epoch ms). */
  { type: 'usage.reported'; usedPercent: number; resetsAt: number | null; at: number };

/** What the machine tells: a threshold crossed. */
export interface UsageWarned {
  readonly type: 'usage.warned';
  readonly threshold: number;
  readonly usedPercent: number;
  /** The window's reset, epoch ms, or null. */
  readonly resetsAt: number | null;
}

/** The highest threshold `percent` reaches, or 0. */
const reached = (thresholds: readonly number[], percent: number) => thresholds.filter((t) => percent >= t).at(-1) ?? 0;

/** Whether the report is of a new reset period: the period's reset passed, or the window now resets well after it. */
function isNewPeriod(context: UsageWarningContext, event: UsageWarningEvent): boolean {
  const period = context.resetsAt;
  if (period === null) return false;
  return event.at >= period || (event.resetsAt !== null && event.resetsAt > period + PERIOD_SLACK_MS);
}

export const usageWarningMachine = setup({
  types: {
    context: {} as UsageWarningContext,
    events: {} as UsageWarningEvent,
    input: {} as UsageWarningInput,
    emitted: {} as UsageWarned,
  },
  actions: {
    /** A threshold higher than any warned in the period: warned, and told. */
    warn: assign({
      warned: ({ context, event }) => reached(context.thresholds, event.usedPercent),
      // A report that says no reset leaves the period's.
      resetsAt: ({ context, event }) => event.resetsAt ?? context.resetsAt,
    }),
    tell: emit(({ context, event }) => ({
      type: 'usage.warned' as const,
      threshold: context.warned,
      usedPercent: event.usedPercent,
      resetsAt: context.resetsAt,
    })),
    /** A new period: nothing warned in it yet. */
    rearm: assign({ warned: 0, resetsAt: ({ event }) => event.resetsAt }),
    /** The period's reset, as the window reports it: never moved back (an older report of a session that lags). */
    follow: assign({
      resetsAt: ({ context, event }) =>
        event.resetsAt === null || (context.resetsAt !== null && event.resetsAt < context.resetsAt) ? context.resetsAt : event.resetsAt,
    }),
  },
  guards: {
    /** The report reaches a threshold higher than any warned in this period. */
    isHigher: ({ context, event }) => reached(context.thresholds, event.usedPercent) > context.warned,
    isNewPeriod: ({ context, event }) => isNewPeriod(context, event),
    /** A new period, and the report already reaches a threshold in it. */
    isNewPeriodReached: ({ context, event }) => isNewPeriod(context, event) && reached(context.thresholds, event.usedPercent) > 0,
  },
}).createMachine({
  id: 'usageWarning',
  description: 'docs/contract.md "Usage warning": armed -> warned at each threshold crossed, armed again at the reset',
  context: ({ input }) => ({ thresholds: [...input.thresholds].sort((a, b) => a - b), resetsAt: null, warned: 0 }),
  initial: 'armed',
  states: {
    armed: {
      description: 'No threshold crossed in this reset period',
      on: {
        'usage.reported': [
          {
            target: 'warned',
            guard: 'isHigher',
            actions: ['warn', 'tell'],
            description: 'A threshold reached: one warning',
            meta: { row: 'armed --a report [at or above a threshold]--> warned' },
          },
          { target: 'armed', actions: 'follow', description: 'Below every threshold', meta: { row: 'tether' } },
        ],
      },
    },
    warned: {
      description: 'The highest threshold crossed in this period was warned',
      on: {
        'usage.reported': [
          {
            target: 'warned',
            reenter: true,
            guard: 'isNewPeriodReached',
            actions: ['rearm', 'warn', 'tell'],
            description: 'A new period, a threshold reached in it at once: one warning',
            meta: { row: 'warned --a report [a new period, at or above a threshold]--> warned' },
          },
          {
            target: 'armed',
            guard: 'isNewPeriod',
            actions: 'rearm',
            description: 'The reset passed: every threshold armed again',
            meta: { row: 'warned --a report [a new period]--> armed' },
          },
          {
            target: 'warned',
            guard: 'isHigher',
            actions: ['warn', 'tell'],
            description: 'A higher threshold reached: one more warning',
            meta: { row: 'warned --a report [at or above a higher threshold]--> warned' },
          },
          {
            target: 'warned',
            actions: 'follow',
            description: 'Under the next threshold: nothing',
            meta: { row: 'warned --a report [under the next threshold]--> warned' },
          },
        ],
      },
    },
  },
});
