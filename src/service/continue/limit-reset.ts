/**
 * The moment a usage limit resets (docs/push.md "Limit reset"): when the reset time of a session's
 * stop of a continue-able kind (a usage limit: src/push/stop-meanings.ts) passes, the agent is
 * still in that stop and no continue was scheduled for it, the listeners hear it once, so one
 * alert can say the agent can go on.
 *
 * Invariants: once per stop (its id), whatever reports it again; nothing when a continue waits
 * or was typed for the stop (the person chose already), or when the agent left the stop (a new
 * turn, another stop) before the reset; a session that ends is forgotten with its timer.
 */
import type { ContinueSchedule } from '../../protocol/continue.js';
import type { AgentStateFact } from '../../protocol/frames.js';
import type { Stop } from '../../protocol/stop.js';
import { STOP_MEANINGS } from '../../push/stop-meanings.js';

export interface LimitResetDeps {
  readonly subscribeEvery: (listener: (id: string, fact: AgentStateFact) => void) => () => void;
  readonly stopOf: (id: string) => Stop | null;
  /** The session's continue, or null. */
  readonly continueOf: (id: string) => ContinueSchedule | null;
  readonly now: () => number;
  /** Calls `fn` in `ms` (setTimeout, unref'd, by default); returns the cancel. */
  readonly timer?: (fn: () => void, ms: number) => () => void;
}

/** Told once per usage-limit stop whose reset passed with nothing scheduled. */
export type LimitResetListener = (id: string, stopId: string) => void;

function realTimer(fn: () => void, ms: number): () => void {
  const t = setTimeout(fn, ms);
  t.unref();
  return () => clearTimeout(t);
}

export class LimitResets {
  /** The armed timer of each session: the stop it waits for, and its cancel. */
  private readonly armed = new Map<string, { stopId: string; cancel: () => void }>();
  private readonly told = new Set<string>();
  private readonly listeners = new Set<LimitResetListener>();
  private readonly unsubscribe: () => void;

  constructor(private readonly deps: LimitResetDeps) {
    this.unsubscribe = deps.subscribeEvery((id, fact) => this.seen(id, fact.stop ?? null));
  }

  /** Calls `listener` once per reset that passed with nothing scheduled; returns the unsubscribe. */
  onReset(listener: LimitResetListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  forget(id: string): void {
    this.armed.get(id)?.cancel();
    this.armed.delete(id);
  }

  stop(): void {
    this.unsubscribe();
    for (const id of [...this.armed.keys()]) this.forget(id);
  }

  private seen(id: string, stop: Stop | null): void {
    if (stop === null || !STOP_MEANINGS[stop.kind].continueAble || stop.resetsAt === undefined) return;
    if (this.armed.get(id)?.stopId === stop.id || this.told.has(stop.id)) return;
    const resets = Date.parse(stop.resetsAt);
    if (Number.isNaN(resets)) return;
    this.forget(id);
    const cancel = (this.deps.timer ?? realTimer)(() => this.passed(id, stop.id), Math.max(0, resets - this.deps.now()));
    this.armed.set(id, { stopId: stop.id, cancel });
  }

  private passed(id: string, stopId: string): void {
    this.armed.delete(id);
    if (this.deps.stopOf(id)?.id !== stopId || this.told.has(stopId)) return;
    const scheduled = this.deps.continueOf(id);
    if (scheduled?.status === 'waiting' || (scheduled?.stopId === stopId && scheduled.status === 'typed')) return;
    this.told.add(stopId);
    for (const listener of this.listeners) listener(id, stopId);
  }
}
