/**
 * What the stop tests of the real agents check (docs/api.md "Stops"): a stop in the list and on
 * the stream within 2 s of the agent showing it, and pushed once. Built on the real-agent
 * fixture (agent-fixture.ts); the waits look every 50 ms, so 2 s is measured to within them.
 */
import { beforeAll, expect } from 'vitest';
import type { ApnsStandIns } from '../../testkit/apns-server.js';
import type { AgentHomeLike, Closable, RealAgent } from './agent-fixture.js';
import { TURN_MS } from './agent-fixture.js';
import { stateFrames } from './stream.js';
import { eventually } from './tmux.js';
import type { StateFrame, Stop } from '../../src/protocol/frames.js';

export const POLL_MS = 50;
/** The bound of the issue: the stop is on the stream and in the list within 2 s of the agent showing it. */
export const STOP_SEEN_MS = 2000;

/** How the fake answers the agent's next turn. */
export type Mode = 'ok' | 'usage-limit' | 'error';

/** The model API failing on the server's side (a 500). */
export const API_ERROR_500 = {
  status: 500,
  errorBody: { type: 'error', error: { type: 'api_error', message: 'Internal server error' } },
} as const;

/** A usage limit's reset three hours ahead (epoch seconds, on the minute). */
export const resetInThreeHours = (): number => Math.ceil(Date.now() / 60_000) * 60 + 3 * 3600;

/** A reset as the push names it (`3:00 PM`). */
export const resetClock = (reset: number): string =>
  new Date(reset * 1000).toLocaleTimeString('en-US', { hour: 'numeric', minute: '2-digit' });

export interface StopPush {
  aps: Record<string, unknown>;
  stopId?: string;
  resetsAt?: string;
}

/**
 * Waits for a push for `stopId` (any push, when null) after the first `before` of the sandbox's,
 * then checks it is the only one since `before`: no "waiting" alert beside it. Resolves with it.
 */
export async function pushedOnce(apns: ApnsStandIns, before: number, stopId: string | null): Promise<StopPush> {
  const since = () => apns.sandbox.requests.slice(before).map((q) => q.payload as StopPush);
  await eventually(() => since().some((p) => stopId === null || p.stopId === stopId), 30_000, POLL_MS, 'the push');
  expect(since(), JSON.stringify(since())).toHaveLength(1);
  return since()[0]!;
}

export interface StopWatch {
  /** The session's stop in the list. */
  listedStop(): Promise<Stop | null>;
  /** Types a prompt; resolves when the screen shows `words` (the agent showing its stop), with when it did. */
  prompt(text: string, words: string[]): Promise<number>;
  /** The stop in the list (and on the stream, when `framed`) within STOP_SEEN_MS of `shownAt`. */
  stopSeen(kind: Stop['kind'], shownAt: number, framed?: boolean): Promise<Stop>;
  /** The push of `stop` (any push when null), the only one since `before`. */
  pushedOnce(before: number, stopId: string | null): Promise<StopPush>;
  /**
   * Types `text`, which the agent ends on an error showing `shown`: the error stop (no reset) seen
   * in time, pushed once with `words` in its body. Resolves with the stop.
   */
  erred(text: string, shown: string[], words: string): Promise<Stop>;
  /**
   * Types `text`, which the agent ends on a usage limit showing `shown`: the stop with its reset
   * (`reset`) seen in time, on an awaiting-input frame, pushed once, time-sensitive. Resolves with the stop.
   */
  limited(text: string, shown: string[], reset: number): Promise<Stop>;
  /** The agent killed by SIGKILL: the exited stop in the list naming it, and its one push saying it crashed. */
  killed(): Promise<void>;
}

/** Who stops: the agent's kind and the name the pushes give it. */
export interface StoppingAgent {
  readonly kind: string;
  readonly name: string;
}

/** The stop checks of `session` running `who`, watched by the fixture's stream client. */
export function watchStops<F extends Closable, H extends AgentHomeLike>(
  a: RealAgent<F, H>,
  session: string,
  who: StoppingAgent,
): StopWatch {
  /** When each stop first came on a state frame (by stop id). */
  const stopSeenAt = new Map<string, number>();
  beforeAll(() => {
    a.m.stream.on('state', (f: StateFrame) => {
      if (f.stop && !stopSeenAt.has(f.stop.id)) stopSeenAt.set(f.stop.id, Date.now());
    });
  });
  /** The stop the list held before the current step: the step waits for another one. */
  let previous: string | null = null;
  const w: StopWatch = {
    listedStop: async () =>
      ((await (await a.fx.d.get('/sessions')).json()) as { id: string; stop: Stop | null }[]).find((s) => s.id === session)?.stop ?? null,
    prompt: async (text, words) => {
      previous = (await w.listedStop())?.id ?? null;
      await a.type(text);
      await a.explained(a.shows(words, TURN_MS, `the agent showing ${words.join(', ')}`));
      return Date.now();
    },
    stopSeen: async (kind, shownAt, framed = true) => {
      const stop = await a.explained(
        eventually(
          async () => {
            const s = await w.listedStop();
            if (s?.kind !== kind || s.id === previous) throw new Error(`the list's stop is ${JSON.stringify(s)}`);
            return s;
          },
          STOP_SEEN_MS + 10_000,
          POLL_MS,
          `a ${kind} stop in the list`,
        ),
      );
      const listedAt = Date.now();
      expect(listedAt - shownAt, 'in the list within 2 s of the agent showing it').toBeLessThan(STOP_SEEN_MS + POLL_MS * 2);
      if (framed) {
        // The frame crosses the WebSocket; the list was asked directly: it may come a moment later.
        const at = await a.explained(
          eventually(() => stopSeenAt.get(stop.id), STOP_SEEN_MS + 10_000, POLL_MS, 'a state frame carrying the stop'),
        );
        expect(at! - shownAt, 'on the stream within 2 s of the agent showing it').toBeLessThan(STOP_SEEN_MS);
      }
      expect((await (await a.fx.d.get(`/sessions/${session}`)).json()) as { stop: Stop | null }).toMatchObject({ stop });
      return stop;
    },
    pushedOnce: (before, stopId) => a.explained(pushedOnce(a.apns, before, stopId)),
    erred: async (text, shown, words) => {
      const before = a.apns.sandbox.requests.length;
      const stop = await w.stopSeen('error', await w.prompt(text, shown));
      expect(stop.agent).toBe(who.kind);
      expect(stop.resetsAt).toBeUndefined();
      expectErrorPush(await w.pushedOnce(before, stop.id), who.name, session, words);
      return stop;
    },
    limited: async (text, shown, reset) => {
      const before = a.apns.sandbox.requests.length;
      const stop = await w.stopSeen('usage-limit', await w.prompt(text, shown));
      expect(stop).toMatchObject({ agent: who.kind, limit: 'five_hour', resetsAt: new Date(reset * 1000).toISOString() });
      expect(stateFrames(a.m).find((f) => f.stop?.id === stop.id)).toMatchObject({ value: 'awaiting-input', stop });
      // One push, for this stop: no "waiting" alert beside it.
      expectUsageLimitPush(await w.pushedOnce(before, stop.id), who.name, session, stop, reset);
      return stop;
    },
    killed: async () => {
      const before = a.apns.sandbox.requests.length;
      const pid = Number((await a.fx.tmux.tmux('display-message', '-p', '-t', `=${session}:`, '#{pane_pid}')).trim());
      expect(pid).toBeGreaterThan(0);
      previous = (await w.listedStop())?.id ?? null;
      process.kill(pid, 'SIGKILL');
      const killedAt = Date.now();
      // No agent reports any more, so no state frame: the list (and session-meta's `exited`) say it.
      const stop = await w.stopSeen('exited', killedAt, false);
      expect(stop).toMatchObject({ agent: who.kind, signal: 'SIGKILL', message: 'killed by SIGKILL' });
      expect(await w.pushedOnce(before, null)).toMatchObject({ aps: { alert: { title: `${who.name} crashed: killed by SIGKILL` } } });
    },
  };
  return w;
}

/** Claude waits on a usage limit with a notice on screen that takes the keys: Escape until it is gone. */
export function dismissClaudeLimitNotice<F extends Closable, H extends AgentHomeLike>(a: RealAgent<F, H>): Promise<boolean> {
  return a.explained(
    eventually(
      async () => {
        if (!(await a.m.text()).includes('Esc to cancel')) return true;
        a.m.stream.sendKey('escape');
        return false;
      },
      30_000,
      500,
      'the usage limit notice dismissed',
    ),
  );
}

/** The one push of a usage limit: time-sensitive, naming who and when it resets. */
export function expectUsageLimitPush(push: StopPush, who: string, session: string, stop: Stop, reset: number): void {
  expect(push).toMatchObject({
    aps: {
      alert: { title: `${who} reached its usage limit · resets ${resetClock(reset)}`, subtitle: session },
      category: 'TETHER_USAGE_LIMIT',
      'interruption-level': 'time-sensitive',
    },
    resetsAt: stop.resetsAt,
    limit: 'five_hour',
  });
}

/** The one push of an error stop: who stopped, in which session, its body holding the agent's `words`. */
export function expectErrorPush(push: StopPush, who: string, session: string, words: string): void {
  expect(push).toMatchObject({
    aps: { alert: { title: `${who} stopped on an error`, subtitle: session }, category: 'TETHER_STOPPED_ERROR' },
  });
  expect((push.aps.alert as { body: string }).body).toContain(words);
}
