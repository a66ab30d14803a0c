/**
 * The git layer (src/git/) against real git in temp repositories, without a daemon: what changed
 * in a tree (edits, new, deleted, renamed, binary and untracked files, commits since the base),
 * one file's diff (bounded, binary named and never shown), paths confined to the tree, and a
 * session's worktree made, refused (leaving nothing), taken back when its session cannot be made,
 * weighed for what it holds and removed.
 */
import { existsSync, mkdirSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MAX_DIFF_BYTES, readChanges, readFileDiff } from '../../src/git/changes.js';
import { lossesRefusal, makeWorktree, removeWorktree, worktreeLosses } from '../../src/git/worktree.js';
import { makeRepo, type TestRepo } from '../helpers/git-repo.js';
import { useTempDirs } from '../helpers/temp-dirs.js';
import { domainError } from '../helpers/domain-error.js';
import { silentLogger } from '../../src/log.js';
import { SUMMARY_MIN_INTERVAL_MS, SUMMARY_PACE_MS, SUMMARY_TTL_MS, Workspaces } from '../../src/service/workspaces/workspaces.service.js';
import { createInWorktree } from '../../src/service/workspaces/worktree-session.js';
import { eventually } from '../helpers/tmux.js';
import type { ErrorCode } from '../../src/errors.js';

const tempDir = useTempDirs('tether-git-');

/** Awaits a refusal: a DomainError of `code` whose message says `says`. */
async function expectDomainError(p: Promise<unknown>, code: ErrorCode, says: RegExp): Promise<void> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toEqual(domainError(code));
  expect((err as Error).message).toMatch(says);
}

/** A repository with one commit of five files. */
function seeded(): TestRepo {
  const repo = makeRepo(tempDir());
  repo.write('edit.txt', 'one\ntwo\nthree\n');
  repo.write('gone.txt', 'bye\n');
  repo.write('old-name.txt', Array.from({ length: 40 }, (_, i) => `line ${i}`).join('\n') + '\n');
  repo.write('src/keep.ts', 'export const x = 1;\n');
  repo.write('logo.bin', Buffer.from([0, 1, 2, 3, 0, 255]));
  repo.commit('seed');
  return repo;
}

describe('what changed in a tree', () => {
  it('lists edits, new, deleted, renamed, binary and untracked files with their lines, and the commits since the base', async () => {
    const repo = seeded();
    const base = repo.git(['rev-parse', 'HEAD']).trim();
    // A commit since the base: a new file, committed.
    repo.write('committed.txt', 'a\nb\n');
    const second = repo.commit('add committed.txt');
    // Then, uncommitted: an edit, a deletion, a rename (staged), a binary change, a new untracked file, a staged new file.
    repo.write('edit.txt', 'one\nTWO\nthree\nfour\n');
    rmSync(join(repo.dir, 'gone.txt'));
    repo.git(['mv', 'old-name.txt', 'new-name.txt']);
    repo.write('logo.bin', Buffer.from([0, 9, 9, 9, 0, 255, 7]));
    repo.write('notes/untracked file;$(x).md', 'u1\nu2\nu3\n');
    repo.write('staged.txt', 's\n');
    repo.git(['add', 'staged.txt']);

    const changes = (await readChanges(repo.dir, base))!;
    const byPath = Object.fromEntries(changes.files.map((f) => [f.path, f]));
    expect(byPath).toEqual({
      'committed.txt': { path: 'committed.txt', oldPath: null, status: 'added', added: 2, removed: 0, binary: false },
      'edit.txt': { path: 'edit.txt', oldPath: null, status: 'modified', added: 2, removed: 1, binary: false },
      'gone.txt': { path: 'gone.txt', oldPath: null, status: 'deleted', added: 0, removed: 1, binary: false },
      'new-name.txt': { path: 'new-name.txt', oldPath: 'old-name.txt', status: 'renamed', added: 0, removed: 0, binary: false },
      'logo.bin': { path: 'logo.bin', oldPath: null, status: 'modified', added: null, removed: null, binary: true },
      'notes/untracked file;$(x).md': {
        path: 'notes/untracked file;$(x).md',
        oldPath: null,
        status: 'untracked',
        added: 3,
        removed: 0,
        binary: false,
      },
      'staged.txt': { path: 'staged.txt', oldPath: null, status: 'added', added: 1, removed: 0, binary: false },
    });
    expect(changes.summary).toEqual({ files: 7, added: 8, removed: 2 });
    expect(changes.base).toBe(base);
    expect(changes.head).toBe(second);
    expect(changes.branch).toBe('main');
    expect(changes.commits.map((c) => [c.sha, c.subject, c.author])).toEqual([[second, 'add committed.txt', 'Test']]);
    expect(changes.filesTruncated).toBe(false);
    // Nothing of the repository was touched: the index still stages what it staged, and no untracked file became tracked.
    expect(repo.git(['status', '--porcelain']).split('\n').filter(Boolean).sort()).toEqual(
      ['R  old-name.txt -> new-name.txt', ' M edit.txt', ' D gone.txt', ' M logo.bin', 'A  staged.txt', '?? notes/'].sort(),
    );

    // Against HEAD (no base given): the commit is no change any more, and there are no commits since.
    const sinceHead = (await readChanges(join(repo.dir, 'src'), null))!;
    expect(sinceHead.files.map((f) => f.path).sort()).toEqual(
      ['edit.txt', 'gone.txt', 'logo.bin', 'new-name.txt', 'notes/untracked file;$(x).md', 'staged.txt'].sort(),
    );
    expect(sinceHead.commits).toEqual([]);
    expect(sinceHead.root).toBe(repo.dir);
  });

  it('gives one file its unified diff: edits, renames, untracked files; a binary file is named, never dumped', async () => {
    const repo = seeded();
    repo.write('edit.txt', 'one\nTWO\nthree\n');
    repo.git(['mv', 'old-name.txt', 'new-name.txt']);
    repo.write('new-name.txt', `${Array.from({ length: 40 }, (_, i) => `line ${i}`).join('\n')}\nline 40\n`);
    repo.write('fresh.txt', 'hello\n');
    repo.write('logo.bin', Buffer.from([0, 7, 0, 7]));

    const edit = (await readFileDiff(repo.dir, null, 'edit.txt'))!;
    expect(edit).toMatchObject({ path: 'edit.txt', status: 'modified', binary: false, truncated: false });
    expect(edit.diff).toContain('--- a/edit.txt\n+++ b/edit.txt\n');
    expect(edit.diff).toContain('-two\n+TWO\n');

    // A renamed file by its new or its old name: one diff, from the old path to the new.
    for (const path of ['new-name.txt', 'old-name.txt']) {
      const renamed = (await readFileDiff(repo.dir, null, path))!;
      expect(renamed).toMatchObject({ path: 'new-name.txt', oldPath: 'old-name.txt', status: 'renamed' });
      expect(renamed.diff).toContain('rename from old-name.txt\nrename to new-name.txt\n');
      expect(renamed.diff).toContain('+line 40\n');
    }
    const fresh = (await readFileDiff(repo.dir, null, './fresh.txt'))!;
    expect(fresh).toMatchObject({ path: 'fresh.txt', status: 'untracked' });
    expect(fresh.diff).toContain('--- /dev/null\n+++ b/fresh.txt\n@@ -0,0 +1 @@\n+hello\n');

    expect(await readFileDiff(repo.dir, null, 'logo.bin')).toEqual({
      path: 'logo.bin',
      oldPath: null,
      status: 'modified',
      binary: true,
      diff: null,
      truncated: false,
    });
    // An unchanged file has an empty diff.
    expect(await readFileDiff(repo.dir, null, 'src/keep.ts')).toMatchObject({ status: null, diff: '' });
  });

  it.each([['tab\there.txt'], ['new\nline.txt'], ['-dash.txt'], ['--output=x'], ['ünï cödé ✓.md'], ['*.txt'], ['a;b $(c) #{d}.txt']])(
    'tells a file named %j exactly, and gives its diff',
    async (name) => {
      const repo = seeded();
      repo.write(name, 'first\n');
      repo.write(`tracked-${name}`, 'x\n');
      repo.commit('tracked');
      repo.write(`tracked-${name}`, 'y\n');
      const changes = (await readChanges(repo.dir, null))!;
      expect(changes.files.map((f) => [f.path, f.status, f.added, f.removed])).toEqual([[`tracked-${name}`, 'modified', 1, 1]]);
      repo.write(name, 'second\n');
      expect((await readFileDiff(repo.dir, null, name))!.diff).toMatch(/-first\n\+second\n$/);
      expect(existsSync(join(repo.dir, 'x'))).toBe(false);
    },
  );

  it('cuts a diff at its bound, at a line end, and says so', async () => {
    const repo = seeded();
    const line = `${'x'.repeat(99)}\n`;
    repo.write('huge.txt', line.repeat(Math.ceil((MAX_DIFF_BYTES * 2) / line.length)));
    const diff = (await readFileDiff(repo.dir, null, 'huge.txt'))!;
    expect(diff.truncated).toBe(true);
    expect(Buffer.byteLength(diff.diff!)).toBeLessThanOrEqual(MAX_DIFF_BYTES);
    expect(diff.diff!.endsWith(`+${line}`)).toBe(true);
  });

  it.each([
    ['a parent folder', '../outside.txt'],
    ['a parent folder further in', 'src/../../outside.txt'],
    ['an absolute path', '/etc/passwd'],
    ['a symlinked folder pointing out', 'out-dir/secret.txt'],
    ['a symlink pointing out', 'out-link'],
    ['a dangling symlink pointing out', 'dangling-out'],
    ['an empty path', ''],
    ['the tree itself', '.'],
    ['a NUL', 'edit.txt\u0000x'],
  ])('refuses %s', async (_what, path) => {
    const repo = seeded();
    const outside = tempDir();
    mkdirSync(join(outside, 'd'));
    symlinkSync(join(outside, 'd'), join(repo.dir, 'out-dir'));
    symlinkSync(join(outside, 'secret'), join(repo.dir, 'out-link'));
    symlinkSync('/nonexistent-tether/x', join(repo.dir, 'dangling-out'));
    await expectDomainError(readFileDiff(repo.dir, null, path), 'invalid', /is not a path inside the working tree/);
  });

  it('answers null outside a repository, and ignores the GIT_* environment of the daemon', async () => {
    expect(await readChanges(tempDir(), null)).toBeNull();
    const repo = seeded();
    repo.write('edit.txt', 'changed\n');
    const other = makeRepo(tempDir());
    const saved = { dir: process.env.GIT_DIR, tree: process.env.GIT_WORK_TREE };
    process.env.GIT_DIR = join(other.dir, '.git');
    process.env.GIT_WORK_TREE = other.dir;
    try {
      expect((await readChanges(repo.dir, null))!.files.map((f) => f.path)).toEqual(['edit.txt']);
    } finally {
      for (const [k, v] of [
        ['GIT_DIR', saved.dir],
        ['GIT_WORK_TREE', saved.tree],
      ] as const)
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
    }
  });
});

describe("the list's summary of a tree", () => {
  it('is answered at once from what was computed, computed again in the background once output or time made it stale', async () => {
    const repo = seeded();
    let now = 1_000_000;
    const ws = new Workspaces({
      root: tempDir(),
      workspace: () => Promise.reject(new Error('not asked')),
      worktreesInUse: () => Promise.resolve(new Set()),
      now: () => now,
      log: silentLogger,
    });
    const tree = { cwd: repo.dir, worktree: null };
    expect(ws.summary(tree, null)).toBeNull(); // nothing computed yet: asked, not waited for
    await eventually(() => ws.summary(tree, null) !== null, 15_000, 10, 'the first summary');
    expect(ws.summary(tree, null)).toEqual({ files: 0, added: 0, removed: 0 });
    repo.write('edit.txt', 'changed\n');
    // Cached: no output since, and the clock has not moved.
    expect(ws.summary(tree, null)).toEqual({ files: 0, added: 0, removed: 0 });
    // Output after it was computed makes it stale, computed again no sooner than the minimum interval.
    expect(ws.summary(tree, now)).toEqual({ files: 0, added: 0, removed: 0 });
    now += SUMMARY_MIN_INTERVAL_MS;
    await eventually(() => ws.summary(tree, now - 1)?.files === 1, 15_000, 10, 'the summary after output');
    expect(ws.summary(tree, null)).toEqual({ files: 1, added: 1, removed: 3 });
    // Changed from elsewhere, no output: the time-to-live makes it stale.
    repo.write('new.txt', 'n\n');
    now += SUMMARY_TTL_MS;
    await eventually(() => ws.summary(tree, null)?.files === 2, 15_000, 10, 'the summary after its time to live');
    // A directory in no repository: null.
    const plain = { cwd: tempDir(), worktree: null };
    ws.summary(plain, null);
    now += SUMMARY_TTL_MS;
    await eventually(() => ws.summary(plain, now) === null, 15_000, 10, 'no summary outside git');
  });
});

describe("the list's summaries of many trees", () => {
  it('are computed in turn, begun at least the pace apart, however many are stale at once', async () => {
    const trees = Array.from({ length: 6 }, () => ({ cwd: seeded().dir, worktree: null }));
    const ws = new Workspaces({
      root: tempDir(),
      workspace: () => Promise.reject(new Error('not asked')),
      worktreesInUse: () => Promise.resolve(new Set()),
      now: () => 1_000_000,
      log: silentLogger,
    });
    const asked = performance.now();
    for (const t of trees) expect(ws.summary(t, null)).toBeNull();
    const done = new Map<number, number>();
    await eventually(
      () => {
        trees.forEach((t, i) => {
          if (!done.has(i) && ws.summary(t, null) !== null) done.set(i, performance.now() - asked);
        });
        return done.size === trees.length;
      },
      30_000,
      5,
      'every summary',
    );
    // The sixth began no sooner than five paces after the first (a timer's lower bound: a slow
    // machine only makes it later). Without the pace, two at a time, it is done in three git runs' time.
    expect(Math.max(...done.values())).toBeGreaterThanOrEqual(5 * SUMMARY_PACE_MS - 5);
  });
});

describe("a session's worktree", () => {
  const roots: string[] = [];
  afterAll(() => roots.forEach((r) => rmSync(r, { recursive: true, force: true })));
  const setup = () => {
    const repo = makeRepo(tempDir());
    const root = join(tempDir(), 'worktrees');
    roots.push(root);
    return { repo, root, request: { repoDir: repo.dir, root, inUse: () => false } };
  };
  /** Everything under the worktrees' folder, for "nothing left behind". */
  const leftIn = (root: string) => (existsSync(root) ? readdirSync(root, { recursive: true }) : []);

  it('makes a new branch from HEAD or from a ref, in a folder of its own outside the repository', async () => {
    const { repo, root, request } = setup();
    const first = repo.git(['rev-parse', 'HEAD']).trim();
    repo.write('b.txt', 'b\n');
    const second = repo.commit('second');
    const made = await makeWorktree({ ...request, branch: 'feature/login' });
    expect(made.worktree).toMatchObject({ repo: repo.dir, branch: 'feature/login', base: second, newBranch: true });
    expect(made.worktree.path).toMatch(new RegExp(`^${root}/project-[0-9a-f]{10}/feature/login$`));
    expect(repo.worktrees()).toEqual([repo.dir, made.worktree.path]);
    expect(repo.git(['rev-parse', 'HEAD'], made.worktree.path).trim()).toBe(second);
    const older = await makeWorktree({ ...request, branch: 'from-first', from: first });
    expect(older.worktree.base).toBe(first);
    expect(repo.git(['symbolic-ref', '--short', 'HEAD'], older.worktree.path).trim()).toBe('from-first');
    // Taken back: folder, branch and git's bookkeeping gone.
    await older.undo();
    await made.undo();
    expect(repo.branches()).toEqual(['main']);
    expect(repo.worktrees()).toEqual([repo.dir]);
    expect(leftIn(root)).toEqual([]);
  });

  it('takes an existing branch checked out nowhere else, and its own worktree again once no session works there', async () => {
    const { repo, request } = setup();
    repo.git(['branch', 'existing']);
    const made = await makeWorktree({ ...request, branch: 'existing' });
    expect(made.worktree.newBranch).toBe(false);
    const again = await makeWorktree({ ...request, branch: 'existing' });
    expect(again.worktree.path).toBe(made.worktree.path);
    await expectDomainError(
      makeWorktree({ ...request, branch: 'existing', inUse: () => true }),
      'worktree-conflict',
      /works in .* already/,
    );
  });

  it.each([
    ['a branch name git refuses', { branch: 'two words' }, 'invalid', /not a branch name git accepts/],
    ['a name that is an option', { branch: '--upload-pack=touch /tmp/x' }, 'invalid', /must not start with "-"/],
    ['a short option', { branch: '-x' }, 'invalid', /must not start with "-"/],
    ['the previous branch', { branch: '@{-1}' }, 'invalid', /not a branch name/],
    ['a branch named like HEAD', { branch: '@' }, 'invalid', /not a branch name/],
    ['a from that names no commit', { branch: 'ok', from: 'no-such-ref' }, 'invalid', /names no commit/],
    ['a from that is an option', { branch: 'ok', from: '--all' }, 'invalid', /must not start with "-"/],
    ['a branch checked out elsewhere', { branch: 'main' }, 'worktree-conflict', /checked out at/],
    ['an existing branch with from', { branch: 'taken', from: 'HEAD' }, 'worktree-conflict', /exists already/],
  ] as const)('refuses %s and leaves nothing behind', async (_what, spec, code, says) => {
    const { repo, root, request } = setup();
    repo.git(['branch', 'taken']);
    await expectDomainError(makeWorktree({ ...request, ...spec }), code, says);
    expect(repo.branches()).toEqual(['main', 'taken']);
    expect(repo.worktrees()).toEqual([repo.dir]);
    expect(leftIn(root)).toEqual([]);
  });

  it('two requests for one new branch at once: one worktree, the other refused without touching it', async () => {
    const { repo, request } = setup();
    const results = await Promise.allSettled([makeWorktree({ ...request, branch: 'race' }), makeWorktree({ ...request, branch: 'race' })]);
    const made = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    const refused = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
    expect(made).toHaveLength(1);
    expect(refused).toEqual([domainError('worktree-conflict')]);
    expect(repo.worktrees()).toEqual([repo.dir, made[0]!.worktree.path]);
    expect(repo.git(['symbolic-ref', '--short', 'HEAD'], made[0]!.worktree.path).trim()).toBe('race');
    expect(existsSync(join(made[0]!.worktree.path, 'README.md'))).toBe(true);
  });

  it('a session created in its new worktree keeps it; one that cannot be made takes it back, its own error thrown', async () => {
    const { repo, root, request } = setup();
    const inUse = () => Promise.resolve(new Set<string>());
    const kept = await createInWorktree({ ...request, inUse, branch: 'kept' }, (wt) => Promise.resolve(wt));
    expect(repo.worktrees()).toEqual([repo.dir, kept.path]);
    const seen: string[] = [];
    const failed = await createInWorktree({ ...request, inUse, branch: 'failed' }, (wt) => {
      seen.push(wt.path);
      expect(repo.worktrees()).toContain(wt.path);
      return Promise.reject(new Error('tmux said no'));
    }).catch((err: unknown) => err);
    expect(failed).toEqual(new Error('tmux said no'));
    expect(seen).toHaveLength(1);
    expect(repo.branches()).toEqual(['kept', 'main']);
    expect(repo.worktrees()).toEqual([repo.dir, kept.path]);
    expect(existsSync(seen[0]!)).toBe(false);
    // A worktree a session works in is not shared: refused before anything is made or created.
    const created: unknown[] = [];
    await expectDomainError(
      createInWorktree({ ...request, inUse: () => Promise.resolve(new Set([kept.path])), branch: 'kept' }, (wt) => {
        created.push(wt);
        return Promise.resolve();
      }),
      'worktree-conflict',
      /works in .* already/,
    );
    expect(created).toEqual([]);
    expect(repo.branches()).toEqual(['kept', 'main']);
    expect(repo.worktrees()).toEqual([repo.dir, kept.path]);
    expect(leftIn(root).filter((p) => String(p).includes('failed'))).toEqual([]);
  });

  it('refuses a directory outside any repository, and a worktree folder inside the repository', async () => {
    const { repo, request } = setup();
    await expectDomainError(makeWorktree({ ...request, repoDir: tempDir(), branch: 'x' }), 'invalid', /is not in a git repository/);
    await expectDomainError(makeWorktree({ ...request, root: join(repo.dir, 'wt'), branch: 'x' }), 'invalid', /inside the repository/);
    const link = join(tempDir(), 'data-link');
    symlinkSync(repo.dir, link);
    await expectDomainError(makeWorktree({ ...request, root: join(link, 'wt'), branch: 'x' }), 'invalid', /inside the repository/);
    expect(repo.branches()).toEqual(['main']);
    expect(existsSync(join(repo.dir, 'wt'))).toBe(false);
  });

  it('says what removing would lose (uncommitted files, unpushed commits), and removes with force', async () => {
    const { repo, root, request } = setup();
    const { worktree } = await makeWorktree({ ...request, branch: 'work' });
    expect(lossesRefusal(worktree, await worktreeLosses(worktree))).toBeNull();
    const wt = inWorktree(repo, worktree.path);
    wt.write('draft.txt', 'draft\n');
    const draft = lossesRefusal(worktree, await worktreeLosses(worktree));
    expect(draft?.code).toBe('work-would-be-lost');
    expect(draft?.message).toMatch(/1 uncommitted change \(draft\.txt\)/);
    wt.commit('draft');
    const unpushed = lossesRefusal(worktree, await worktreeLosses(worktree));
    expect(unpushed?.message).toMatch(/1 commit on branch work on no other branch, remote branch or tag/);
    // Merged into main: nothing is lost with the branch.
    repo.git(['merge', '-q', '--ff-only', 'work']);
    expect(lossesRefusal(worktree, await worktreeLosses(worktree))).toBeNull();
    wt.write('draft.txt', 'more\n');
    await expectDomainError(removeWorktree(worktree, root, false), 'work-would-be-lost', /git would not remove/);
    expect(existsSync(worktree.path)).toBe(true);
    await removeWorktree(worktree, root, true);
    expect(existsSync(worktree.path)).toBe(false);
    expect(repo.branches()).toEqual(['main']);
    expect(repo.worktrees()).toEqual([repo.dir]);
    expect(leftIn(root)).toEqual([]);
  });
});

/** The worktree at `path` of `repo`, worked on like the repository itself. */
function inWorktree(repo: TestRepo, path: string): Pick<TestRepo, 'write' | 'commit'> {
  return {
    write: (p, content) => repo.write(join(path, p), content),
    commit: (message) => {
      repo.git(['add', '-A'], path);
      repo.git(['commit', '-q', '-m', message], path);
      return repo.git(['rev-parse', 'HEAD'], path).trim();
    },
  };
}
