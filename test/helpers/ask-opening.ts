/**
 * Asks as an adapter opens them, for the tests of the ask desk, the answers service and the
 * agent-state machine: a permission to run a command, each choice written on one line as the
 * keys that answer it.
 */
import type { AskChoiceSpec, AskOpening } from '../../src/agent/asks/ask.js';
import type { AnswerEffect } from '../../src/machines/agent-state.machine.js';
import type { InputMessage } from '../../src/protocol/input.js';

/** Text typed as it is. */
export const typed = (data: string): InputMessage => ({ type: 'keys', data });

/** A named key pressed. */
export const pressed = (name: string): InputMessage => ({ type: 'key', name });

/** A choice: its id and label, what answering with it does, and the keys that answer it. */
export const choice = (id: string, label: string, effect: AnswerEffect, ...keys: InputMessage[]): AskChoiceSpec => ({
  id,
  label,
  keys,
  effect,
});

/** A permission to use `tool` for `concern`; `how` says when its keys may be typed and how its answer is seen to land. */
export function permissionAsk(
  tool: string,
  concern: string,
  choices: readonly AskChoiceSpec[],
  how: Pick<AskOpening, 'readiness' | 'landing'>,
): AskOpening {
  return { kind: 'permission', tool, concern, choices, ...how };
}
