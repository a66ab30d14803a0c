/**
 * The three inputs as TypeBox schemas (docs/api.md "Input"): the source of their types and of
 * the generated checks (input.checks.ts, `npm run schemas`). The running code imports only
 * types from here.
 */
import { Type, type Static } from 'typebox';

/** Longest `keys` / `paste` text, in characters (a transport's size limit may cap it further). */
export const MAX_INPUT_CHARS = 1024 * 1024;
/** Longest key name. */
export const MAX_KEY_NAME_CHARS = 32;

/** The three inputs, each a closed object. */
export const InputSchemas = {
  key: Type.Object({ type: Type.Literal('key'), name: Type.String({ maxLength: MAX_KEY_NAME_CHARS }) }, { additionalProperties: false }),
  keys: Type.Object({ type: Type.Literal('keys'), data: Type.String({ maxLength: MAX_INPUT_CHARS }) }, { additionalProperties: false }),
  paste: Type.Object({ type: Type.Literal('paste'), data: Type.String({ maxLength: MAX_INPUT_CHARS }) }, { additionalProperties: false }),
};
export type InputType = keyof typeof InputSchemas;

/** One input, as a client sends it over REST and WebSocket alike. */
export type InputMessage = Static<typeof InputSchemas.key> | Static<typeof InputSchemas.keys> | Static<typeof InputSchemas.paste>;
