/**
 * The schemas of the routes that answer a session's agent (docs/api.md "Asks" and "Continue"):
 * an answer to what it asks, and a continue for when its usage limit resets, as TypeBox schemas:
 * the source of their types and of the generated checks (answer-routes.checks.ts, `npm run
 * schemas`).
 */
import { Type } from 'typebox';
import { CHOICE_ID_PATTERN, MAX_ASK_ID_CHARS } from '../../protocol/ask.js';
import { MAX_CONTINUE_TEXT_CHARS } from '../../protocol/continue.js';
import { ContinueSchedule } from '../../protocol/continue.schemas.js';

export const AnswerRouteSchemas = {
  AnswerBody: Type.Object(
    {
      ask: Type.String({ minLength: 1, maxLength: MAX_ASK_ID_CHARS }),
      choice: Type.String({ pattern: CHOICE_ID_PATTERN }),
    },
    { additionalProperties: false },
  ),
  AnswerReply: Type.Object({ ask: Type.String(), choice: Type.String(), landed: Type.Boolean(), by: Type.String() }),
  /** An answer refused because the ask is over: who or what answered it (docs/api.md "Asks"). */
  AnswerRefusal: Type.Object({
    error: Type.String(),
    message: Type.String(),
    closed: Type.Optional(
      Type.Object({
        how: Type.String({ description: 'answered, terminal, moved-on or agent-gone' }),
        by: Type.Optional(Type.String({ description: "the device's token name, or terminal" })),
        choice: Type.Optional(Type.String()),
        at: Type.String(),
      }),
    ),
  }),
  /** `POST /sessions/:id/continue` (docs/api.md "Continue"): the time's and the text's rules are checked by the service. */
  ContinueBody: Type.Object(
    {
      at: Type.String({ minLength: 1, maxLength: 64, description: '"reset", or an ISO 8601 time with its offset' }),
      text: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_CONTINUE_TEXT_CHARS })),
    },
    { additionalProperties: false },
  ),
  ContinueReply: ContinueSchedule,
};
