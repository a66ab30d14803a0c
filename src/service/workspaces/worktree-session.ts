/**
 * A new session in a git worktree of its own (docs/api.md "Worktrees and changes"), however it is
 * asked for (`POST /sessions` with `worktree`, through `Workspaces.around`; `tether attach
 * --worktree`): the worktree made, or found in its place, in the repository a directory is in,
 * unless a session works in it already; the session created in it; the worktree taken back when
 * the session cannot be made.
 *
 * Invariant: a refusal, or a session that cannot be made, leaves nothing behind (no folder, no
 * branch tether made, no git administration).
 */
import { makeWorktree } from '../../git/worktree.js';
import type { SessionWorktree } from '../../machines/session.machine.js';
import type { TmuxCli } from '../../tmux/exec.js';
import { listSessions } from '../../tmux/sessions/session-list.js';

export interface WorktreeSessionRequest {
  /** A directory of the repository. */
  readonly repoDir: string;
  readonly branch: string;
  /** The ref a new branch starts from (default HEAD). */
  readonly from?: string;
  /** Where worktrees go (`[worktrees] dir`, or `worktrees/` in the data dir). */
  readonly root: string;
  /** The worktree folders sessions work in now (a worktree is not shared). */
  readonly inUse: () => Promise<ReadonlySet<string>>;
}

/**
 * Makes the worktree of a new session and runs `create` in it (its folder is `worktree.path`);
 * when `create` fails, the worktree is taken back and its error thrown. Refusals (a bad branch
 * name, a worktree in use, an unknown ref) are `DomainError`s and change nothing.
 */
export async function createInWorktree<T>(req: WorktreeSessionRequest, create: (worktree: SessionWorktree) => Promise<T>): Promise<T> {
  const inUse = await req.inUse();
  const made = await makeWorktree({
    repoDir: req.repoDir,
    branch: req.branch,
    ...(req.from !== undefined ? { from: req.from } : {}),
    root: req.root,
    inUse: (path) => inUse.has(path),
  });
  try {
    return await create(made.worktree);
  } catch (err) {
    await made.undo();
    throw err;
  }
}

/** The worktree folders the sessions of this tmux server work in (the listing over `query` when given: no process). */
export async function worktreesInUse(cli: TmuxCli, query?: (command: readonly string[]) => Promise<Buffer>): Promise<ReadonlySet<string>> {
  return new Set((await listSessions(cli, { query: query ?? null })).flatMap((s) => (s.worktree ? [s.worktree.path] : [])));
}
