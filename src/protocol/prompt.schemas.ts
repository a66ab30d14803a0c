/**
 * A prompt sent from a phone (docs/api.md "Prompts") as TypeBox schemas: the record the answers
 * and frames carry, and a session's prompts as tmux and the session's record keep them. The
 * record's type is the prompt machine's, bound below; the generated check is prompt.checks.ts
 * (`npm run schemas`).
 */
import { Type, type Static } from 'typebox';
import { PROMPT_ID_PATTERN, PROMPT_STATUSES, REMEMBERED_PROMPT_IDS, type PromptRecord as MachinePrompt } from './prompt.js';
import type { Holds, Same } from './same-type.js';

/** A prompt, as the answers, the `prompt` frames and tmux carry it. */
export const PromptRecord = Type.Object({
  id: Type.String({ description: "the client's key for it, or one tether chose" }),
  text: Type.String(),
  by: Type.String({ description: "the device's token name that sent it" }),
  status: Type.Enum(PROMPT_STATUSES),
  createdAt: Type.String({ description: 'ISO 8601' }),
  reason: Type.Optional(Type.String({ description: 'why it failed' })),
  decidedAt: Type.Optional(Type.String({ description: 'when it was submitted, typed, failed or cancelled, ISO 8601' })),
});
/**
 * The schema's type is the prompt machine's record: this fails to compile otherwise.
 * @typecheck (nothing imports it: knip.jsonc)
 */
export type PromptRecordIsTheMachines = Holds<Same<Static<typeof PromptRecord>, MachinePrompt>>;

/**
 * A session's prompts as they are kept (its tmux option `@tether-prompts`, its record): the
 * undecided ones and the newest decided, oldest first, and the ids of older decided ones with
 * their text's digest, so that a client's retry of one is answered, never typed again.
 */
export const StoredPrompts = Type.Object(
  {
    v: Type.Literal(1),
    prompts: Type.Array(PromptRecord),
    older: Type.Array(
      Type.Object(
        {
          id: Type.String({ pattern: PROMPT_ID_PATTERN }),
          digest: Type.String({ maxLength: 32 }),
          status: Type.Enum(PROMPT_STATUSES),
          by: Type.String({ maxLength: 256 }),
          createdAt: Type.String({ maxLength: 64 }),
        },
        { additionalProperties: false },
      ),
      { maxItems: REMEMBERED_PROMPT_IDS },
    ),
  },
  { additionalProperties: false },
);
export type StoredPrompts = Static<typeof StoredPrompts>;
