/**
 * The warnings before a usage limit is hit (docs/push.md "Usage"): one usage-warning machine per
 * agent kind and window (src/machines/usage-warning.machine.ts; the limits are the account's, so
 * two sessions of one agent share one), fed each change of any session's usage windows, and what
 * they emit handed to push.
 *
 * A report at 100 % is the limit itself: its machine takes it (its thresholds count as warned), but
 * nothing is handed to push: the agent's usage-limit stop says it (docs/push.md "Stops").
 *
 * Invariants: at most one warning per threshold, per agent kind and window, per reset period;
 * with no thresholds (`[push] usage_thresholds = []`) no machine is made and nothing is warned.
 */
import { createActor, type Actor, type InspectionEvent } from 'xstate';
import { usageWarningMachine } from '../../machines/usage-warning.machine.js';
import type { AgentUsage } from '../../protocol/usage.js';
import type { PushedUsage } from '../../push/usage-alert.js';

/** A used percent at or above which the warning is time-sensitive. */
export const TIME_SENSITIVE_PERCENT = 95;

/** A window that crossed a threshold: what push says of it. */
export type UsageWarning = PushedUsage;

export interface UsageWarningsDeps {
  /** `[push] usage_thresholds`. */
  readonly thresholds: readonly number[];
  /** Every change of a session's usage windows (the usage book). */
  readonly onUsage: (listener: (session: string, usage: AgentUsage) => void) => () => void;
  readonly now: () => number;
  /** XState inspection of each machine (the /ops view). */
  readonly inspect?: (agent: string, window: string) => ((ev: InspectionEvent) => void) | undefined;
}

export class UsageWarnings {
  private readonly machines = new Map<string, Actor<typeof usageWarningMachine>>();
  private readonly listeners = new Set<(warning: UsageWarning) => void>();
  private readonly unwatch: () => void;

  constructor(private readonly deps: UsageWarningsDeps) {
    this.unwatch = deps.thresholds.length === 0 ? () => undefined : deps.onUsage((_session, usage) => this.reported(usage));
  }

  /** Calls `listener` with each warning; returns the undo. */
  onWarning(listener: (warning: UsageWarning) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  stop(): void {
    this.unwatch();
    for (const actor of this.machines.values()) actor.stop();
    this.machines.clear();
  }

  private reported(usage: AgentUsage): void {
    const at = this.deps.now();
    for (const w of usage.windows) {
      const resetsAt = w.resetsAt === undefined ? null : Date.parse(w.resetsAt);
      // A figure of a period that is over (a session's last report from before its reset) warns of nothing.
      if (resetsAt !== null && resetsAt <= at) continue;
      this.machine(usage.agent, w.name).send({ type: 'usage.reported', usedPercent: w.usedPercent, resetsAt, at });
    }
  }

  private machine(agent: string, window: string): Actor<typeof usageWarningMachine> {
    const key = `${agent}\u0000${window}`;
    const found = this.machines.get(key);
    if (found) return found;
    const inspect = this.deps.inspect?.(agent, window);
    const actor = createActor(usageWarningMachine, {
      input: { thresholds: this.deps.thresholds },
      ...(inspect ? { id: `usage:${agent}:${window}`, inspect } : {}),
    });
    actor.on('usage.warned', (e) => {
      if (e.usedPercent >= 100) return;
      const warning: UsageWarning = {
        agent,
        window,
        threshold: e.threshold,
        usedPercent: e.usedPercent,
        resetsAt: e.resetsAt === null ? null : new Date(e.resetsAt).toISOString(),
        timeSensitive: e.usedPercent >= TIME_SENSITIVE_PERCENT,
      };
      for (const l of [...this.listeners]) l(warning);
    });
    actor.start();
    this.machines.set(key, actor);
    return actor;
  }
}
