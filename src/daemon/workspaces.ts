/**
 * Worktrees and changes, wired (docs/api.md "Worktrees and changes"): where worktrees go, where
 * each session works (tmux's options, else its record), and the changes routes. Part of the
 * composition root: it only connects parts made elsewhere.
 */
import type { FastifyInstance } from 'fastify';
import type { SidecarSystem } from '../actors/system.js';
import type { TetherConfig } from '../config/schema.js';
import type { Logger } from '../log.js';
import type { SessionRecords } from '../restore/records.js';
import { Workspaces } from '../service/workspaces/workspaces.service.js';
import { worktreesInUse } from '../service/workspaces/worktree-session.js';
import { sessionWorkspace } from '../service/workspaces/session-workspace.js';
import { worktreesRoot } from '../config/data-layout.js';
import type { TmuxCli } from '../tmux/exec.js';
import { changesRoutes } from '../transport/routes/changes.routes.js';

export interface WorkspacesWiring {
  readonly config: TetherConfig;
  readonly dataDir: string;
  readonly cli: TmuxCli;
  readonly system: SidecarSystem;
  readonly records: SessionRecords;
  /** The sessions that could not be restored (they keep their record). */
  readonly isUnrestorable: (id: string) => boolean;
  readonly log: Logger;
}

export function makeWorkspaces(deps: WorkspacesWiring): { service: Workspaces; plugin: (app: FastifyInstance) => Promise<void> } {
  const service = new Workspaces({
    root: worktreesRoot(deps.config.worktrees.dir, deps.dataDir),
    workspace: (id) => sessionWorkspace(deps, id),
    worktreesInUse: () => worktreesInUse(deps.cli, (command) => deps.system.queryTmux(command)),
    now: Date.now,
    log: deps.log,
  });
  return { service, plugin: async (app) => void (await app.register(changesRoutes, { changes: service })) };
}
