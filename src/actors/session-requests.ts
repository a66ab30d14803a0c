/**
 * A request about one session sent to the sidecar's actors, and the wait for its outcome:
 * create, restore, delete, respawn. Each turns the state the session actor settled in (or a
 * wait that ran out) into what the caller is told: done, or a `DomainError` saying why not.
 *
 * Invariant: a request only sends events and reads snapshots; it never changes a machine's context.
 */
import { waitFor, type Actor } from 'xstate';
import { DomainError } from '../errors.js';
import type { SessionOrigin, SessionWorktree } from '../machines/session.machine.js';
import type { SessionActorRef, sidecarMachine } from '../machines/sidecar.machine.js';
import { sessionExists } from '../tmux/sessions/sessions.js';
import { isPaneStillRunning } from '../tmux/sessions/session-create.js';
import { paneExited } from './sidecar-news.js';

/** The sidecar's root actor, the one each request is sent to. */
type SidecarActor = Actor<typeof sidecarMachine>;

/** What a create may ask beyond the name and origin. */
export interface CreateOptions {
  readonly project?: string;
  readonly cwd?: string;
  readonly agent?: string;
  readonly worktree?: SessionWorktree;
}

/** How long a create may take before the caller is told it failed (tmux under heavy load). */
export const CREATE_TIMEOUT_MS = 30_000;

/** How long a respawn may take: tmux starting the agent, and the link seeing it. */
export const RESPAWN_TIMEOUT_MS = 15_000;

/** How long a delete may take until the session's actor is gone. */
const DELETE_TIMEOUT_MS = 15_000;

/** Creation failed for a reason other than the name being taken: tmux's side (`tmux-unavailable`). */
const notCreated = (id: string, why: string): DomainError =>
  new DomainError('tmux-unavailable', `session ${id} could not be created: ${why}`);

/** A respawn asked of a session whose agent runs (or is being started). */
const notExited = (id: string): DomainError =>
  new DomainError('session-running', `the agent of session ${id} is running: only an exited agent is respawned`);

/** The agent could not be started again: tmux's side (`tmux-unavailable`). */
const notRespawned = (id: string, why: string): DomainError =>
  new DomainError('tmux-unavailable', `the agent of session ${id} could not be respawned: ${why}`);

const refOf = (actor: SidecarActor, id: string): SessionActorRef | undefined => actor.getSnapshot().context.sessions[id];

/**
 * Creates a tmux session running the agent and waits until its actor runs it. A name tmux
 * holds already (a session tether has no actor for) is refused by tmux's own `new-session`
 * (`duplicate session`, which stops the rest of its command list): no look of its own first,
 * a tmux process less on every create.
 */
export async function requestCreate(actor: SidecarActor, id: string, origin: SessionOrigin, options: CreateOptions): Promise<void> {
  if (refOf(actor, id)) throw sessionExists(id);
  actor.send({
    type: 'session.create',
    id,
    origin,
    ...(options.project !== undefined ? { project: options.project } : {}),
    ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
    ...(options.agent !== undefined ? { agent: options.agent } : {}),
    ...(options.worktree !== undefined ? { worktree: options.worktree } : {}),
  });
  const ref = refOf(actor, id);
  if (!ref) throw notCreated(id, 'the sidecar is not accepting sessions');
  // Created: running, or already being deleted because a DELETE came in meanwhile.
  const done = await waitFor(ref, (s) => s.matches('running') || s.matches('deleting') || s.status === 'done', {
    timeout: CREATE_TIMEOUT_MS,
  }).catch(() => {
    throw notCreated(id, `tmux did not finish creating it within ${CREATE_TIMEOUT_MS / 1000} s`);
  });
  if (done.status === 'done' && !(done.context.deleteRequested !== null && done.context.lastError === null)) {
    const why = done.context.lastError ?? 'unknown error';
    if (/duplicate session|already exists/i.test(why)) throw sessionExists(id);
    throw notCreated(id, why);
  }
}

/**
 * Brings back a session whose record outlived its tmux server (found at start-up); resolves
 * once it runs again, or rejects with why it could not be restored.
 */
export async function requestRestore(actor: SidecarActor, id: string): Promise<void> {
  if (refOf(actor, id)) return;
  actor.send({ type: 'session.restore', id });
  const ref = refOf(actor, id);
  if (!ref) throw notCreated(id, 'the sidecar is not accepting sessions');
  const done = await waitFor(ref, (s) => s.matches('running') || s.status === 'done', { timeout: CREATE_TIMEOUT_MS }).catch(() => {
    throw notCreated(id, `tmux did not finish restoring it within ${CREATE_TIMEOUT_MS / 1000} s`);
  });
  if (done.status === 'done' && done.value === 'unrestorable') throw notCreated(id, done.context.lastError ?? 'unknown error');
}

/** Kills a session (its buffer too unless kept); resolves once its actor is gone, false for an unknown one. */
export async function requestDelete(actor: SidecarActor, id: string, keepBuffer: boolean): Promise<boolean> {
  if (!refOf(actor, id)) return false;
  actor.send({ type: 'session.delete', id, keepBuffer });
  await waitFor(actor, (s) => !s.context.sessions[id], { timeout: DELETE_TIMEOUT_MS });
  return true;
}

/**
 * Starts the exited agent of a session again, in the same pane; resolves once tmux started it
 * and the link saw the pane again (running, or dead already: the new agent exited at once).
 * A session whose agent runs is refused (`session-running`); a respawn already under way
 * is joined. Returns false for an unknown session.
 */
export async function requestRespawn(actor: SidecarActor, id: string): Promise<boolean> {
  const ref = refOf(actor, id);
  if (!ref) return false;
  const before = ref.getSnapshot();
  if (!paneExited(before)) throw notExited(id);
  const errorBefore = before.context.lastError;
  ref.send({ type: 'pane.respawn' });
  const respawning = (s: typeof before) => s.matches({ running: { pane: 'respawning' } });
  const after = await waitFor(ref, (s) => s.status === 'done' || !respawning(s), { timeout: RESPAWN_TIMEOUT_MS }).catch(() => {
    throw notRespawned(id, `tmux did not report the agent's pane within ${RESPAWN_TIMEOUT_MS / 1000} s`);
  });
  if (after.status === 'done' || !after.matches('running')) return false;
  const error = after.context.lastError;
  if (after.matches({ running: { pane: 'exited' } }) && error !== null && error !== errorBefore) {
    if (isPaneStillRunning(error)) throw notExited(id);
    throw notRespawned(id, error);
  }
  return true;
}
