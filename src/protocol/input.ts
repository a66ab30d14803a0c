/**
 * One input to the agent's pane, the same whether it comes as `POST /sessions/:id/input` or as
 * a stream frame: its parsing and rules live here, its schemas and limits beside it in
 * input.schemas.ts (checked by the generated input.checks.ts), and nowhere else (docs/api.md,
 * "Input").
 *
 * Invariant: a message that passes `parseInput` is fully formed (its type's fields, nothing
 * else, within the limits, the NUL rule kept); what is left to refuse is only what needs the
 * session (an unknown key name, a pane that is gone).
 */
import { DomainError } from '../errors.js';
import { CHECKS as GENERATED, InputSchemas } from './input.checks.js';
import type { InputMessage, InputType } from './input.schemas.js';
import { checkOf, type SchemaCheck } from './schema-check.js';

export type { InputMessage, InputType } from './input.schemas.js';
export const INPUT_TYPES = Object.keys(InputSchemas) as InputType[];

/** Why an input was refused: `invalid`, naming the field (a JSON path without the leading slash). */
const refusal = (field: string, reason: string): DomainError => new DomainError('invalid', reason, { field });

const CHECKS = new Map(Object.entries(InputSchemas).map(([type, schema]) => [type, checkOf(GENERATED, schema)]));

/** The check of one input type's schema (the client frames of these types use it too). */
export const inputCheck = (type: InputType): SchemaCheck<InputMessage> => CHECKS.get(type) as SchemaCheck<InputMessage>;

export function isInputType(type: unknown): type is InputType {
  return typeof type === 'string' && CHECKS.has(type);
}

/**
 * The rule no schema states: a paste cannot hold NUL (tmux keeps a paste buffer as a C string);
 * literal `keys` may, since they travel as hex bytes. Null when the message keeps it.
 */
export function inputRuleBroken(message: InputMessage): DomainError | null {
  if (message.type === 'paste' && message.data.includes('\u0000')) return refusal('data', 'a paste must not contain NUL characters');
  return null;
}

/** Checks `value` against its type's schema and the rules; returns it typed or throws the refusal. */
export function parseInput(value: unknown): InputMessage {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw refusal('type', 'an input is one JSON object');
  const type: unknown = (value as { type?: unknown }).type;
  if (!isInputType(type)) throw refusal('type', `must be one of ${INPUT_TYPES.join(', ')}`);
  const check = CHECKS.get(type)!;
  if (!check.Check(value)) {
    const first = [...check.Errors(value)][0];
    const field = first?.instancePath ? first.instancePath.replace(/^\//, '') : type === 'key' ? 'name' : 'data';
    const extra =
      first?.keyword === 'additionalProperties' ? `a "${type}" input takes ${type === 'key' ? '"name"' : '"data"'} and nothing else` : null;
    throw refusal(field, extra ?? first?.message ?? `does not fit a "${type}" input`);
  }
  const message = value;
  const broken = inputRuleBroken(message);
  if (broken) throw broken;
  return message;
}
