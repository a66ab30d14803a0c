/**
 * Live Activity (docs/contract.md "Live Activity", with docs/push.md "Live Activity"): the one
 * combined card a device shows on its lock screen and in the Dynamic Island, what its agents do.
 * One machine per paired device; the driver (src/push/live-activity.service.ts) runs it, gives it
 * the device's tokens and the summary of every session, and carries out the pushes it asks for.
 *
 * States: `none` (no activity the daemon can reach), `starting` (a push-to-start went out; the
 * phone has not yet sent the new activity's update token), `running` (updates go to its update
 * token). Inside `running`, two regions: `content` holds a changed summary for the debounce
 * before it is pushed (`settled` / `debouncing`); `work` tells whether an agent works
 * (`working` / `quiet`), and a quiet while of `idleWhile` ends the activity.
 *
 * Invariants: the machine is pure (time is the named delays `debounce`, `idleWhile`,
 * `startWait`, provided by the driver); a start goes only when an agent starts working (the
 * count of working agents goes from 0 to more) and the device has a push-to-start token; the
 * newest token of each kind wins; a 410 for a token other than the one held changes nothing
 * (an old reply must not forget a newer token).
 */
import { assign, setup } from 'xstate';

/** What the machine needs of the summary: how many agents work, and what tells one content from another. */
export interface ActivityDigest {
  readonly working: number;
  /** Equal keys: the same content-state (nothing to push). */
  readonly key: string;
}

export type LiveActivityEvent =
  /** The phone sent its push-to-start token (PUT /device/live-activity). */
  | { type: 'token.start'; token: string }
  /** The phone sent the running activity's update token (PUT /device/live-activity). */
  | { type: 'token.update'; token: string }
  /** DELETE /device/live-activity: forget both tokens, end a running activity. */
  | { type: 'tokens.forget' }
  /** The summary of every session changed (an agent's state, an ask, a stop). */
  | { type: 'summary.changed'; digest: ActivityDigest }
  /** APNs answered 410 for `token`: that token is dead. */
  | { type: 'push.gone'; token: string };

export interface LiveActivityContext {
  readonly startToken: string | null;
  readonly updateToken: string | null;
  /** The newest summary. */
  readonly digest: ActivityDigest;
  /** The key of the content last pushed to the activity, or null when its content is unknown. */
  readonly sentKey: string | null;
}

export interface LiveActivityInput {
  /** The summary as it is when the machine starts (not a change: it starts nothing). */
  readonly digest: ActivityDigest;
}

const notProvided = (what: string) => () => {
  throw new Error(`liveActivityMachine: ${what} was not provided`);
};

const own = { row: 'tether' };

/** A 410 for the push-to-start token, in any state: the token is forgotten (and the activity goes to `target`, if named). */
function startTokenGone(target?: 'none') {
  return {
    guard: 'isStartToken' as const,
    ...(target !== undefined ? { target } : {}),
    actions: ['forgetStartToken', 'storeTokens'] as const,
    description: 'The push-to-start token is dead',
    meta: own,
  };
}

export const liveActivityMachine = setup({
  types: {
    context: {} as LiveActivityContext,
    events: {} as LiveActivityEvent,
    input: {} as LiveActivityInput,
  },
  guards: {
    /** An agent starts working (none worked before) and the phone can be started by push. */
    canStart: ({ context, event }) =>
      event.type === 'summary.changed' && context.startToken !== null && context.digest.working === 0 && event.digest.working > 0,
    isStartToken: ({ context, event }) => event.type === 'push.gone' && event.token === context.startToken,
    isUpdateToken: ({ context, event }) => event.type === 'push.gone' && event.token === context.updateToken,
    hasUnsentDigest: ({ context }) => context.digest.key !== context.sentKey,
    isQuiet: ({ context }) => context.digest.working === 0,
    isWorking: ({ context }) => context.digest.working > 0,
  },
  actions: {
    rememberStartToken: assign({ startToken: ({ context, event }) => (event.type === 'token.start' ? event.token : context.startToken) }),
    rememberUpdateToken: assign({
      updateToken: ({ context, event }) => (event.type === 'token.update' ? event.token : context.updateToken),
    }),
    rememberDigest: assign({ digest: ({ context, event }) => (event.type === 'summary.changed' ? event.digest : context.digest) }),
    /** The content just pushed is the newest summary. */
    markSent: assign({ sentKey: ({ context }) => context.digest.key }),
    /** An activity the phone started by itself: its content is unknown, so the next update goes. */
    forgetSent: assign({ sentKey: null }),
    forgetStartToken: assign({ startToken: null }),
    forgetUpdateToken: assign({ updateToken: null, sentKey: null }),
    forgetTokens: assign({ startToken: null, updateToken: null, sentKey: null }),
    /** Pushes `event: start` to the push-to-start token (with the summary, attributes and an alert). */
    sendStart: notProvided('sendStart'),
    /** Pushes `event: update` with the newest summary to the update token. */
    sendUpdate: notProvided('sendUpdate'),
    /** Pushes `event: end` to the update token: its card goes at once (`now`), or after a while. */
    sendEnd: (_: unknown, _params: { now: boolean }) => notProvided('sendEnd')(),
    /** Stores the tokens held now with the device (what a restart starts from). */
    storeTokens: notProvided('storeTokens'),
  },
  delays: {
    /** How long a changed summary waits for more changes before it is pushed. */
    debounce: 2000,
    /** How long no agent works before the activity ends. */
    idleWhile: 10 * 60_000,
    /** How long a started activity's update token may take to come. */
    startWait: 60_000,
  },
}).createMachine({
  id: 'liveActivity',
  description: 'docs/contract.md "Live Activity": the combined card of a device, driven by push',
  context: ({ input }) => ({ startToken: null, updateToken: null, digest: input.digest, sentKey: null }),
  initial: 'none',
  states: {
    none: {
      description: 'No activity the daemon can reach',
      on: {
        'summary.changed': [
          {
            guard: 'canStart',
            target: 'starting',
            actions: ['rememberDigest', 'sendStart', 'markSent'],
            description: 'An agent starts working and the phone has a push-to-start token: start by push',
            meta: { row: 'none --an agent starts working [the device has a push-to-start token]--> starting' },
          },
          { actions: 'rememberDigest', description: 'Nothing to start: kept for the next', meta: own },
        ],
        'token.start': { actions: ['rememberStartToken', 'storeTokens'], description: 'A push-to-start token', meta: own },
        'token.update': {
          target: 'running',
          actions: ['rememberUpdateToken', 'forgetSent', 'storeTokens'],
          description: 'The phone started an activity by itself',
          meta: own,
        },
        'tokens.forget': { actions: ['forgetTokens', 'storeTokens'], description: 'DELETE /device/live-activity', meta: own },
        'push.gone': startTokenGone(),
      },
    },
    starting: {
      description: 'A start went out; the phone has not sent the new activity’s update token yet',
      on: {
        'token.update': {
          target: 'running',
          actions: ['rememberUpdateToken', 'storeTokens'],
          description: 'The started activity’s update token replaces the start',
          meta: { row: 'starting --update token--> running' },
        },
        'token.start': { actions: ['rememberStartToken', 'storeTokens'], description: 'A newer push-to-start token', meta: own },
        'summary.changed': { actions: 'rememberDigest', description: 'Kept: pushed once the update token comes', meta: own },
        'tokens.forget': {
          target: 'none',
          actions: ['forgetTokens', 'storeTokens'],
          description: 'DELETE /device/live-activity',
          meta: own,
        },
        'push.gone': startTokenGone('none'),
      },
      after: {
        startWait: { target: 'none', description: 'No update token came: the start is given up (its stale date dims the card)', meta: own },
      },
    },
    running: {
      description: 'Updates go to the activity’s update token',
      type: 'parallel',
      on: {
        'token.update': { actions: ['rememberUpdateToken', 'storeTokens'], description: 'A newer update token', meta: own },
        'token.start': { actions: ['rememberStartToken', 'storeTokens'], description: 'A newer push-to-start token', meta: own },
        'summary.changed': { actions: 'rememberDigest', description: 'The summary changed', meta: own },
        'tokens.forget': {
          target: 'none',
          actions: [{ type: 'sendEnd', params: { now: true } }, 'forgetTokens', 'storeTokens'],
          description: 'DELETE /device/live-activity: the activity ends now',
          meta: own,
        },
        'push.gone': [
          {
            guard: 'isUpdateToken',
            target: 'none',
            actions: ['forgetUpdateToken', 'storeTokens'],
            description: 'The activity is gone (ended on the phone, or expired)',
            meta: { row: 'running --410 for the update token--> none' },
          },
          startTokenGone(),
        ],
      },
      states: {
        content: {
          initial: 'settled',
          states: {
            settled: {
              description: 'The activity shows the newest summary',
              always: { guard: 'hasUnsentDigest', target: 'debouncing', description: 'A summary not pushed yet', meta: own },
            },
            debouncing: {
              description: 'A changed summary waits for more changes',
              after: {
                debounce: {
                  target: 'settled',
                  actions: ['sendUpdate', 'markSent'],
                  description: 'The summary is pushed',
                  meta: { row: 'running --summary changed, debounced--> running' },
                },
              },
            },
          },
        },
        work: {
          initial: 'working',
          states: {
            working: {
              description: 'An agent works',
              always: { guard: 'isQuiet', target: 'quiet', description: 'No agent works any more', meta: own },
            },
            quiet: {
              description: 'No agent works',
              always: { guard: 'isWorking', target: 'working', description: 'An agent works again', meta: own },
              after: {
                idleWhile: {
                  target: '#liveActivity.none',
                  actions: [{ type: 'sendEnd', params: { now: false } }, 'forgetUpdateToken', 'storeTokens'],
                  description: 'No agent worked for the idle while: the activity ends',
                  meta: { row: 'running --no agent worked for the idle while--> none' },
                },
              },
            },
          },
        },
      },
    },
  },
});
