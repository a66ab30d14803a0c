/**
 * Text typed into an agent's input box and submitted, as a person does it: the text, then Enter
 * once the agent has taken the text (docs/agents.md "Typing a prompt"). The one typing path: a
 * prompt from a phone (src/service/prompts/prompts.service.ts) and a scheduled continue
 * (src/service/continue/continue.service.ts) both go through `typeLine`.
 *
 * The text goes as a bracketed paste when the program turned bracketed paste on (every agent tether
 * runs does): its lines stay one message, and no key in it acts (a newline is not Enter). A program
 * that did not gets it as keys. Several agents tell a paste from typing by timing, and an Enter that
 * follows text too closely is taken as part of it: a newline in the input box, nothing submitted.
 * Codex inserts a newline for an Enter within 120 ms of a burst of keys, Gemini CLI for one within
 * 30 ms of the last key or paste, Claude Code appends one within 100 ms of a paste to the paste. So
 * the Enter waits until the pane has drawn something after the text and then been quiet for
 * LINE_SETTLE_MS (the agent read the text well before that), at most LINE_SETTLE_MAX_MS (an agent
 * that draws without pause, a spinner): then the Enter goes anyway, far past any such window. A
 * pane whose output is not followed (no activity) gets LINE_SETTLE_MS after the text.
 */
import type { InputMessage } from '../../protocol/input.js';

/** How long the pane must have been quiet, after drawing the text, before Enter. */
export const LINE_SETTLE_MS = 300;
/** The longest wait before Enter. */
export const LINE_SETTLE_MAX_MS = 3000;
/** How often the pane's activity is looked at. */
const POLL_MS = 20;

/** What typing a line needs of the session's pane. */
export interface LinePane {
  /** Types one input message, in order with all input. */
  input(session: string, message: InputMessage): Promise<void>;
  /** The stream's position and when the pane last wrote, or null where the pane's output is not followed. */
  activity(session: string): { readonly position: number; readonly lastOutputAt: number | null } | null;
  /** Whether the pane's program turned bracketed paste on; absent or null: not known (keys are typed). */
  bracketedPaste?(session: string): boolean | null;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The message that types `text` into a program that does (`paste`) or does not (`keys`) take bracketed paste. */
export function textInput(text: string, bracketedPaste: boolean): InputMessage {
  return bracketedPaste ? { type: 'paste', data: text } : { type: 'keys', data: text };
}

/** Types `text`, waits for the agent to have taken it, then Enter. */
export async function typeLine(pane: LinePane, session: string, text: string, now: () => number): Promise<void> {
  const before = pane.activity(session)?.position ?? null;
  await pane.input(session, textInput(text, pane.bracketedPaste?.(session) === true));
  const typedAt = now();
  for (;;) {
    const t = now();
    if (t - typedAt >= LINE_SETTLE_MAX_MS) break;
    const activity = pane.activity(session);
    if (activity === null || before === null) {
      if (t - typedAt >= LINE_SETTLE_MS) break;
    } else if (activity.position > before && t - (activity.lastOutputAt ?? typedAt) >= LINE_SETTLE_MS) {
      break;
    }
    await sleep(POLL_MS);
  }
  await pressEnter(pane, session);
}

/** Enter, in order with all input. */
export function pressEnter(pane: Pick<LinePane, 'input'>, session: string): Promise<void> {
  return pane.input(session, { type: 'key', name: 'Enter' });
}
