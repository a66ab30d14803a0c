/**
 * A session's scheduled continue as tmux holds it (docs/api.md "Continue"): the session's user
 * option `SESSION_OPTIONS.continue`, one line of JSON. tmux keeps it as long as the session,
 * across a daemon's restart, and a restore of the session brings it back with the session's record.
 *
 * Invariant: the value is written with `set-option` as one argv word, without `-F`: never
 * expanded as a format, never split as a command list (JSON ends with `}`, never with `;`); it
 * is read back with its schema's generated check: a value that is not a schedule (set by hand,
 * cut) reads as none.
 */
import type { ContinueSchedule } from '../../protocol/continue.js';
import { CHECKS, ContinueSchedule as ContinueScheduleSchema } from '../../protocol/continue.checks.js';
import { checkOf } from '../../protocol/schema-check.js';
import type { TmuxCli } from '../exec.js';
import { decodeJsonOption, SESSION_OPTIONS } from '../layout.js';
import { readUserOption, setUserOption, unsetUserOption } from './sessions.js';

const scheduleCheck = checkOf(CHECKS, ContinueScheduleSchema);

/** `value` as a schedule, or null when it is not one (its schema's shape, and a time at `at`). */
export function decodeContinueOption(value: string | null): ContinueSchedule | null {
  // The schema says `at` is text; a schedule is armed by its time, so text that is no time is not one.
  return decodeJsonOption(value, (v): v is ContinueSchedule => scheduleCheck.Check(v) && !Number.isNaN(Date.parse(v.at)));
}

/** Reads session `name`'s continue; null when none (or not a schedule); `session-not-found` when the session is gone. */
export async function readContinueOption(cli: TmuxCli, name: string): Promise<ContinueSchedule | null> {
  return decodeContinueOption(await readUserOption(cli, name, SESSION_OPTIONS.continue));
}

/** Writes session `name`'s continue (null: removes it). */
export async function writeContinueOption(cli: TmuxCli, name: string, schedule: ContinueSchedule | null): Promise<void> {
  if (schedule === null) await unsetUserOption(cli, name, SESSION_OPTIONS.continue);
  else await setUserOption(cli, name, SESSION_OPTIONS.continue, JSON.stringify(schedule));
}
