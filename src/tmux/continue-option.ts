/**
 * A session's scheduled continue as tmux holds it (docs/api.md "Continue"): the user option
 * CONTINUE_OPTION of the session, one line of JSON. tmux keeps it as long as the session, across
 * a daemon's restart, and a restore of the session brings it back with the session's record.
 *
 * Invariant: the value is written with `set-option` as one argv word, without `-F`: never
 * expanded as a format, never split as a command list (JSON ends with `}`, never with `;`); a
 * value that is not a schedule (set by hand, cut) reads as none.
 */
import { CONTINUE_OPTION, CONTINUE_STATUSES, type ContinueSchedule } from '../protocol/continue.js';
import type { TmuxCli } from './exec.js';
import { readUserOption, setUserOption, unsetUserOption } from './sessions.js';

const isText = (v: unknown): v is string => typeof v === 'string';

/** `value` as a schedule, or null when it is not one. */
export function decodeContinueOption(value: string | null): ContinueSchedule | null {
  if (value === null) return null;
  let o: unknown;
  try {
    o = JSON.parse(value);
  } catch {
    return null;
  }
  if (typeof o !== 'object' || o === null) return null;
  const s = o as Record<string, unknown>;
  const well =
    isText(s.id) &&
    isText(s.at) &&
    !Number.isNaN(Date.parse(s.at)) &&
    isText(s.text) &&
    isText(s.by) &&
    (s.stopId === null || isText(s.stopId)) &&
    (CONTINUE_STATUSES as readonly unknown[]).includes(s.status) &&
    (s.reason === undefined || isText(s.reason)) &&
    (s.decidedAt === undefined || isText(s.decidedAt));
  if (!well) return null;
  const { id, at, text, by, stopId, status, reason, decidedAt } = s as unknown as ContinueSchedule;
  return {
    id,
    at,
    text,
    by,
    stopId,
    status,
    ...(reason !== undefined ? { reason } : {}),
    ...(decidedAt !== undefined ? { decidedAt } : {}),
  };
}

/** Reads session `name`'s continue; null when none (or not a schedule); `session-not-found` when the session is gone. */
export async function readContinueOption(cli: TmuxCli, name: string): Promise<ContinueSchedule | null> {
  return decodeContinueOption(await readUserOption(cli, name, CONTINUE_OPTION));
}

/** Writes session `name`'s continue (null: removes it). */
export async function writeContinueOption(cli: TmuxCli, name: string, schedule: ContinueSchedule | null): Promise<void> {
  if (schedule === null) await unsetUserOption(cli, name, CONTINUE_OPTION);
  else await setUserOption(cli, name, CONTINUE_OPTION, JSON.stringify(schedule));
}
