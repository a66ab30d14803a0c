/**
 * A session's own git worktree: made for it (a new branch, or an existing one checked out
 * nowhere else) in a folder of its own outside the repository, and removed again only when that
 * loses nothing, or when asked to by force (docs/api.md "Worktrees and changes").
 *
 * Invariants:
 * - A worktree that cannot be made leaves nothing behind: no folder, no branch, no git
 *   bookkeeping (`undo` takes back exactly what this call made, and a failure runs it).
 * - The folder is `<root>/<repo name>-<hash>/<branch>` and never inside the repository's tree.
 * - Nothing is removed that holds uncommitted changes or unpushed commits unless `force` says so.
 */
import { mkdir, realpath, rm, rmdir, stat } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { DomainError } from '../errors.js';
import { isInside } from '../files.js';
import type { SessionWorktree } from '../machines/session.machine.js';
import { gitFailed, nulFields, runGit } from './exec.js';
import { branchExists, checkBranchName, mustGit, repositoryAt, resolveCommit, worktreeFolder, worktreesOf } from './repository.js';

export interface WorktreeRequest {
  /** A directory in the repository (the session's `cwd`). */
  readonly repoDir: string;
  readonly branch: string;
  /** The ref a new branch starts from; HEAD of `repoDir` when absent. */
  readonly from?: string;
  /** Where worktrees go (`[worktrees] dir`, or `worktrees/` in the data dir). */
  readonly root: string;
  /** Whether a session works in that folder already (an existing worktree is then not shared). */
  readonly inUse: (path: string) => boolean;
}

export interface MadeWorktree {
  readonly worktree: SessionWorktree;
  /** Takes back what was made (the folder, the new branch); nothing for a worktree found in place. */
  undo(): Promise<void>;
}

const conflict = (message: string) => new DomainError('worktree-conflict', message);
const exists = (path: string) =>
  stat(path).then(
    () => true,
    () => false,
  );

/** Whether two paths name the same folder (also through a symlink in either). */
async function samePath(a: string, b: string): Promise<boolean> {
  if (resolve(a) === resolve(b)) return true;
  const [ra, rb] = await Promise.all([realpath(a).catch(() => null), realpath(b).catch(() => null)]);
  return ra !== null && ra === rb;
}

/** Makes (or finds in its place) the worktree of `branch`; refusals change nothing. */
export async function makeWorktree(req: WorktreeRequest): Promise<MadeWorktree> {
  const repo = await repositoryAt(req.repoDir);
  if (!repo)
    throw new DomainError('invalid', `${JSON.stringify(req.repoDir)} is not in a git repository with a working tree`, { field: 'cwd' });
  await checkBranchName(repo.top, req.branch, 'worktree/branch');
  const worktrees = await worktreesOf(repo.top);
  const main = worktrees[0]?.path ?? repo.top;
  const path = resolve(worktreeFolder(req.root, repo), req.branch);
  // Judged by real paths too: a root reached through a symlink into the repository is inside it.
  const realPath = resolve(worktreeFolder(await realExisting(req.root), repo), req.branch);
  for (const tree of [repo.top, main])
    if (isInside(path, tree) || isInside(realPath, tree))
      throw new DomainError(
        'invalid',
        `the worktree folder ${path} would be inside the repository ${tree}: set [worktrees] dir elsewhere`,
        { field: 'worktree' },
      );
  const facts = (base: string, newBranch: boolean): SessionWorktree => ({ repo: main, branch: req.branch, path, base, newBranch });
  const ref = `refs/heads/${req.branch}`;
  if (await branchExists(repo.top, req.branch)) {
    if (req.from !== undefined) throw conflict(`branch ${req.branch} exists already: leave out "from" to work on it, or name a new branch`);
    const holder = worktrees.find((w) => w.branch === ref);
    if (holder && (await samePath(holder.path, path))) {
      // Its worktree from an earlier session, kept when that session was deleted: taken up again.
      if (req.inUse(path)) throw conflict(`a session works in ${path} already`);
      if (!(await exists(path)))
        throw conflict(`the worktree ${path} of branch ${req.branch} is missing: run "git worktree prune" in ${main}`);
      if (holder.head === null) throw conflict(`branch ${req.branch} has no commit`);
      return { worktree: facts(holder.head, false), undo: () => Promise.resolve() };
    }
    if (holder) throw conflict(`branch ${req.branch} is checked out at ${holder.path}`);
    const base = await resolveCommit(repo.top, ref, 'worktree/branch');
    if (base === null) throw conflict(`branch ${req.branch} has no commit`);
    return add(repo.top, path, req.root, ['worktree', 'add', '--', path, req.branch], facts(base, false));
  }
  const from = req.from ?? 'HEAD';
  const base = await resolveCommit(req.repoDir, from, 'worktree/from');
  if (base === null) {
    const why = req.from === undefined ? 'the repository has no commit yet' : `${JSON.stringify(from.slice(0, 80))} names no commit`;
    throw new DomainError('invalid', why, { field: 'worktree/from' });
  }
  return add(repo.top, path, req.root, ['worktree', 'add', '-b', req.branch, '--', path, base], facts(base, true));
}

/**
 * Runs `git worktree add` into a folder claimed first (made empty, exclusively: a second request
 * for the same branch meets it and is refused having touched nothing), so `undo` only ever removes
 * what this call made. On any failure it takes back whatever it left.
 */
async function add(top: string, path: string, root: string, args: string[], worktree: SessionWorktree): Promise<MadeWorktree> {
  const made = await missingAncestor(path);
  await mkdir(root, { recursive: true, mode: 0o700 });
  await mkdir(dirname(path), { recursive: true });
  try {
    await mkdir(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    throw conflict(`${path} exists already`);
  }
  const undo = async () => {
    await runGit(top, ['worktree', 'remove', '--force', '--', path]).catch(() => undefined);
    await rm(path, { recursive: true, force: true });
    await runGit(top, ['worktree', 'prune']).catch(() => undefined);
    // git makes a new branch before it checks it out, and leaves it when the checkout fails.
    if (worktree.newBranch) await deleteBranchAt(top, worktree.branch, worktree.base);
    await removeEmptyFolders(dirname(path), made ?? root);
  };
  try {
    const result = await runGit(top, args, { timeoutMs: 120_000 });
    if (result.code !== 0) {
      const said = result.stderr
        .split('\n')
        .pop()!
        .replace(/^fatal: /, '');
      if (/already (checked out|used by worktree)|already exists/.test(result.stderr)) throw conflict(said);
      throw gitFailed(args, result);
    }
  } catch (err) {
    await undo().catch(() => undefined);
    throw err;
  }
  return { worktree, undo };
}

/** Deletes a branch tether made, only while it still points where tether made it. */
async function deleteBranchAt(top: string, branch: string, base: string): Promise<void> {
  await runGit(top, ['update-ref', '-d', `refs/heads/${branch}`, base]).catch(() => undefined);
}

/** `path` with its existing part resolved to its real path. */
async function realExisting(path: string): Promise<string> {
  for (let p = resolve(path); ; p = dirname(p)) {
    const real = await realpath(p).catch(() => null);
    if (real !== null) return join(real, relative(p, resolve(path)));
    if (p === dirname(p)) return resolve(path);
  }
}

/** The outermost folder of `path` that does not exist yet (what making it creates), or null. */
async function missingAncestor(path: string): Promise<string | null> {
  let missing: string | null = null;
  for (let p = path; p !== dirname(p) && !(await exists(p)); p = dirname(p)) missing = p;
  return missing;
}

/** Removes empty folders from `from` up to and including `upTo` (stops at the first that is not empty). */
async function removeEmptyFolders(from: string, upTo: string): Promise<void> {
  for (let p = from; isInside(p, upTo); p = dirname(p)) {
    try {
      await rmdir(p);
    } catch {
      return;
    }
    if (p === upTo) return;
  }
}

/** What removing a worktree (and its branch, when tether made it) would lose. */
export interface WorktreeLosses {
  /** Changed and untracked paths (at most 20 named), and how many there are. */
  readonly uncommitted: readonly string[];
  readonly uncommittedCount: number;
  /** Commits on the branch not on its upstream (with none: on no other branch, remote branch or tag). */
  readonly unpushed: number;
  /** What the commits were compared with: the upstream's name, or null. */
  readonly upstream: string | null;
}

/** Most uncommitted paths named in a refusal. */
const NAMED_PATHS = 20;

export async function worktreeLosses(worktree: SessionWorktree): Promise<WorktreeLosses> {
  let uncommitted: string[] = [];
  if (await exists(worktree.path)) {
    const result = await runGit(worktree.path, ['status', '--porcelain=v1', '-z', '--untracked-files=normal']);
    if (result.code !== 0) throw gitFailed(['status'], result);
    uncommitted = nulFields(result.stdout).flatMap((f) => (/^[ MADRCUT?!]{2} /.test(f) ? [f.slice(3)] : []));
  }
  let unpushed = 0;
  let upstream: string | null = null;
  if (worktree.newBranch && (await branchExists(worktree.repo, worktree.branch))) {
    const ref = `refs/heads/${worktree.branch}`;
    const up = await runGit(worktree.repo, ['for-each-ref', '--format=%(upstream)', '--', ref]);
    upstream = up.code === 0 && up.stdout.toString('utf8').trim() !== '' ? up.stdout.toString('utf8').trim() : null;
    const args =
      upstream !== null
        ? ['rev-list', '--count', ref, '--not', upstream]
        : ['rev-list', '--count', ref, '--not', `--exclude=${worktree.branch}`, '--branches', '--remotes', '--tags'];
    const count = await runGit(worktree.repo, args);
    if (count.code !== 0) throw gitFailed(args, count);
    unpushed = Number(count.stdout.toString('utf8').trim()) || 0;
  }
  return { uncommitted: uncommitted.slice(0, NAMED_PATHS), uncommittedCount: uncommitted.length, unpushed, upstream };
}

/** The refusal that says what removing it would lose; null when it loses nothing. */
export function lossesRefusal(worktree: SessionWorktree, losses: WorktreeLosses): DomainError | null {
  const parts: string[] = [];
  if (losses.uncommittedCount > 0) {
    const more =
      losses.uncommittedCount > losses.uncommitted.length ? `, and ${losses.uncommittedCount - losses.uncommitted.length} more` : '';
    parts.push(
      `${losses.uncommittedCount} uncommitted change${losses.uncommittedCount === 1 ? '' : 's'} (${losses.uncommitted.join(', ')}${more})`,
    );
  }
  if (losses.unpushed > 0)
    parts.push(
      `${losses.unpushed} commit${losses.unpushed === 1 ? '' : 's'} on branch ${worktree.branch} ${losses.upstream !== null ? `not on ${losses.upstream}` : 'on no other branch, remote branch or tag'}`,
    );
  if (parts.length === 0) return null;
  return new DomainError(
    'work-would-be-lost',
    `removing the worktree ${worktree.path} would lose ${parts.join(' and ')}: pass force=true to remove it anyway`,
    {
      extra: { uncommitted: losses.uncommitted, uncommittedCount: losses.uncommittedCount, unpushedCommits: losses.unpushed },
    },
  );
}

/**
 * Removes the worktree and, when tether made it, its branch. Without `force`, git itself refuses a
 * worktree that holds changes (a change made since the losses were read), and the answer says so.
 */
export async function removeWorktree(worktree: SessionWorktree, root: string, force: boolean): Promise<void> {
  const top = worktree.repo;
  if (await exists(worktree.path)) {
    const args = ['worktree', 'remove', ...(force ? ['--force', '--force'] : []), '--', worktree.path];
    const result = await runGit(top, args, { timeoutMs: 120_000 });
    if (result.code !== 0) {
      if (!force)
        throw new DomainError(
          'work-would-be-lost',
          `git would not remove the worktree ${worktree.path} (${result.stderr.split('\n')[0]?.replace(/^fatal: /, '') ?? ''}): pass force=true to remove it anyway`,
        );
      throw gitFailed(args, result);
    }
  }
  await mustGit(top, ['worktree', 'prune']);
  if (worktree.newBranch && (await branchExists(top, worktree.branch))) await mustGit(top, ['branch', '-D', '--', worktree.branch]);
  await removeEmptyFolders(dirname(worktree.path), root);
}
