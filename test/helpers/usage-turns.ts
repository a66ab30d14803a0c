/**
 * What the usage tests of the real agents share (usage-claude, usage-codex, usage-pi; docs/api.md
 * "Usage"): the windows' resets and Codex's rate-limit headers for the fakes' answers, the
 * windows as the daemon gives them back, the session's usage as the daemon gives it, a turn
 * awaited until a window shows the figure its answer carried, the check that it came in time,
 * and the state frame on the stream that carries the same usage.
 */
import { expect } from 'vitest';
import type { AgentUsage, UsageWindow } from '../../src/protocol/usage.js';
import { TURN_MS, type AgentHomeLike, type Closable, type RealAgent } from './agent-fixture.js';
import { stateFrames } from './stream.js';
import { eventually } from './tmux.js';

/** The bound of the issue: the windows on the session within 5 s of the answer carrying them. */
const USAGE_SEEN_MS = 5000;

/** When the 5-hour window and the weekly one reset (unix seconds). */
export interface UsageResets {
  readonly fiveHour: number;
  readonly weekly: number;
}

/**
 * The resets a test's answers carry: the 5-hour window's in an hour, the weekly one's in five
 * days, from when it is called (a test file's load; the helper's is shared by the files of a worker).
 */
export function answerResets(): UsageResets {
  const now = Math.floor(Date.now() / 1000);
  return { fiveHour: now + 3600, weekly: now + 432_000 };
}

/** The two windows as the session's usage gives them: the 5-hour one at `fiveHour` %, the weekly one at `weekly` %. */
export const windowsAt = (resets: UsageResets, fiveHour: number, weekly: number): UsageWindow[] => [
  { name: 'five_hour', usedPercent: fiveHour, resetsAt: new Date(resets.fiveHour * 1000).toISOString() },
  { name: 'seven_day', usedPercent: weekly, resetsAt: new Date(resets.weekly * 1000).toISOString() },
];

/** Codex's rate-limit headers as its service sends them: the 5-hour window's percent used (`primary`) and the weekly one's (`secondary`). */
export const codexUsageHeaders = (used: { primary: number; secondary: number }, resets: UsageResets): Record<string, string> => ({
  'x-codex-primary-used-percent': String(used.primary),
  'x-codex-primary-window-minutes': '300',
  'x-codex-primary-reset-at': String(resets.fiveHour),
  'x-codex-secondary-used-percent': String(used.secondary),
  'x-codex-secondary-window-minutes': '10080',
  'x-codex-secondary-reset-at': String(resets.weekly),
});

export interface UsageTurns {
  /** The session's usage (`GET /sessions/<id>`). */
  readonly usage: () => Promise<AgentUsage | null>;
  /** Types `text`; resolves with the session's usage once its window `window` shows `used` %, and how long after the answer. */
  readonly turn: (text: string, window: string, used: number) => Promise<{ usage: AgentUsage; afterAnswerMs: number }>;
  /** Waits (USAGE_SEEN_MS at most) for a state frame on the session's stream that carries `usage`. */
  readonly onStateFrame: (usage: AgentUsage) => Promise<void>;
}

/** The usage of `session` of the real agent `a`, whose fake last answered at `answeredAt()` (epoch ms). */
export function usageTurns(
  a: Pick<RealAgent<Closable, AgentHomeLike>, 'fx' | 'm' | 'type' | 'explained'>,
  session: string,
  answeredAt: () => number,
  pollMs: number,
): UsageTurns {
  const usage = async () => ((await (await a.fx.d.get(`/sessions/${session}`)).json()) as { usage: AgentUsage | null }).usage;
  return {
    usage,
    turn: async (text, window, used) => {
      await a.type(text);
      const seen = await a.explained(
        eventually(
          async () => {
            const u = await usage();
            return u?.windows.find((w) => w.name === window)?.usedPercent === used ? u : null;
          },
          TURN_MS,
          pollMs,
          `the session's usage at ${used} % of ${window}`,
        ),
      );
      return { usage: seen!, afterAnswerMs: Date.now() - answeredAt() };
    },
    onStateFrame: async (u) => {
      await a.explained(
        eventually(
          () => stateFrames(a.m).some((f) => JSON.stringify(f.usage) === JSON.stringify(u)),
          USAGE_SEEN_MS,
          pollMs,
          'a state frame with the usage',
        ),
      );
    },
  };
}

/** Checks the usage a turn showed: on the session within 5 s of the answer, and `expected` (observed at some time). */
export function expectUsageInTime(usage: AgentUsage, afterAnswerMs: number, expected: Omit<AgentUsage, 'observedAt'>): void {
  expect(afterAnswerMs, 'on the session within 5 s of the answer').toBeLessThan(USAGE_SEEN_MS);
  expect(usage).toEqual({ ...expected, observedAt: expect.any(String) as string });
}
