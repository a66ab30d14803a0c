/**
 * The `usage` message of the agent socket (docs/agents.md "Usage"): an agent's account usage
 * windows as pi's tether extension read them from its model API's answers. Decoded here, checked
 * further by the hub like every agent's report (src/agent/hub/usage-book.ts).
 *
 * Invariant: at most MAX_USAGE_WINDOWS windows, each name a short word; numbers are numbers (a
 * percent may be out of range, or null for one that was not a number: the hub decides).
 */
import { bad } from './wire-fields.js';

/** Windows one message may carry. */
export const MAX_USAGE_WINDOWS = 8;
const WINDOW_NAME_RE = /^[a-z0-9_]{1,32}$/;

/** Extension -> daemon: the usage windows an answer of the model API gave (the shape of the adapters' UsageReport). */
export interface UsageMessage {
  readonly type: 'usage';
  readonly windows: readonly { readonly name: string; readonly usedPercent: number; readonly resetsAt: number | null }[];
}

/** Decodes a `usage` message's object. */
export function decodeUsageMessage(o: Record<string, unknown>): UsageMessage {
  const windows = o.windows;
  if (!Array.isArray(windows) || windows.length === 0 || windows.length > MAX_USAGE_WINDOWS)
    throw bad(`windows: must be an array of 1 to ${MAX_USAGE_WINDOWS} windows`);
  return {
    type: 'usage',
    windows: windows.map((w: unknown, i) => {
      if (!w || typeof w !== 'object' || Array.isArray(w)) throw bad(`windows/${i}: must be an object`);
      const { name, usedPercent, resetsAt } = w as Record<string, unknown>;
      if (typeof name !== 'string' || !WINDOW_NAME_RE.test(name)) throw bad(`windows/${i}/name: must be a short word`);
      if (usedPercent !== null && typeof usedPercent !== 'number') throw bad(`windows/${i}/usedPercent: must be a number or null`);
      if (resetsAt !== null && (typeof resetsAt !== 'number' || !Number.isFinite(resetsAt)))
        throw bad(`windows/${i}/resetsAt: must be epoch milliseconds or null`);
      return { name, usedPercent: usedPercent ?? Number.NaN, resetsAt };
    }),
  };
}
