/**
 * What Codex asks, as asks (docs/agents.md "Codex", "Asks and answers"): its approval of a
 * command (under `approval_policy = "on-request"`, a command that asks to leave the sandbox), and
 * its "Approaching rate limits" dialog (when it shows: rate-limit-nudge.ts).
 * Codex 0.169 says so itself, on its terminal: it writes its state as an OSC 7501 string
 * (`ESC ] 7501 ; state=blocked:app=codex:kind=permission ESC \` while it waits on the person,
 * `state=working` or `idle` once it goes on), and, when the user's `tui.notifications` ask for
 * it with `notification_method = "osc9"`, `ESC ] 9 ; Approval requested: <command> BEL`. What
 * the command is comes from that notice, else from the call its rollout file recorded.
 *
 * Keys in Codex 0.169's approval dialog: `y` is "Yes, proceed", Escape is "No, and tell Codex what
 * to do differently". Its "don't ask again" choice is not offered: its key differs by the kind of
 * approval, which tether cannot see. Codex writes its state before its dialog is drawn, so an
 * answer waits until the pane has been quiet for CODEX_DIALOG_QUIET_MS; Codex says when it took
 * the keys (its state leaves `blocked`).
 */
import type { AskOpening } from '../asks/ask.js';
import type { UsageReading } from '../contract/usage.js';
import type { RolloutCall } from './rollout-records.js';

/** Codex's OSC numbers: its desktop notification, its state. */
export const CODEX_NOTIFY_OSC = 9;
export const CODEX_STATE_OSC = 7501;
/**
 * How long the pane must have been quiet before keys are typed: Codex writes its state before it
 * has drawn the dialog, and a key that comes before the dialog is drawn is lost (measured). Once
 * drawn, Codex writes only its title, about once a second.
 */
export const CODEX_DIALOG_QUIET_MS = 300;

/** The fields of an OSC 7501 string (`state=blocked:app=codex:kind=permission`). */
export function readCodexState(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of text.split(':')) {
    const eq = part.indexOf('=');
    if (eq > 0) out[part.slice(0, eq)] = part.slice(eq + 1);
  }
  return out;
}

/** The command of an OSC 9 approval notice (`Approval requested: <command>`), or null for another notice. */
export function approvalCommand(text: string): string | null {
  const m = /^Approval requested: ([\s\S]+)$/.exec(text);
  return m ? m[1]!.trim() : null;
}

/** Codex's approval of a command: `command` from its notice, else the call its rollout recorded. */
export function codexApproval(command: string | null, call: RolloutCall | null): AskOpening {
  const concern = command ?? call?.command ?? 'a command';
  return {
    kind: 'permission',
    tool: call?.name ?? 'exec_command',
    concern,
    ...(call?.justification ? { detail: call.justification } : {}),
    choices: [
      { id: 'yes', label: 'Yes, proceed', keys: [{ type: 'keys', data: 'y' }], effect: 'run' },
      // Codex records the refusal and ends its turn by itself: what follows is its own report.
      { id: 'no', label: 'No, and tell Codex what to do differently', keys: [{ type: 'key', name: 'escape' }], effect: 'resume' },
    ],
    readiness: { quietMs: CODEX_DIALOG_QUIET_MS },
    landing: 'report',
  };
}

/** The model Codex 0.169's rate-limit dialog offers (measured: "Switch to gpt-6-luna for lower credit usage?"). */
export const CODEX_NUDGE_MODEL = 'gpt-6-luna';
/** The versions of Codex that offer CODEX_NUDGE_MODEL (another version's model is not known). */
const NUDGE_MODEL_VERSIONS = /^0\.169\./;

/** The model a version of Codex offers in its rate-limit dialog, or null when it is not known. */
export function nudgeModelOf(cliVersion: string | null): string | null {
  return cliVersion !== null && NUDGE_MODEL_VERSIONS.test(cliVersion) ? CODEX_NUDGE_MODEL : null;
}

/** How a window is named in words. */
const WINDOW_WORDS: Readonly<Record<string, string>> = { five_hour: '5-hour limit', seven_day: 'weekly limit', one_day: 'daily limit' };

/**
 * Codex's "Approaching rate limits · Switch to <model> for lower credit usage?" dialog, offering
 * `model` (null: not known) because of the window `high`. Keys in Codex 0.169: `1` switches the
 * model, `3` keeps it and makes Codex write `hide_rate_limit_model_nudge = true` under `[notice]`
 * in its config.toml (only when the person picks it), Escape closes it keeping the model (as `2`
 * does; Escape also does no harm when the dialog is not there, where `2` would be typed into the
 * prompt). Every choice leaves Codex waiting for a prompt. The answer lands when the pane draws
 * after the keys (the dialog closes): Codex writes no new state after an interrupted turn's.
 */
export function codexRateLimitNudge(model: string | null, high: UsageReading | null): AskOpening {
  const target = model ?? 'a model that uses fewer credits';
  const window =
    high === null ? null : `${WINDOW_WORDS[high.name] ?? `${high.name} limit`} at ${Math.min(100, Math.round(high.usedPercent))} % used. `;
  return {
    kind: 'question',
    concern: `Approaching rate limits: switch to ${target} for lower credit usage?`,
    detail: `${window ?? ''}"Never show again" makes Codex write notice.hide_rate_limit_model_nudge = true to its config.toml.`,
    choices: [
      { id: 'switch', label: `Switch to ${model ?? 'the suggested model'}`, keys: [{ type: 'keys', data: '1' }], effect: 'wait' },
      { id: 'keep', label: 'Keep current model', keys: [{ type: 'key', name: 'escape' }], effect: 'wait' },
      { id: 'never', label: 'Keep current model (never show again)', keys: [{ type: 'keys', data: '3' }], effect: 'wait' },
    ],
    readiness: { quietMs: CODEX_DIALOG_QUIET_MS },
    landing: 'screen',
  };
}
