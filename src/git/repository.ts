/**
 * Facts about a git repository, asked of git: where a directory's repository is, its worktrees,
 * whether a branch name is one git takes, what commit a ref names.
 *
 * Invariant: nothing a user typed reaches git where git could read it as an option: a name or
 * ref starting with `-` is refused before git sees it, branch names pass
 * `git check-ref-format --branch` (and must come back unchanged: `@{-1}` names another branch),
 * and paths follow `--`.
 */
import { createHash } from 'node:crypto';
import { realpath } from 'node:fs/promises';
import { basename, dirname, resolve } from 'node:path';
import { DomainError } from '../errors.js';
import { gitFailed, gitOutput, nulFields, runGit } from './exec.js';

/** Longest branch name tether takes, in characters. */
export const MAX_BRANCH_CHARS = 200;

export interface Repository {
  /** The top of the working tree the directory is in. */
  readonly top: string;
  /** The repository's own git directory, shared by its worktrees (real path). */
  readonly commonDir: string;
}

/** The repository `dir` is in, or null when it is in none (or only in a bare one, or inside `.git`). */
export async function repositoryAt(dir: string): Promise<Repository | null> {
  const result = await runGit(dir, ['rev-parse', '--show-toplevel', '--git-common-dir']);
  if (result.code !== 0) return null;
  const [top, common] = result.stdout.toString('utf8').replace(/\n$/, '').split('\n');
  if (!top || !common) return null;
  return { top, commonDir: await realpath(resolve(dir, common)) };
}

/**
 * The folder of this repository's worktrees under `root`: the repository's name and a short
 * hash of its git directory (`webapp-1a2b3c4d5e`), so two repositories of the same name never share one.
 */
export function worktreeFolder(root: string, repo: Repository): string {
  const owner = basename(repo.commonDir) === '.git' ? basename(dirname(repo.commonDir)) : basename(repo.top);
  const name =
    owner
      .replace(/\.git$/, '')
      .replace(/[^A-Za-z0-9._-]/g, '-')
      .replace(/^[.-]+/, '')
      .slice(0, 40) || 'repo';
  const hash = createHash('sha256').update(repo.commonDir).digest('hex').slice(0, 10);
  return resolve(root, `${name}-${hash}`);
}

/** A worktree of the repository, as `git worktree list` tells it. */
export interface WorktreeEntry {
  readonly path: string;
  /** Its HEAD commit; null for a bare entry or an unborn branch. */
  readonly head: string | null;
  /** `refs/heads/<name>` it has checked out; null when detached or bare. */
  readonly branch: string | null;
}

/** Every worktree of the repository `dir` is in, the main one first. */
export async function worktreesOf(dir: string): Promise<WorktreeEntry[]> {
  const nul = await runGit(dir, ['worktree', 'list', '--porcelain', '-z']);
  // git before 2.36 has no -z here: its lines then (a folder name holding a newline is not told right).
  const fields =
    nul.code === 0 ? nulFields(nul.stdout) : (await gitOutput(dir, ['worktree', 'list', '--porcelain'])).toString('utf8').split('\n');
  const out: WorktreeEntry[] = [];
  let current: { path: string; head: string | null; branch: string | null } | null = null;
  for (const field of fields) {
    if (field.startsWith('worktree ')) {
      if (current) out.push(current);
      current = { path: field.slice('worktree '.length), head: null, branch: null };
    } else if (current && field.startsWith('HEAD ')) current.head = field.slice(5);
    else if (current && field.startsWith('branch ')) current.branch = field.slice(7);
  }
  if (current) out.push(current);
  return out;
}

/** Refuses what could be read as an option before git sees it. */
function refuseOptionLike(value: string, field: string): void {
  if (value.startsWith('-')) throw new DomainError('invalid', `${JSON.stringify(value.slice(0, 80))} must not start with "-"`, { field });
}

/** Checks a new or existing branch's name with git's own rule; the refusal names it. */
export async function checkBranchName(dir: string, branch: string, field: string): Promise<void> {
  refuseOptionLike(branch, field);
  const shown = JSON.stringify(branch.slice(0, 80));
  if ([...branch].length > MAX_BRANCH_CHARS)
    throw new DomainError('invalid', `${shown}… is longer than ${MAX_BRANCH_CHARS} characters`, { field });
  const result = await runGit(dir, ['check-ref-format', '--branch', branch]);
  // `--branch` also expands `@{-1}` and the like: only a name that comes back as it went is one
  // (and not `@`, which git takes but every revision reads as HEAD).
  if (result.code !== 0 || result.stdout.toString('utf8').replace(/\n$/, '') !== branch || branch === '@')
    throw new DomainError('invalid', `${shown} is not a branch name git accepts`, { field });
}

/** The commit `ref` names in `dir`'s repository, or null when it names none. */
export async function resolveCommit(dir: string, ref: string, field: string): Promise<string | null> {
  refuseOptionLike(ref, field);
  if (ref === '' || ref.includes('\0')) return null;
  const result = await runGit(dir, ['rev-parse', '--verify', '--quiet', `${ref}^{commit}`]);
  if (result.code !== 0) return null;
  return result.stdout.toString('utf8').trim();
}

/** Whether `refs/heads/<branch>` exists. */
export async function branchExists(dir: string, branch: string): Promise<boolean> {
  const result = await runGit(dir, ['rev-parse', '--verify', '--quiet', `refs/heads/${branch}`]);
  return result.code === 0;
}

/** Runs a git command that must succeed; its failure is `git-unavailable` with git's words. */
export async function mustGit(dir: string, args: readonly string[]): Promise<void> {
  const result = await runGit(dir, args, { timeoutMs: 120_000 });
  if (result.code !== 0) throw gitFailed(args, result);
}
