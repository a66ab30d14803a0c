/**
 * Real git repositories for tests: made in a temp folder with one commit, worked on by running
 * git itself (argv only, the `GIT_*` environment of the test run left out), and looked at as a
 * user would (`git branch`, `git worktree list`, the files on disk).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';
import { gitEnv } from '../../testkit/git-env.js';

export interface TestRepo {
  /** The repository's working tree (a real path). */
  readonly dir: string;
  /** Runs git in the repository (or in `cwd`); its stdout. */
  git(args: readonly string[], cwd?: string): string;
  /** Writes a file of the working tree, or at an absolute path (folders made as needed). */
  write(path: string, content: string | Buffer): void;
  /** Commits everything with `message`; the new commit. */
  commit(message: string): string;
  /** The local branches' names. */
  branches(): string[];
  /** The worktrees' folders, the main one first. */
  worktrees(): string[];
}

/** A new repository on branch `main` with `README.md` committed, under a fresh temp folder `parent` (made when absent). */
export function makeRepo(parent = mkdtempSync(join(tmpdir(), 'tether-repo-')), name = 'project'): TestRepo {
  const dir = join(realpathSync(parent), name);
  mkdirSync(dir, { recursive: true });
  const git = (args: readonly string[], cwd = dir) =>
    execFileSync('git', [...args], { cwd, env: gitEnv(), encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  const repo: TestRepo = {
    dir,
    git,
    write: (path, content) => {
      const full = isAbsolute(path) ? path : join(dir, path);
      mkdirSync(dirname(full), { recursive: true });
      writeFileSync(full, content);
    },
    commit: (message) => {
      git(['add', '-A']);
      git(['commit', '-q', '-m', message]);
      return git(['rev-parse', 'HEAD']).trim();
    },
    branches: () => git(['for-each-ref', '--format=%(refname:short)', 'refs/heads']).split('\n').filter(Boolean).sort(),
    worktrees: () =>
      git(['worktree', 'list', '--porcelain'])
        .split('\n')
        .filter((l) => l.startsWith('worktree '))
        .map((l) => l.slice('worktree '.length)),
  };
  git(['init', '-q', '-b', 'main']);
  repo.write('README.md', 'hello\n');
  repo.commit('first');
  return repo;
}
