/**
 * What the sidecar tells its listeners about its sessions: one ended (its actor is gone) or its
 * agent exited, the final state it ended in, its metadata changed, something its human should
 * hear about. It follows every session actor of the root to tell the first three.
 *
 * Invariant: each is told once per occurrence, to the listeners present at the time.
 */
import type { Actor } from 'xstate';
import type { Logger } from '../log.js';
import type { sidecarMachine } from '../machines/sidecar.machine.js';
import type { SessionAttention } from './attention.js';

/** The final states of a session actor. */
export type SessionFinal = 'ended' | 'unrestorable' | 'failed';

/** Whether a session snapshot's agent pane is not running an agent: exited, or being respawned. */
export function paneExited(s: { matches(value: unknown): boolean }): boolean {
  return s.matches({ running: { pane: 'exited' } }) || s.matches({ running: { pane: 'respawning' } });
}

export class SidecarNews {
  private readonly metaListeners = new Set<(id: string) => void>();
  private readonly endedListeners = new Set<(id: string, why: 'deleted' | 'exited') => void>();
  private readonly finalListeners = new Set<(id: string, final: SessionFinal) => void>();
  private readonly attentionListeners = new Set<(id: string, attention: SessionAttention) => void>();

  constructor(private readonly log: Logger) {}

  /**
   * Calls `listener` when a session's actor is gone (deleted, killed from a shell: `deleted`) or
   * its agent exited (`exited`; the session stays, and its agent may be respawned). Returns the
   * unsubscribe.
   */
  onSessionEnded(listener: (id: string, why: 'deleted' | 'exited') => void): () => void {
    this.endedListeners.add(listener);
    return () => this.endedListeners.delete(listener);
  }

  /**
   * Calls `listener` with the final state a session actor ended in: `ended` (deleted, killed on
   * purpose, or lost with restoring off), `unrestorable`, or `failed` (its creation failed).
   */
  onSessionFinal(listener: (id: string, final: SessionFinal) => void): () => void {
    this.finalListeners.add(listener);
    return () => this.finalListeners.delete(listener);
  }

  /**
   * Calls `listener` once per occurrence of something a session's human should hear about: its
   * agent exited (with the status or signal), or it could not be restored (with the reason).
   */
  onAttention(listener: (id: string, attention: SessionAttention) => void): () => void {
    this.attentionListeners.add(listener);
    return () => this.attentionListeners.delete(listener);
  }

  /** Tells the attention listeners. */
  attention(id: string, attention: SessionAttention): void {
    for (const l of [...this.attentionListeners]) l(id, attention);
  }

  /** A session's metadata changed: tells the meta listeners. */
  metaChanged(id: string): void {
    for (const l of [...this.metaListeners]) l(id);
  }

  onMetaChanged(listener: (id: string) => void): () => void {
    this.metaListeners.add(listener);
    return () => this.metaListeners.delete(listener);
  }

  /** Follows the root's session actors: their ends, finals, exits and pane changes. */
  watch(actor: Actor<typeof sidecarMachine>): void {
    const watched = new Map<string, { unsubscribe(): void }>();
    const finals = new Map<string, SessionFinal>();
    const emit = (id: string, why: 'deleted' | 'exited') => {
      for (const l of [...this.endedListeners]) l(id, why);
    };
    actor.subscribe({
      next: (snap) => {
        const refs = snap.context.sessions;
        for (const [id, sub] of watched) {
          if (refs[id]) continue;
          sub.unsubscribe();
          watched.delete(id);
          const final = finals.get(id);
          finals.delete(id);
          this.log.debug({ session: id, final: final ?? 'stopped by the sidecar' }, 'session actor ended');
          emit(id, 'deleted');
          if (final) for (const l of [...this.finalListeners]) l(id, final);
        }
        for (const [id, ref] of Object.entries(refs)) {
          if (watched.has(id)) continue;
          const paneOf = (s: ReturnType<typeof ref.getSnapshot>) =>
            paneExited(s) ? `exited:${String(s.context.exitStatus)}` : s.matches('running') ? 'running' : '';
          let exited = ref.getSnapshot().matches({ running: { pane: 'exited' } });
          let pane = paneOf(ref.getSnapshot());
          watched.set(
            id,
            ref.subscribe((s) => {
              if (s.status === 'done') finals.set(id, s.value as SessionFinal);
              const now = s.matches({ running: { pane: 'exited' } });
              if (now && !exited) emit(id, 'exited');
              exited = now;
              // The agent exited, its status became known, or it runs again: session-meta says so.
              const paneNow = paneOf(s);
              if (paneNow !== pane && paneNow !== '' && pane !== '') this.metaChanged(id);
              pane = paneNow;
            }),
          );
        }
      },
      error: () => undefined,
    });
  }
}
