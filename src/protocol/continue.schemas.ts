/**
 * A session's scheduled continue (docs/api.md "Continue") as a TypeBox schema: what the session
 * list, `GET /sessions/:id`, the `state` frames and the session's tmux option carry. Its type is
 * the continue machine's `ContinueSchedule` (a machine imports nothing above it), bound below, so
 * a field changed in one place alone fails to compile; the generated check is continue.checks.ts
 * (`npm run schemas`), with which the tmux option is read back.
 */
import { Type, type Static } from 'typebox';
import { CONTINUE_STATUSES, type ContinueSchedule as MachineSchedule } from './continue.js';
import type { Holds, Same } from './same-type.js';

/** A session's scheduled continue, as the answers, the frames and tmux carry it. */
export const ContinueSchedule = Type.Object({
  id: Type.String({ description: 'never reused' }),
  at: Type.String({ description: 'when it is (or was) due, ISO 8601' }),
  text: Type.String({ description: 'what it types, then Enter' }),
  by: Type.String({ description: "the device's token name that scheduled it" }),
  stopId: Type.Union([Type.String(), Type.Null()], { description: 'the stop it answers' }),
  status: Type.Enum(CONTINUE_STATUSES),
  reason: Type.Optional(Type.String({ description: 'why it was skipped' })),
  decidedAt: Type.Optional(Type.String({ description: 'when it was typed, skipped or cancelled' })),
});

/**
 * The schema's type is the continue machine's: this fails to compile otherwise.
 * @typecheck (nothing imports it: knip.jsonc)
 */
export type ContinueScheduleIsTheMachines = Holds<Same<Static<typeof ContinueSchedule>, MachineSchedule>>;
