/**
 * A prompt sent from a phone (docs/contract.md "Prompt", docs/api.md "Prompts"): text a person
 * wants submitted to the session's agent exactly once. One actor per prompt, fed by the prompt
 * service (src/service/prompts/prompts.service.ts), which keeps the queue in tmux, decides whose turn it
 * is, types the keys and listens to the agent.
 *
 * States: `queued` (waiting for its turn: the agent is in a turn, has an open ask, is starting,
 * or a prompt before it is not decided), `typing` (marked typing in tmux, then its keys: `keys`
 * while the text and Enter go, `confirming` while tether waits for the agent's own report of it,
 * `retrying` while the one more Enter goes, `waiting` for a report after that), and the outcomes
 * `submitted` (the agent reported a new turn with this text), `typed` (a program that reports
 * nothing, a plain shell), `failed` (the record says why) and `cancelled`.
 *
 * A prompt read back already decided needs no machine: it is a record (the queue keeps it).
 *
 * Invariants: pure (every time comes in on its event, as ISO 8601); `typing` is entered at most
 * once per prompt and only from `queued`, and one read back from tmux as `typing` (the daemon
 * stopped while its keys went) is failed, never typed again; at most one more Enter, and only
 * while the text still shows in the agent's input box; the agent's report is the only
 * confirmation (never the screen).
 */
import { assign, setup } from 'xstate';

/** Where a prompt is in its life. */
export const PROMPT_STATUSES = ['queued', 'typing', 'typed', 'submitted', 'failed', 'cancelled'] as const;
export type PromptStatus = (typeof PROMPT_STATUSES)[number];

/** Why a prompt failed (`reason` of a failed one). */
export const PROMPT_FAIL_REASONS = {
  unconfirmed: 'the agent did not report the prompt in time after Enter',
  untyped: 'the text could not be typed into the pane',
  exited: 'the agent exited',
  deleted: 'the session was deleted',
  interrupted: 'the daemon stopped while the prompt was being typed: it may or may not have reached the agent',
} as const;
export type PromptFailure = keyof typeof PROMPT_FAIL_REASONS;

/** A prompt, as the REST answers, the `prompt` frames and tmux carry it. */
export interface PromptRecord {
  /** The client's key for it (or one tether chose): the same id is the same prompt. */
  readonly id: string;
  readonly text: string;
  /** The device (token) name that sent it. */
  readonly by: string;
  readonly status: PromptStatus;
  /** When tether took it, ISO 8601. */
  readonly createdAt: string;
  /** Why it failed. */
  readonly reason?: string;
  /** When it was submitted, typed, failed or cancelled, ISO 8601. */
  readonly decidedAt?: string;
}

export interface PromptContext {
  /** The prompt; null in `none`. */
  record: PromptRecord | null;
}

export type PromptEvent =
  /** A client sent it (`record.status` is `queued`). */
  | { type: 'prompt.queue'; record: PromptRecord }
  /** The daemon started and read it back from tmux (or the session's record). */
  | { type: 'prompt.restore'; record: PromptRecord; at: string }
  | { type: 'prompt.cancel'; at: string }
  /** Its turn: the agent awaits input with no open ask, and every prompt before it is decided, its turn ended. */
  | { type: 'prompt.turn' }
  /** Its text and Enter went to the pane; `reports`: whether the session's program reports prompts. */
  | { type: 'prompt.typed'; reports: boolean; at: string }
  /** Its text or the extra Enter could not be typed. */
  | { type: 'prompt.untyped'; at: string }
  /** No report came in the first wait; `showsText`: the text still shows in the agent's input box. */
  | { type: 'prompt.unconfirmed'; showsText: boolean }
  /** The one more Enter went. */
  | { type: 'prompt.retried' }
  /** No report came in time: given up. */
  | { type: 'prompt.timeout'; at: string }
  /** The agent reported a new turn with this prompt's text. */
  | { type: 'agent.took'; at: string }
  /** The agent exited, or the session was deleted. */
  | { type: 'session.ended'; why: 'exited' | 'deleted'; at: string };

/** The record with its outcome. */
function decided(context: PromptContext, status: PromptStatus, at: string, reason?: PromptFailure): PromptRecord | null {
  if (context.record === null) return null;
  const { reason: _old, decidedAt: _when, ...rest } = context.record;
  return { ...rest, status, decidedAt: at, ...(reason !== undefined ? { reason: PROMPT_FAIL_REASONS[reason] } : {}) };
}

/** An action that gives the prompt an outcome at its event's time. */
const decide = (status: PromptStatus, reason?: PromptFailure) =>
  assign<PromptContext, PromptEvent, undefined, PromptEvent, never>({
    record: ({ context, event }) => ('at' in event ? decided(context, status, event.at, reason) : context.record),
  });

/** The record with a new status and nothing decided. */
const moved = (status: PromptStatus) =>
  assign<PromptContext, PromptEvent, undefined, PromptEvent, never>({
    record: ({ context }) => (context.record === null ? null : { ...context.record, status }),
  });

/** A transition to `target` doing `action`; `row` is the table's row it mirrors, or 'tether' for tether's own. */
const to = <const A extends string>(target: string, action: A, description: string, row: string) => ({
  target,
  actions: action,
  description,
  meta: { row },
});
/** A transition that only moves on. */
const go = (target: string, description: string, row: string) => ({ target, description, meta: { row } });

/** While typing, whatever the step: the agent's report submits it; the session's end fails it. */
const whileTyping = {
  'agent.took': to(
    '#prompt.submitted',
    'markSubmitted',
    'The agent reported a turn with its text',
    'typing --the agent reports it--> submitted',
  ),
  'session.ended': [
    {
      target: '#prompt.failed',
      guard: 'isDeleted',
      actions: 'failDeleted',
      description: 'The session was deleted while it was typed',
      meta: { row: 'typing --the session ends--> failed' },
    },
    to('#prompt.failed', 'failExited', 'The agent exited while it was typed', 'typing --the session ends--> failed'),
  ],
} as const;

export const promptMachine = setup({
  types: { context: {} as PromptContext, events: {} as PromptEvent },
  actions: {
    take: assign({
      record: ({ event }) => (event.type === 'prompt.queue' || event.type === 'prompt.restore' ? event.record : null),
    }),
    /** Its turn: marked typing (the service writes it to tmux before any key goes). */
    markTyping: moved('typing'),
    markSubmitted: decide('submitted'),
    markTyped: decide('typed'),
    markCancelled: decide('cancelled'),
    failUntyped: decide('failed', 'untyped'),
    failUnconfirmed: decide('failed', 'unconfirmed'),
    failExited: decide('failed', 'exited'),
    failDeleted: decide('failed', 'deleted'),
    failInterrupted: assign({
      record: ({ event }) =>
        event.type === 'prompt.restore' ? decided({ record: event.record }, 'failed', event.at, 'interrupted') : null,
    }),
  },
  guards: {
    /** The record read back has this status. */
    isRestored: ({ event }, params: { status: PromptStatus }) => event.type === 'prompt.restore' && event.record.status === params.status,
    /** The session's program reports the prompts it takes (an agent, not a plain shell). */
    isReported: ({ event }) => event.type === 'prompt.typed' && event.reports,
    /** The text still shows in the agent's input box: the Enter did not submit it. */
    showsText: ({ event }) => event.type === 'prompt.unconfirmed' && event.showsText,
    isDeleted: ({ event }) => event.type === 'session.ended' && event.why === 'deleted',
  },
}).createMachine({
  id: 'prompt',
  description: 'docs/contract.md "Prompt": queued -> typing -> submitted, or typed, failed, cancelled',
  context: { record: null },
  initial: 'none',
  states: {
    none: {
      description: 'Not yet taken',
      on: {
        'prompt.queue': to('queued', 'take', 'A client sent it', 'none --POST /sessions/:id/prompt--> queued'),
        'prompt.restore': [
          {
            target: 'queued',
            guard: { type: 'isRestored', params: { status: 'queued' } },
            actions: 'take',
            description: 'Read back queued at start',
            meta: { row: 'none --daemon start [it was queued]--> queued' },
          },
          {
            target: 'failed',
            guard: { type: 'isRestored', params: { status: 'typing' } },
            actions: 'failInterrupted',
            description: 'Read back typing: never typed twice',
            meta: { row: 'none --daemon start [it was being typed]--> failed' },
          },
        ],
      },
    },
    queued: {
      description: 'Waiting for its turn',
      on: {
        'prompt.cancel': to(
          'cancelled',
          'markCancelled',
          'DELETE /sessions/:id/prompts/:promptId',
          'queued --DELETE /sessions/:id/prompts/:promptId--> cancelled',
        ),
        'prompt.turn': to('typing', 'markTyping', 'Its turn: marked typing in tmux, then typed', 'queued --its turn--> typing'),
        'session.ended': [
          {
            target: 'failed',
            guard: 'isDeleted',
            actions: 'failDeleted',
            description: 'The session was deleted before its turn',
            meta: { row: 'queued --the session ends--> failed' },
          },
          to('failed', 'failExited', 'The agent exited before its turn', 'queued --the session ends--> failed'),
        ],
      },
    },
    typing: {
      description: "Marked typing in tmux: its keys, then the agent's report",
      initial: 'keys',
      on: whileTyping,
      states: {
        keys: {
          description: 'The text (a bracketed paste where the program asked for it, else keys), then Enter once it was drawn and quiet',
          on: {
            'prompt.typed': [
              {
                target: 'confirming',
                guard: 'isReported',
                description: 'Typed: the agent reports what it takes',
                meta: { row: 'tether' },
              },
              to(
                '#prompt.typed',
                'markTyped',
                'Typed into a program that reports nothing',
                'typing --typed [the program reports nothing]--> typed',
              ),
            ],
            'prompt.untyped': to(
              '#prompt.failed',
              'failUntyped',
              'tmux could not take the keys',
              'typing --the keys cannot be typed--> failed',
            ),
          },
        },
        confirming: {
          description: 'Enter pressed: waiting for the agent to report the prompt',
          on: {
            'prompt.unconfirmed': [
              {
                target: 'retrying',
                guard: 'showsText',
                description: 'No report, the text still in the input box: one more Enter',
                meta: { row: 'typing --no report [the text still in its input box]--> typing' },
              },
              go('waiting', 'No report, the box cleared: no second Enter', 'tether'),
            ],
          },
        },
        retrying: {
          description: 'The one more Enter going',
          on: {
            'prompt.retried': go('waiting', 'The second Enter went', 'tether'),
            'prompt.untyped': to(
              '#prompt.failed',
              'failUntyped',
              'tmux could not take the Enter',
              'typing --the keys cannot be typed--> failed',
            ),
          },
        },
        waiting: {
          description: 'Waiting for the report, with no more keys',
          on: {
            'prompt.timeout': to('#prompt.failed', 'failUnconfirmed', 'No report in time', 'typing --no report in time--> failed'),
          },
        },
      },
    },
    submitted: { description: 'The agent reported it: submitted once', type: 'final' },
    typed: { description: 'Typed into a program that reports nothing', type: 'final' },
    failed: { description: 'Not taken; the record says why', type: 'final' },
    cancelled: { description: 'Cancelled before its turn; nothing typed', type: 'final' },
  },
});
