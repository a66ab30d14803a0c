/**
 * An agent's account usage windows as the wire carries them (docs/api.md "Usage"): per session
 * (`usage` in the session list, `GET /sessions/:id` and `state` frames) and per account
 * (`GET /usage`, one entry per agent kind). The schema is usage.schemas.ts, bound to these types.
 *
 * Invariant: a window's `usedPercent` is a number from 0 to 100 and its `resetsAt`, when there,
 * an ISO 8601 time: never NaN, never null inside a window (src/agent/hub/usage-book.ts checks
 * what agents report before anything is kept).
 */

/** One usage window: how much of a limit is used, and when it resets. */
export interface UsageWindow {
  /** `five_hour`, `seven_day` (docs/agents.md "Usage" names each agent's). */
  readonly name: string;
  /** 0 to 100. */
  readonly usedPercent: number;
  /** When it resets, ISO 8601; absent when the agent did not say. */
  readonly resetsAt?: string;
}

/** What one agent reported of its account's windows. */
export interface AgentUsage {
  /** The agent's kind (`claude`, `codex`, `pi`). */
  readonly agent: string;
  readonly windows: UsageWindow[];
  /** The window that stops the agent first: the one at 100, else the highest used; null without windows. */
  readonly binding: string | null;
  /** When the agent last reported them, ISO 8601. */
  readonly observedAt: string;
}

/**
 * The window that stops the agent first: one at 100 % (of several, the one that resets last),
 * else the most used (of equals, the one that resets last); null without windows.
 */
export function bindingWindow(windows: readonly UsageWindow[]): string | null {
  const later = (a: UsageWindow, b: UsageWindow) => (Date.parse(a.resetsAt ?? '') || 0) - (Date.parse(b.resetsAt ?? '') || 0);
  const ranked = [...windows].sort((a, b) => b.usedPercent - a.usedPercent || later(b, a));
  return ranked[0]?.name ?? null;
}
