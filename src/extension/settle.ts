/**
 * When pi is really waiting for the user: the `agent.end` verdict for each `agent_end`.
 *
 * Inside `agent_end` pi is still streaming, and a retry, a compaction or a queued message may
 * follow. Where pi has `agent_settled` (>= 0.80.4) that event is the verdict. Elsewhere the
 * verdict is taken on a later tick: idle with nothing pending means awaiting-input; an answer
 * that failed with an error pi retries (overloaded, rate limit, 5xx, network) waits for the
 * retry's `agent_start`, and only when none comes within pi's back-off is the agent taken as
 * waiting. A new `agent_start` before the verdict means "not idle".
 *
 * Invariant: exactly one verdict per `agent_end`, never thrown, never blocking pi.
 */
import type { PiContext } from './pi-api.js';

/** How often a busy agent is looked at again after `agent_end`, and for how long. */
const RECHECK_MS = 250;
const RECHECK_FOR_MS = 30_000;
/** pi's default retry back-off (2 s doubling) plus a margin for the retry to start. */
const RETRY_BASE_MS = 2000;
const RETRY_GRACE_MS = 3000;
const MAX_RETRY_WAIT_MS = 40_000;

/** Errors pi retries by itself (its own list is wider; these are the common ones). */
const RETRYABLE =
  /overloaded|rate.?limit|too many requests|\b429\b|\b5\d\d\b|service.?unavailable|server.?error|internal.?error|network|connection|fetch failed|socket hang up|timed? ?out|terminated/i;

/** The last assistant message of an `agent_end` says pi will retry. */
export function endsWithRetryableError(messages: unknown): boolean {
  if (!Array.isArray(messages)) return false;
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i] as { role?: unknown; stopReason?: unknown; errorMessage?: unknown } | null;
    if (m?.role !== 'assistant') continue;
    return m.stopReason === 'error' && typeof m.errorMessage === 'string' && RETRYABLE.test(m.errorMessage);
  }
  return false;
}

/** The error the last assistant message of an `agent_end` failed with (`stopReason: "error"`), or null. */
export function endingError(messages: unknown): string | null {
  if (!Array.isArray(messages)) return null;
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i] as { role?: unknown; stopReason?: unknown; errorMessage?: unknown } | null;
    if (m?.role !== 'assistant') continue;
    if (m.stopReason !== 'error') return null;
    return typeof m.errorMessage === 'string' && m.errorMessage !== '' ? m.errorMessage : 'the model API failed';
  }
  return null;
}

export interface SettleDeps {
  /** pi emits `agent_settled`: wait for it instead of deriving. */
  readonly settledEvent: boolean;
  /** The verdict for the pending `agent_end`. */
  readonly verdict: (idle: boolean) => void;
  readonly setTimer?: (fn: () => void, ms: number) => { cancel(): void };
}

const defaultTimer = (fn: () => void, ms: number) => {
  const t = setTimeout(fn, ms);
  t.unref?.();
  return { cancel: () => clearTimeout(t) };
};

export class SettleWatcher {
  private pending = false;
  private timer: { cancel(): void } | null = null;
  private retries = 0;
  private settledSeen: boolean;

  constructor(private readonly deps: SettleDeps) {
    this.settledSeen = deps.settledEvent;
  }

  /** `agent_start`: a verdict still open is "not idle" (a retry or a queued message runs). */
  agentStart(): void {
    this.decide(false);
  }

  /** `agent_end` with its messages and the handler's context. */
  agentEnd(messages: unknown, ctx: PiContext): void {
    this.decide(false);
    this.pending = true;
    if (this.settledSeen) return;
    if (endsWithRetryableError(messages)) {
      this.retries++;
      const wait = Math.min(MAX_RETRY_WAIT_MS, RETRY_BASE_MS * 2 ** (this.retries - 1) + RETRY_GRACE_MS);
      this.later(wait, () => this.checkIdle(ctx, Date.now() + RECHECK_FOR_MS));
      return;
    }
    this.retries = 0;
    this.later(0, () => this.checkIdle(ctx, Date.now() + RECHECK_FOR_MS));
  }

  /** `agent_settled`: pi says the run is over (nothing follows). */
  agentSettled(): void {
    this.settledSeen = true;
    this.retries = 0;
    if (!this.pending) this.pending = true;
    this.decide(true);
  }

  /** Drops any open verdict without deciding (the extension is shutting down). */
  dispose(): void {
    this.timer?.cancel();
    this.timer = null;
    this.pending = false;
  }

  private checkIdle(ctx: PiContext, until: number): void {
    let idle: boolean;
    try {
      idle = ctx.isIdle() && !ctx.hasPendingMessages();
    } catch {
      // A stale context (pi reloaded meanwhile): the new instance reports for itself.
      this.dispose();
      return;
    }
    if (idle) this.decide(true);
    else if (Date.now() < until) this.later(RECHECK_MS, () => this.checkIdle(ctx, until));
  }

  private later(ms: number, fn: () => void): void {
    this.timer?.cancel();
    this.timer = (this.deps.setTimer ?? defaultTimer)(() => {
      this.timer = null;
      fn();
    }, ms);
  }

  private decide(idle: boolean): void {
    this.timer?.cancel();
    this.timer = null;
    if (!this.pending) return;
    this.pending = false;
    this.deps.verdict(idle);
  }
}
