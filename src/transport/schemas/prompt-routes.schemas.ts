/**
 * The schemas of a session's prompt routes (docs/api.md "Prompts": send one, list them, cancel a
 * queued one), as TypeBox schemas: the source of their types and of the generated checks
 * (prompt-routes.checks.ts, `npm run schemas`). The text's rules beyond its type and length (not
 * blank, no control character but tab and newlines) are checked by the service, the same for the
 * stream's `prompt` message.
 */
import { Type } from 'typebox';
import { MAX_PROMPT_CHARS, PROMPT_ID_PATTERN } from '../../protocol/prompt.js';
import { PromptRecord } from '../../protocol/prompt.schemas.js';
import { SESSION_NAME_PATTERN } from '../../protocol/session-name.js';

export const PromptRouteSchemas = {
  /** `POST /sessions/:id/prompt`. */
  PromptBody: Type.Object(
    {
      text: Type.String({ minLength: 1, maxLength: MAX_PROMPT_CHARS }),
      id: Type.Optional(
        Type.String({ pattern: PROMPT_ID_PATTERN, description: "the client's key for the prompt: a retry with it is safe" }),
      ),
    },
    { additionalProperties: false },
  ),
  PromptReply: PromptRecord,
  /** `GET /sessions/:id/prompts`: the queued ones and the newest decided, oldest first. */
  PromptList: Type.Array(PromptRecord),
  /** `DELETE /sessions/:id/prompts/:promptId`. */
  PromptParams: Type.Object({ id: Type.String({ pattern: SESSION_NAME_PATTERN }), promptId: Type.String({ pattern: PROMPT_ID_PATTERN }) }),
};
