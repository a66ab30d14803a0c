/**
 * An ask: a question an agent put on its screen and waits on (a permission, a multiple-choice
 * question), as data beside the stream (docs/api.md "Asks"). The agent's adapter reads it from
 * what the agent reports (a hook, a notice it writes to its terminal) and says, for each choice,
 * the keys a person types in that agent's dialog to pick it; tether answers by typing them into
 * the pane (docs/agents.md), never through a hook's decision.
 *
 * Invariants: every text is cut to its limit here, once, before anything keeps it; an ask's id
 * is never reused (a random UUID); what a client sees (`Ask`) never carries the keys.
 */
import type { AnswerEffect } from '../../machines/agent-state.machine.js';
import { CHOICE_ID_PATTERN, type AskKind } from '../../protocol/ask.js';
import type { Ask } from '../../protocol/frames.js';
import type { InputMessage } from '../../protocol/input.js';
import { cutText, replaceControlChars } from '../../protocol/text.js';

export type { Ask } from '../../protocol/frames.js';
export type { AskKind } from '../../protocol/ask.js';

/** Longest `concern` (the command, path, URL or question) and `detail` kept. */
export const MAX_ASK_CONCERN_CHARS = 500;
export const MAX_ASK_DETAIL_CHARS = 500;
/** Longest choice label, and most choices an ask carries. */
export const MAX_CHOICE_LABEL_CHARS = 200;
export const MAX_ASK_CHOICES = 12;
const CHOICE_ID_RE = new RegExp(CHOICE_ID_PATTERN);

/** One choice of a dialog, as its adapter knows it. */
export interface AskChoiceSpec {
  readonly id: string;
  /** The agent's own words for it. */
  readonly label: string;
  /** What a person types to pick it, in order (each step typed once the screen has settled again). */
  readonly keys: readonly InputMessage[];
  /** What the answer does to the agent's state, once it landed (the agent-state machine's `ask.answered`). */
  readonly effect: AnswerEffect;
}

/**
 * When the dialog takes keys: once the pane has been quiet for `quietMs` (the agent drew its
 * dialog and stopped: Claude Code drops keys that come in the moment its dialog opens), or
 * `afterMs` after the ask was reported (an agent that says by itself that its dialog is up).
 */
export type AskReadiness = { readonly quietMs: number } | { readonly afterMs: number };

/**
 * How tether sees that the agent took the keys: `screen` (the pane drew after them: the dialog
 * closed; only the timing of output is used, never its content), or `report` (only the agent's
 * next report says so).
 */
export type AskLanding = 'screen' | 'report';

/** A question as an adapter reads it, before the hub gives it an id. */
export interface AskOpening {
  readonly kind: AskKind;
  /** The tool the agent asks to use (`Bash`), when it is a permission. */
  readonly tool?: string;
  /** What it concerns: the command, the path, the URL, the question. */
  readonly concern: string;
  /** More words from the agent (why it asks, the question's header), when it gives them. */
  readonly detail?: string;
  readonly choices: readonly AskChoiceSpec[];
  readonly readiness: AskReadiness;
  readonly landing: AskLanding;
}

/** An ask as the hub keeps it: what clients see, and how each choice is typed. */
export interface OpenAsk {
  readonly ask: Ask;
  readonly opening: AskOpening;
  /** When it was asked (epoch ms, the daemon's clock). */
  readonly askedAtMs: number;
}

/** `text` on one line of printable characters (control characters, newlines too, become spaces), cut to `max`. */
function cut(text: string, max: number): string {
  return cutText(replaceControlChars(text, ' '), max);
}

/** The opening with every text cut to its limit and the choices bounded; null when it offers no valid choice. */
export function boundedOpening(opening: AskOpening): AskOpening | null {
  const seen = new Set<string>();
  const choices = opening.choices
    .filter((c) => CHOICE_ID_RE.test(c.id) && !seen.has(c.id) && seen.add(c.id) && c.keys.length > 0)
    .slice(0, MAX_ASK_CHOICES)
    .map((c) => ({ ...c, label: cut(c.label, MAX_CHOICE_LABEL_CHARS) }));
  if (choices.length === 0) return null;
  return {
    ...opening,
    concern: cut(opening.concern, MAX_ASK_CONCERN_CHARS),
    ...(opening.detail !== undefined ? { detail: cut(opening.detail, MAX_ASK_DETAIL_CHARS) } : {}),
    ...(opening.tool !== undefined ? { tool: cut(opening.tool, 128) } : {}),
    choices,
  };
}

/** What clients see of an opening given its id. */
export function askOf(id: string, agent: string, opening: AskOpening, askedAtMs: number): Ask {
  return {
    id,
    kind: opening.kind,
    agent,
    ...(opening.tool !== undefined ? { tool: opening.tool } : {}),
    concern: opening.concern,
    ...(opening.detail !== undefined ? { detail: opening.detail } : {}),
    choices: opening.choices.map((c) => ({ id: c.id, label: c.label })),
    askedAt: new Date(askedAtMs).toISOString(),
  };
}
