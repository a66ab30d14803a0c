/**
 * What a deleted session leaves behind in a service (its continue, its limit-reset watch) is
 * forgotten when it is deleted; a session whose agent only exited keeps it (a respawn may use it).
 */
import type { SidecarSystem } from '../actors/system.js';

/** Calls every `forget` with the id of each session deleted from now on; resolves the unsubscribe. */
export function forgetDeleted(onSessionEnded: SidecarSystem['onSessionEnded'], ...forget: readonly ((id: string) => void)[]): () => void {
  return onSessionEnded((id, why) => {
    if (why !== 'deleted') return;
    forget.forEach((f) => f(id));
  });
}
