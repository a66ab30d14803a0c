/**
 * The words of an ask on the wire (docs/api.md "Asks"): its kinds and the shape of a choice id.
 * Plain constants, so the running code and the frames' schemas (frames.schemas.ts) share them
 * without loading TypeBox.
 */

/** The kinds of ask: a permission to use a tool, a question with the agent's options. */
export const ASK_KINDS = ['permission', 'question'] as const;
export type AskKind = (typeof ASK_KINDS)[number];
/** A choice's id: a short word, stable for its dialog (`yes`, `no`, `1`). */
export const CHOICE_ID_PATTERN = '^[a-z0-9][a-z0-9-]{0,31}$';
/** The longest ask id a client may send (tether's are UUIDs, 36 characters). */
export const MAX_ASK_ID_CHARS = 64;
