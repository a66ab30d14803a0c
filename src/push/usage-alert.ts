/**
 * What the warning before a usage limit says (docs/push.md "Usage"): "Claude · 80 % of the 5-hour
 * limit used · resets 4:10 PM", one alert per agent and window at a time on the lock screen (a
 * newer one of the same window replaces it), time-sensitive at 95 % and over. Pure.
 */
import { resetClock } from './stop-meanings.js';

/** A window crossing a threshold, as push says it (src/service/alerts/usage-warnings.ts makes them). */
export interface PushedUsage {
  /** The agent's kind (`claude`). */
  readonly agent: string;
  /** The window (`five_hour`). */
  readonly window: string;
  readonly threshold: number;
  readonly usedPercent: number;
  /** The window's reset, ISO 8601, when the agent said. */
  readonly resetsAt: string | null;
  /** Used at the time-sensitive percent or over (95): it may break through a Focus mode. */
  readonly timeSensitive: boolean;
}

/** How a person calls a window: `5-hour`, `weekly`, `daily`, else its name. */
export function windowLabel(window: string): string {
  switch (window) {
    case 'five_hour':
      return '5-hour';
    case 'seven_day':
      return 'weekly';
    case 'one_day':
      return 'daily';
    default:
      return window.replaceAll('_', ' ');
  }
}

/** The collapse id of a window's warnings: a newer one replaces the older on the lock screen. */
export const usageCollapseId = (w: Pick<PushedUsage, 'agent' | 'window'>): string => `usage-${w.agent}-${w.window}`;

/** The title: "Claude · 80 % of the 5-hour limit used · resets 4:10 PM". */
export function usageTitle(agentLabel: string, w: PushedUsage): string {
  const resets = w.resetsAt !== null ? ` · resets ${resetClock(w.resetsAt)}` : '';
  return `${agentLabel} · ${w.threshold} % of the ${windowLabel(w.window)} limit used${resets}`;
}

/** The payload of a window's warning. */
export function usagePayload(agentLabel: string, w: PushedUsage): Buffer {
  return Buffer.from(
    JSON.stringify({
      aps: {
        alert: { title: usageTitle(agentLabel, w), body: `${w.usedPercent} % used now` },
        sound: 'default',
        'thread-id': `usage-${w.agent}`,
        ...(w.timeSensitive ? { 'interruption-level': 'time-sensitive' } : {}),
      },
      usage: {
        agent: w.agent,
        window: w.window,
        threshold: w.threshold,
        usedPercent: w.usedPercent,
        ...(w.resetsAt !== null ? { resetsAt: w.resetsAt } : {}),
      },
    }),
  );
}
