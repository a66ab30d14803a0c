/**
 * Where a session works, for its worktree and changes (docs/api.md "Worktrees and changes"): what
 * tmux's options say of a tether session it holds, else, for a session being restored or one that
 * could not be restored, what its record says. Any other name is `session-not-found`.
 */
import type { SidecarSystem } from '../../actors/system.js';
import { DomainError } from '../../errors.js';
import { isValidSessionName } from '../../protocol/session-name.js';
import type { SessionRecords } from '../../restore/records.js';
import type { TmuxCli } from '../../tmux/exec.js';
import { listSessions } from '../../tmux/sessions/session-list.js';
import type { Workspace } from './workspaces.service.js';

export interface SessionWorkspaceDeps {
  readonly cli: TmuxCli;
  readonly system: Pick<SidecarSystem, 'hasSession' | 'queryTmux'>;
  readonly records: Pick<SessionRecords, 'read'>;
  /** The sessions that could not be restored (they keep their record). */
  readonly isUnrestorable: (id: string) => boolean;
}

export async function sessionWorkspace(deps: SessionWorkspaceDeps, id: string): Promise<Workspace> {
  const missing = new DomainError('session-not-found', `no session named "${id}"`);
  if (!isValidSessionName(id)) throw missing;
  const info = (await listSessions(deps.cli, { query: (command) => deps.system.queryTmux(command) })).find(
    (s) => s.name === id && s.isTether,
  );
  if (info) return { cwd: info.cwd, worktree: info.worktree };
  // Being restored, or not restorable: its record says where it worked.
  const record = deps.system.hasSession(id) || deps.isUnrestorable(id) ? deps.records.read(id) : null;
  if (!record) throw missing;
  return { cwd: record.cwd, worktree: record.worktree ?? null };
}
