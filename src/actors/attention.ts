/**
 * What a session's human should hear about even when not looking (docs/push.md): its agent
 * exited on its own, or the session could not be brought back after its tmux server was lost.
 * The actors report these; the push trigger decides which are sent.
 *
 * Invariant: each occurrence is told once. An agent's exit is one program's death: the pane's
 * pid and the time tmux says it died (a respawned agent is a new program), told only once its
 * outcome (status or signal) is known, and only when it died while this daemon was watching;
 * a failed restore is told once per reason until the session runs again (the record keeps the
 * reasons told: src/restore/recreate.ts), not each time a retry meets the same reason.
 */
import { outcomeKnown, type PaneState } from '../tmux/pane/pane-watch.js';

/** Something about a session worth a push. */
export type SessionAttention =
  | {
      readonly kind: 'agent-exited';
      /** The exit status, when the agent exited by itself. */
      readonly status: number | null;
      /** The signal that killed it (it crashed, or was killed). */
      readonly signal: number | null;
    }
  | {
      readonly kind: 'unrestorable';
      readonly reason: string;
      /** The session's name and description, from its record (no tmux session exists to read them from). */
      readonly name: string;
      readonly description: string;
    };

/** An error that carries an attention (a restore that failed and marked its record). */
export interface CarriesAttention {
  readonly attention: SessionAttention | null;
}

/** The attention an error carries, if any. */
export function attentionOf(err: unknown): SessionAttention | null {
  if (typeof err !== 'object' || err === null || !('attention' in err)) return null;
  const a = (err as CarriesAttention).attention;
  return a !== null && typeof a === 'object' && typeof a.kind === 'string' ? a : null;
}

/**
 * Decides which pane deaths are told: `observe` returns the attention for a death not told
 * before, or null. `since` (epoch seconds) is when this daemon started watching: a pane found
 * dead that died before it is old news (a restarted daemon does not tell it again). A tmux
 * older than 3.3 gives no death time: a death is told there only when this daemon saw that
 * program run.
 */
export class ExitWitness {
  /** The death last told, per session runtime (a new session of the same name starts afresh). */
  private readonly told = new WeakMap<object, string>();
  /** The program last seen running, per session runtime. */
  private readonly running = new WeakMap<object, number>();

  constructor(private readonly since: number) {}

  observe(session: object, state: PaneState): SessionAttention | null {
    if (state.pid === null) return null;
    if (!state.dead) {
      this.running.set(session, state.pid);
      return null;
    }
    if (!outcomeKnown(state)) return null;
    const recent = state.deadTime !== null ? state.deadTime >= this.since : this.running.get(session) === state.pid;
    if (!recent) return null;
    const key = `${state.pid}@${state.deadTime ?? ''}`;
    if (this.told.get(session) === key) return null;
    this.told.set(session, key);
    return { kind: 'agent-exited', status: state.status, signal: state.signal };
  }
}
