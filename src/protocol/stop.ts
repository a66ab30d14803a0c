/**
 * Why an agent stopped, as the wire carries it (docs/api.md "Stops"): the kinds, the limit on the
 * agent's words, the shape. Plain constants and types, so the running code and the schemas share
 * them without loading TypeBox. The kinds are the agent-state machine's (a machine imports
 * nothing above it); the schema (frames.schemas.ts) is bound to `Stop`; what each kind means is
 * stop-meanings.ts's table.
 */
import type { StopKind } from '../machines/agent-state.machine.js';

/** The turn ended; a usage limit; an API error the agent gave up on; the agent's process ended. */
export { STOP_KINDS, type StopKind } from '../machines/agent-state.machine.js';

/** The agent's own words in a stop are cut to this many characters. */
export const MAX_STOP_MESSAGE_CHARS = 300;

/** Why the agent of a session stopped: beside its state, like an ask. */
export interface Stop {
  /** Never reused: one per stop (a second report of the same stop keeps it). */
  readonly id: string;
  readonly kind: StopKind;
  /** The agent's kind (`pi`, `claude`, `codex`, ...). */
  readonly agent: string;
  /** The agent's own words, cut to MAX_STOP_MESSAGE_CHARS. */
  readonly message: string;
  /** When it stopped, ISO 8601. */
  readonly stoppedAt: string;
  /** A usage limit's reset, ISO 8601, when the agent says. */
  readonly resetsAt?: string;
  /** Which limit (`five_hour`, `seven_day`, ...), when the agent says. */
  readonly limit?: string;
  /** An exited agent's exit code, when it exited by itself. */
  readonly exitCode?: number;
  /** The signal that ended an exited agent (`SIGKILL`), when one did. */
  readonly signal?: string;
}
