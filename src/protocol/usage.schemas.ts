/**
 * An agent's usage windows (docs/api.md "Usage") as TypeBox schemas, bound to the types of
 * usage.ts: the session list's, `GET /sessions/:id`'s and the `state` frames' `usage`, and
 * `GET /usage`'s entries.
 */
import { Type, type Static } from 'typebox';
import type { Holds, Same } from './same-type.js';
import type { AgentUsage as AgentUsageType, UsageWindow as UsageWindowType } from './usage.js';

export const UsageWindow = Type.Object({
  name: Type.String(),
  usedPercent: Type.Number({ minimum: 0, maximum: 100 }),
  resetsAt: Type.Optional(Type.String({ description: 'ISO 8601' })),
});

export const AgentUsage = Type.Object({
  agent: Type.String({ description: "the agent's kind" }),
  windows: Type.Array(UsageWindow),
  binding: Type.Union([Type.String(), Type.Null()], { description: 'the window that stops the agent first' }),
  observedAt: Type.String({ description: 'ISO 8601' }),
});

/**
 * The schemas' types are usage.ts's: this fails to compile otherwise.
 * @typecheck (nothing imports it: knip.jsonc)
 */
export type UsageSchemasAreTheTypes = [
  Holds<Same<Static<typeof UsageWindow>, UsageWindowType>>,
  Holds<Same<Static<typeof AgentUsage>, AgentUsageType>>,
];
