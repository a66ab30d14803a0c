/**
 * An agent's stop as the wire carries it (docs/api.md "Stops"), made from what its adapter read
 * (`StopReport`: a hook, a file, a notice) or from the pane's exit. The machine holds the stop's
 * id and kind; this is the rest: the agent's words, cut to MAX_STOP_MESSAGE_CHARS, and the times
 * as ISO 8601.
 *
 * Invariant: a second report of the stop the session holds (same kind, same reset) is the same
 * stop: it keeps its id, so nothing is told or pushed twice.
 */
import { randomUUID } from 'node:crypto';
import { constants } from 'node:os';
import { MAX_STOP_MESSAGE_CHARS, type Stop, type StopKind } from '../../protocol/stop.js';
import { cutText } from '../../protocol/text.js';

/** What an adapter read of a stop of its agent: a usage limit or an API error it gave up on. */
export interface StopReport {
  readonly kind: Extract<StopKind, 'usage-limit' | 'error'>;
  /** The agent's own words (cut on the way to the wire). */
  readonly message: string;
  /** A usage limit's reset (epoch ms), when the agent says. */
  readonly resetsAt?: number;
  /** Which limit (`five_hour`, `seven_day`), when the agent says. */
  readonly limit?: string;
}

/** How an agent's process ended, as tmux tells it. */
export interface ExitReport {
  readonly status: number | null;
  /** The signal's number (tmux's `pane_dead_signal`). */
  readonly signal: number | null;
}

/** `text` cut to MAX_STOP_MESSAGE_CHARS characters, an ellipsis marking the cut. */
export function cutStopMessage(text: string): string {
  return cutText(text.trim(), MAX_STOP_MESSAGE_CHARS);
}

/** A signal's name (`SIGKILL`), or `SIG<n>` when this system does not name it. */
function signalName(signal: number): string {
  return Object.entries(constants.signals).find(([, n]) => n === signal)?.[0] ?? `SIG${signal}`;
}

/** A new stop of `agent` (its kind) at `now` (epoch ms). */
export function stopOf(agent: string, report: StopReport, now: number): Stop {
  return {
    id: randomUUID(),
    kind: report.kind,
    agent,
    message: cutStopMessage(report.message),
    stoppedAt: new Date(now).toISOString(),
    ...(report.resetsAt !== undefined && Number.isFinite(report.resetsAt) ? { resetsAt: new Date(report.resetsAt).toISOString() } : {}),
    ...(report.limit !== undefined && report.limit !== '' ? { limit: report.limit } : {}),
  };
}

/** The `done` stop of a turn that ended. */
export function doneStop(agent: string, now: number): Stop {
  return { id: randomUUID(), kind: 'done', agent, message: '', stoppedAt: new Date(now).toISOString() };
}

/** The `exited` stop of an agent whose process ended. */
export function exitStop(agent: string, exit: ExitReport, now: number): Stop {
  const signal = exit.signal !== null ? signalName(exit.signal) : null;
  const message = signal !== null ? `killed by ${signal}` : `exited with status ${exit.status ?? 'unknown'}`;
  return {
    id: randomUUID(),
    kind: 'exited',
    agent,
    message,
    stoppedAt: new Date(now).toISOString(),
    ...(signal === null && exit.status !== null ? { exitCode: exit.status } : {}),
    ...(signal !== null ? { signal } : {}),
  };
}

/** Whether `report` is the stop `held` already is (a second report of it). */
export function sameStop(held: Stop | null, report: StopReport): boolean {
  if (held === null || held.kind !== report.kind) return false;
  const resets = report.resetsAt !== undefined && Number.isFinite(report.resetsAt) ? new Date(report.resetsAt).toISOString() : undefined;
  return held.resetsAt === resets;
}
