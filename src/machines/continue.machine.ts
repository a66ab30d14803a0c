/**
 * A scheduled continue (docs/contract.md "Scheduled continue", docs/api.md "Continue"): the text
 * a person chose, once, to be typed into a session's pane when its agent's usage limit resets.
 * One actor per session, fed by the continue service (src/service/continue/continue.service.ts), which
 * keeps the schedule in tmux, arms the timer and types.
 *
 * States: `none` (nothing scheduled), `waiting` (armed), `typing` (due, and the agent still in
 * the stop it was scheduled for: the service marks it typed in tmux, then types), and the
 * outcomes `typed`, `skipped` (the schedule says why) and `cancelled`. A new schedule leaves any
 * outcome for `waiting`; one read back from tmux at the daemon's start lands where it was.
 *
 * Invariants: pure (every time comes in on its event, as ISO 8601); `typing` is entered at most
 * once per schedule and only from `waiting`, so a schedule is typed at most once; a person who
 * typed first (the agent started a turn) wins: the schedule is skipped, never typed.
 */
import { assign, setup } from 'xstate';

/** `waiting` until it comes due; then `typed`, or `skipped` (why: `reason`); `cancelled` by a DELETE. */
export const CONTINUE_STATUSES = ['waiting', 'typed', 'skipped', 'cancelled'] as const;
export type ContinueStatus = (typeof CONTINUE_STATUSES)[number];

/** Why a continue was not typed (`reason` of a skipped one). */
export const SKIP_REASONS = {
  turn: 'the agent started a turn before the continue was due',
  stop: 'the agent was no longer in the stop the continue was scheduled for',
  stale: 'it came due while the daemon was down, longer ago than tether types a continue late',
  failed: 'the text could not be typed into the pane',
} as const;

/** A session's scheduled continue, as the list, `GET /sessions/:id` and state frames carry it. */
export interface ContinueSchedule {
  /** Never reused: one per schedule. */
  readonly id: string;
  /** When it is (or was) due, ISO 8601. */
  readonly at: string;
  /** What it types, then Enter. */
  readonly text: string;
  /** The device (token) name that scheduled it. */
  readonly by: string;
  /** The stop it answers (docs/api.md "Stops"), or null when the agent had none. */
  readonly stopId: string | null;
  readonly status: ContinueStatus;
  /** Why it was skipped. */
  readonly reason?: string;
  /** When it was typed, skipped or cancelled, ISO 8601. */
  readonly decidedAt?: string;
}

export interface ContinueContext {
  /** The schedule, as the wire carries it; null in `none`. */
  schedule: ContinueSchedule | null;
  /** Read back from tmux at the daemon's start: the stop it answers cannot be told again. */
  restored: boolean;
}

export type ContinueEvent =
  /** A person scheduled a continue (`schedule.status` is `waiting`). */
  | { type: 'continue.schedule'; schedule: ContinueSchedule }
  /** The daemon started and read the session's schedule back from tmux. */
  | { type: 'continue.restore'; schedule: ContinueSchedule }
  | { type: 'continue.cancel'; at: string }
  /**
   * Its time came: `stopId` is the stop the agent is in now (or null), `busy` whether it is in
   * a turn, `late` whether it came due so long before the daemon started that it is not typed.
   */
  | { type: 'continue.due'; stopId: string | null; busy: boolean; late: boolean; at: string }
  /** The agent started a turn, or left the stop the schedule answers, before it came due. */
  | { type: 'agent.moved-on'; why: 'turn' | 'stop'; at: string }
  /** The service marked it typed in tmux and typed it. */
  | { type: 'continue.typed'; at: string }
  /** It could not be marked or typed. */
  | { type: 'continue.failed'; at: string };

type Reason = keyof typeof SKIP_REASONS;

/** The schedule with its outcome. */
function decided(context: ContinueContext, status: ContinueStatus, at: string, reason?: Reason): ContinueSchedule | null {
  if (context.schedule === null) return null;
  const { reason: _old, decidedAt: _when, ...rest } = context.schedule;
  return { ...rest, status, decidedAt: at, ...(reason !== undefined ? { reason: SKIP_REASONS[reason] } : {}) };
}

/** An action that gives the schedule an outcome at its event's time (`reason`: why it was skipped). */
const decide = (status: ContinueStatus, reason?: Reason) =>
  assign<ContinueContext, ContinueEvent, undefined, ContinueEvent, never>({
    schedule: ({ context, event }) => ('at' in event ? decided(context, status, event.at, reason) : context.schedule),
  });

/** A transition to `target` doing `action`; `row` is the table's row it mirrors, or 'tether' for tether's own. */
const to = <const A extends string>(target: string, action: A, description: string, row: string) => ({
  target,
  actions: action,
  description,
  meta: { row },
});

const restoredAs = (status: ContinueStatus) => ({
  guard: { type: 'isRestored' as const, params: { status } },
  actions: 'restore' as const,
});

export const continueMachine = setup({
  types: { context: {} as ContinueContext, events: {} as ContinueEvent },
  actions: {
    schedule: assign({
      schedule: ({ event }) => (event.type === 'continue.schedule' ? event.schedule : null),
      restored: false,
    }),
    restore: assign({
      schedule: ({ event }) => (event.type === 'continue.restore' ? event.schedule : null),
      restored: true,
    }),
    /** Due and typed next: marked typed before the keys go, so that it is never typed twice. */
    markTyping: decide('typed'),
    markTyped: decide('typed'),
    markCancelled: decide('cancelled'),
    skipMovedOn: assign({
      schedule: ({ context, event }) =>
        event.type === 'agent.moved-on' ? decided(context, 'skipped', event.at, event.why) : context.schedule,
    }),
    skipLate: decide('skipped', 'stale'),
    skipStop: assign({
      schedule: ({ context, event }) =>
        event.type === 'continue.due' ? decided(context, 'skipped', event.at, event.busy ? 'turn' : 'stop') : context.schedule,
    }),
    skipFailed: decide('skipped', 'failed'),
  },
  guards: {
    /** The schedule read back from tmux has this status. */
    isRestored: ({ event }, params: { status: ContinueStatus }) =>
      event.type === 'continue.restore' && event.schedule.status === params.status,
    /** Read back at the daemon's start, it came due longer ago than tether types a continue late. */
    isLate: ({ context, event }) => event.type === 'continue.due' && event.late && context.restored,
    /**
     * The agent is still stopped: not in a turn, and in the stop the schedule answers (one read
     * back from tmux cannot compare stops: the agent's stops do not outlive the daemon).
     */
    isStillStopped: ({ context, event }) =>
      event.type === 'continue.due' &&
      !event.busy &&
      (context.restored || context.schedule?.stopId === null || context.schedule?.stopId === event.stopId),
  },
}).createMachine({
  id: 'continueSchedule',
  description: 'docs/contract.md "Scheduled continue": none -> waiting -> typing -> typed, or skipped, or cancelled',
  context: { schedule: null, restored: false },
  initial: 'none',
  states: {
    none: {
      description: 'Nothing scheduled',
      on: {
        'continue.schedule': to(
          'waiting',
          'schedule',
          'POST /sessions/:id/continue: armed',
          'none --POST /sessions/:id/continue--> waiting',
        ),
        'continue.restore': [
          {
            target: 'waiting',
            ...restoredAs('waiting'),
            description: 'Re-armed at start',
            meta: { row: 'none --daemon start [it was waiting]--> waiting' },
          },
          { target: 'typed', ...restoredAs('typed'), description: 'Read back, typed before', meta: { row: 'tether' } },
          { target: 'skipped', ...restoredAs('skipped'), description: 'Read back, skipped before', meta: { row: 'tether' } },
          { target: 'cancelled', ...restoredAs('cancelled'), description: 'Read back, cancelled before', meta: { row: 'tether' } },
        ],
      },
    },
    waiting: {
      description: 'Armed: typed at `at` if the agent is still stopped then',
      on: {
        'continue.schedule': {
          target: 'waiting',
          reenter: true,
          actions: 'schedule',
          description: 'A new schedule replaces the waiting one',
          meta: { row: 'tether' },
        },
        'continue.cancel': to(
          'cancelled',
          'markCancelled',
          'DELETE /sessions/:id/continue',
          'waiting --DELETE /sessions/:id/continue--> cancelled',
        ),
        'agent.moved-on': {
          target: 'skipped',
          actions: 'skipMovedOn',
          description: 'A person typed first (the agent started a turn), or the agent left the stop',
          meta: { row: 'waiting --the agent starts a turn--> skipped' },
        },
        'continue.due': [
          {
            target: 'skipped',
            guard: 'isLate',
            actions: 'skipLate',
            description: 'It came due while the daemon was down, too long ago',
            meta: { row: 'waiting --its time comes [too long after, the daemon was down]--> skipped' },
          },
          {
            target: 'typing',
            guard: 'isStillStopped',
            actions: 'markTyping',
            description: 'Due, the agent still in its stop: marked typed, then typed',
            meta: { row: 'waiting --its time comes [the agent is still stopped]--> typing' },
          },
          {
            target: 'skipped',
            actions: 'skipStop',
            description: 'Due, but the agent is in a turn or another stop',
            meta: { row: 'waiting --its time comes [the agent moved on]--> skipped' },
          },
        ],
      },
    },
    typing: {
      description: 'Marked typed in tmux, the text and Enter going to the pane',
      on: {
        'continue.typed': to('typed', 'markTyped', 'The text and Enter were typed', 'typing --typed--> typed'),
        'continue.failed': to('skipped', 'skipFailed', 'tmux could not be written or typed into', 'tether'),
      },
    },
    typed: { description: 'Typed once', on: { 'continue.schedule': again() } },
    skipped: { description: 'Not typed; the schedule says why', on: { 'continue.schedule': again() } },
    cancelled: { description: 'Cancelled; nothing typed', on: { 'continue.schedule': again() } },
  },
});

/** An outcome stays until a new schedule. */
function again() {
  return to('#continueSchedule.waiting', 'schedule', 'A new schedule after an outcome', 'tether');
}
