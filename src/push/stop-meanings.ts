/**
 * What each kind of stop means (docs/api.md "Stops", docs/push.md "Stops"): the one table that
 * the alerts, the Live Activity card and continue consult. Its type has a row for every kind of
 * STOP_KINDS, so a new kind fails to compile until its row says how it is pushed, whether it
 * needs the person, what its alert says and whether a continue can wait for it.
 *
 * Invariant: no other module tells the kinds apart by name but the agent-state machine (the
 * state each leaves the agent in: a machine imports nothing above it) and the agents' readers
 * (which kind a report is); test/unit/stop-meanings.test.ts holds src/ to it.
 */
import type { Stop, StopKind } from '../protocol/stop.js';

/** What of a stop its meaning reads: a usage limit's reset, an exit's status or signal. */
export type StopFacts = Pick<Stop, 'resetsAt' | 'exitCode' | 'signal'>;

/** What a kind of stop means. */
export interface StopMeaning {
  /**
   * How a stop of this kind reaches a phone by push (docs/push.md "When"): `stop` its own alert,
   * once per stop; `waiting` the "waiting for you" alert of an agent that waits; `agent-exited`
   * the alert of an exit that was not clean, told by tmux (not by the stop).
   */
  readonly pushed: 'stop' | 'waiting' | 'agent-exited';
  /** Whether it needs the person: the card ranks it as a stop, counts it `stopped` and lights the screen once. */
  readonly urgent: (stop: StopFacts) => boolean;
  /** Its alert's title, the card's too: the agent's label, then what happened. */
  readonly title: (agent: string, stop: StopFacts) => string;
  /** The APNs category of its own alert (the actions a client registered for it); null when it has none. */
  readonly category: string | null;
  /** Whether its own alert may break through a Focus (`interruption-level: time-sensitive`). */
  readonly timeSensitive: boolean;
  /** What the alert and the card say of it when the agent said nothing. */
  readonly fallbackWords: string;
  /** Whether a continue may wait for its reset (`at: "reset"`) and its reset passing is told (docs/push.md "Limit reset"). */
  readonly continueAble: boolean;
}

/** "3:45 PM" in the daemon's time zone (a payload's `resetsAt` lets a client say it in the phone's). */
export function resetClock(iso: string): string {
  return new Date(iso).toLocaleTimeString('en-US', { hour: 'numeric', minute: '2-digit' });
}

/**
 * An exit that is nobody's concern: status 0, or a status tmux did not tell, and no signal. The
 * agent finished (a person quit it), so neither a push nor the card calls anyone for it.
 */
export const isCleanExit = (status: number | null | undefined, signal: unknown): boolean =>
  (signal === null || signal === undefined) && (status === null || status === undefined || status === 0);

const never = (): boolean => false;
const always = (): boolean => true;

/** Every kind's meaning: the rooms read this and nothing else of a kind. */
export const STOP_MEANINGS: { readonly [K in StopKind]: StopMeaning } = {
  done: {
    pushed: 'waiting',
    urgent: never,
    title: (agent) => `${agent} is waiting for you`,
    category: null,
    timeSensitive: false,
    fallbackWords: '',
    continueAble: false,
  },
  'usage-limit': {
    pushed: 'stop',
    urgent: always,
    title: (agent, stop) =>
      `${agent} reached its usage limit${stop.resetsAt !== undefined ? ` · resets ${resetClock(stop.resetsAt)}` : ''}`,
    // Its one action, `continue-at-reset` ("Continue when it resets"), is the client's POST of a continue.
    category: 'TETHER_USAGE_LIMIT',
    // The agent sits idle until the limit resets and someone tells it to go on.
    timeSensitive: true,
    fallbackWords: 'usage limit reached',
    continueAble: true,
  },
  error: {
    pushed: 'stop',
    urgent: always,
    title: (agent) => `${agent} stopped on an error`,
    // No action: the notification opens the app on the session.
    category: 'TETHER_STOPPED_ERROR',
    timeSensitive: false,
    fallbackWords: 'the model API failed',
    continueAble: false,
  },
  exited: {
    pushed: 'agent-exited',
    urgent: (stop) => !isCleanExit(stop.exitCode, stop.signal),
    title: (agent, stop) =>
      stop.signal !== undefined
        ? `${agent} crashed: killed by ${stop.signal}`
        : stop.exitCode !== undefined
          ? `${agent} exited with status ${stop.exitCode}`
          : `${agent} exited`,
    category: null,
    timeSensitive: false,
    fallbackWords: 'the agent exited',
    continueAble: false,
  },
};
