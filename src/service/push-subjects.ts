/**
 * The session as push names it (docs/push.md): in an alert, its name and description, its agent
 * by label and what the agent asks while it waits; on a Live Activity, its name and its agent's
 * label. A session that is gone is named by nothing (null).
 */
import type { SessionLabel } from '../push/push.service.js';

/** A session's name, description and configured agent. */
export interface SessionMeta {
  readonly name: string;
  readonly description?: string;
  readonly agent: string;
}

export interface PushSubjectsDeps {
  /** The session's meta, or null when it is gone. */
  readonly describe: (id: string) => Promise<SessionMeta | null>;
  /** How titles name a configured agent. */
  readonly label: (agent: string) => string;
  /** What the session's agent asks while it waits, or null. */
  readonly asks: (id: string) => string | null;
}

export interface PushSubjects {
  readonly alert: (id: string) => Promise<(SessionMeta & SessionLabel) | null>;
  readonly activity: (id: string) => Promise<{ name: string; agentLabel: string } | null>;
}

export function pushSubjects(deps: PushSubjectsDeps): PushSubjects {
  return {
    alert: async (id) => {
      const meta = await deps.describe(id);
      if (meta === null) return null;
      const asks = deps.asks(id);
      return { ...meta, agentLabel: deps.label(meta.agent), ...(asks !== null ? { asks } : {}) };
    },
    activity: async (id) => {
      const meta = await deps.describe(id);
      if (meta === null) return null;
      return { name: meta.name, agentLabel: deps.label(meta.agent) };
    },
  };
}
