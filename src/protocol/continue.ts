/**
 * A continue scheduled for when an agent's usage limit resets (docs/api.md "Continue"): its
 * limits; its statuses, reasons and shape are the continue machine's, its tmux option is in
 * src/tmux/layout.ts. Plain constants and types, so the running code and the schemas share them
 * without loading TypeBox.
 */
export { CONTINUE_STATUSES, SKIP_REASONS, type ContinueSchedule, type ContinueStatus } from '../machines/continue.machine.js';

/** What is typed when the request names no text. */
export const DEFAULT_CONTINUE_TEXT = 'continue';
/** The longest text a continue types, in characters. */
export const MAX_CONTINUE_TEXT_CHARS = 1000;
/** `at: "reset"` is the stop's `resetsAt` plus this: the limit is surely lifted when the text arrives. */
export const RESET_MARGIN_MS = 10_000;
/** The furthest ahead a continue may be scheduled. */
export const MAX_CONTINUE_AHEAD_MS = 7 * 24 * 60 * 60 * 1000;
