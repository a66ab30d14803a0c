/**
 * Sessions in their own git worktree, and what an agent changed, against the real daemon, real
 * tmux and real git (docs/api.md "Worktrees and changes"): made from the API and from `tether
 * attach --worktree`, every refusal leaving nothing behind (no worktree, no branch, no session,
 * no record); the changes and one file's diff as a phone reads them, the list's summary; deleted
 * with and without the worktree, refused when that would lose work; and the tmux server killed:
 * the session comes back in the same worktree. The tests share one daemon and one repository, and
 * each makes what it needs (`sessionIn`, `branch`): none depends on another having run before it
 * (`npx vitest run test/e2e/worktrees.test.ts --sequence.shuffle` runs them in any order).
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/daemon.js';
import { useDaemon } from '../helpers/daemon-fixture.js';
import { makeRepo, type TestRepo } from '../helpers/git-repo.js';
import { eventually } from '../helpers/tmux.js';

const AGENT = `[agent]\ncommand = "/bin/sh"\ndefault_session = "pi-main"\n`;

interface Worktree {
  repo: string;
  branch: string;
  path: string;
  base: string;
  newBranch: boolean;
}
interface Item {
  id: string;
  state: string;
  cwd: string | null;
  worktree: Worktree | null;
  changes: { files: number; added: number; removed: number } | null;
}
interface ChangedFile {
  path: string;
  oldPath: string | null;
  status: string;
  added: number | null;
  removed: number | null;
  binary: boolean;
}
interface Changes {
  id: string;
  worktree: Worktree | null;
  base: string;
  head: string | null;
  branch: string | null;
  files: ChangedFile[];
  commits: { sha: string; subject: string }[];
  summary: { files: number; added: number; removed: number };
}

describe('sessions in their own git worktree', () => {
  const parent = mkdtempSync(join(tmpdir(), 'tether-wt-'));
  afterAll(() => rmSync(parent, { recursive: true, force: true }));
  const repo: TestRepo = makeRepo(parent);
  const fx = useDaemon(AGENT);
  const { json } = fx;
  const root = () => join(fx.home.dataDir, 'worktrees');

  const list = async () => (await (await fx.d.get('/sessions')).json()) as Item[];
  const item = async (id: string) => (await list()).find((s) => s.id === id);
  const tmuxNames = async () => (await fx.tmux.tmux('list-sessions', '-F', '#{session_name}')).trim().split('\n').sort();
  const recordsDir = () => join(fx.home.dataDir, 'sessions');
  const records = () => (existsSync(recordsDir()) ? readdirSync(recordsDir()).filter((f) => f.endsWith('.json')) : []).sort();
  /** The folders under the worktrees' folder, down to the worktrees (not into them). */
  const folders = (dir = root(), prefix = ''): string[] =>
    !existsSync(dir) || existsSync(join(dir, '.git'))
      ? []
      : readdirSync(dir, { withFileTypes: true })
          .filter((e) => e.isDirectory())
          .flatMap((e) => [`${prefix}${e.name}`, ...folders(join(dir, e.name), `${prefix}${e.name}/`)]);
  /**
   * Everything a refusal must leave as it was: branches, worktrees, the worktrees' folder, sessions,
   * records; taken once every listed session has its record (the daemon's default session, or one a
   * test just made, writes it a moment after it is listed).
   */
  const everything = async () => {
    await eventually(
      async () => (await list()).every((s) => records().includes(`${s.id}.json`)),
      15_000,
      50,
      'every session with its record',
    );
    return snapshot();
  };
  const snapshot = async () => ({
    branches: repo.branches(),
    worktrees: repo.worktrees(),
    folders: folders().sort(),
    sessions: await tmuxNames(),
    records: records(),
  });
  const create = async (body: Record<string, unknown>) => json('POST', '/sessions', body);
  /** A session made in a worktree of `branch`; its list item once the daemon lists it. */
  const createIn = async (name: string, branch: string, extra: Record<string, unknown> = {}): Promise<Item> => {
    const res = await create({ name, cwd: repo.dir, worktree: { branch, ...extra } });
    expect(res.status, await res.clone().text()).toBe(201);
    // Its record is written once it is linked: refusals compare the records before and after.
    await eventually(() => records().includes(`${name}.json`), 15_000, 50, `${name}'s record`);
    await eventually(async () => (await item(name))?.worktree, 15_000, 50, `${name} listed with its worktree`);
    return (await item(name))!;
  };
  /** Session `name` in a worktree of `branch`, made unless a test made it already (each test makes what it needs). */
  const sessionIn = async (name: string, branch: string): Promise<Item> => (await item(name)) ?? createIn(name, branch);
  /** Branch `name` at HEAD, made unless it is there. */
  const branch = (name: string) => {
    if (!repo.branches().includes(name)) repo.git(['branch', name]);
  };
  /** What the agent's shell prints for `pwd`: where it works. */
  const pwdOf = async (name: string, path: string) => {
    expect((await json('POST', `/sessions/${name}/input`, { type: 'keys', data: 'pwd\r' })).status).toBe(204);
    await eventually(async () => (await fx.tmux.capture(`=${name}:`)).split('\n').includes(path), 15_000, 50, `pwd printing ${path}`);
  };

  it('POST /sessions with a worktree: a new branch in its own folder outside the repository, where the agent starts', async () => {
    const base = repo.git(['rev-parse', 'HEAD']).trim();
    const it1 = await createIn('wt-api', 'feature/api');
    expect(it1.worktree).toEqual({ repo: repo.dir, branch: 'feature/api', path: it1.worktree!.path, base, newBranch: true });
    expect(it1.worktree!.path).toMatch(new RegExp(`^${root()}/project-[0-9a-f]{10}/feature/api$`));
    expect(it1.cwd).toBe(it1.worktree!.path);
    expect(repo.branches()).toContain('feature/api');
    expect(repo.worktrees()).toContain(it1.worktree!.path);
    await pwdOf('wt-api', it1.worktree!.path);
    expect(repo.git(['symbolic-ref', '--short', 'HEAD'], it1.worktree!.path).trim()).toBe('feature/api');
    // The repository's own tree is untouched.
    expect(repo.git(['status', '--porcelain'])).toBe('');
    // The stream's session-meta says so too.
    const m = fx.mirror('wt-api').connect();
    await eventually(() => m.received.some((r) => r.kind === 'meta'), 15_000, 25, 'session-meta');
    const meta = m.received.find((r) => r.kind === 'meta')!;
    expect(meta.kind === 'meta' && meta.frame.worktree).toEqual(it1.worktree);
    // The record a restore needs carries it.
    await eventually(() => existsSync(join(fx.home.dataDir, 'sessions', 'wt-api.json')), 15_000, 50, 'the record');
    await eventually(
      () =>
        (JSON.parse(readFileSync(join(fx.home.dataDir, 'sessions', 'wt-api.json'), 'utf8')) as { worktree?: Worktree }).worktree?.path ===
        it1.worktree!.path,
      15_000,
      50,
      'the record naming the worktree',
    );
  });

  it('an existing branch checked out nowhere else, and a branch from a ref', async () => {
    const first = repo.git(['rev-parse', 'HEAD']).trim();
    repo.write('later.txt', 'later\n');
    repo.commit('later');
    repo.git(['branch', 'existing', first]);
    const existing = await createIn('wt-existing', 'existing');
    expect(existing.worktree).toMatchObject({ branch: 'existing', base: first, newBranch: false });
    const fromRef = await createIn('wt-from', 'from-first', { from: 'existing' });
    expect(fromRef.worktree).toMatchObject({ branch: 'from-first', base: first, newBranch: true });
  });

  it.each([
    [
      'a directory in no repository',
      () => ({ cwd: mkdtempSync(join(parent, 'plain-')), worktree: { branch: 'x1' } }),
      400,
      /not in a git repository/,
    ],
    ['a branch name git refuses', () => ({ cwd: repo.dir, worktree: { branch: 'two words' } }), 400, /not a branch name git accepts/],
    [
      'a branch name that is an option',
      () => ({ cwd: repo.dir, worktree: { branch: '--upload-pack=touch /tmp/pwned' } }),
      400,
      /must not start/,
    ],
    ['a short option as branch', () => ({ cwd: repo.dir, worktree: { branch: '-x' } }), 400, /must not start/],
    ['hostile text as branch', () => ({ cwd: repo.dir, worktree: { branch: 'a;b\nc' } }), 400, /not a branch name/],
    ['a from that names nothing', () => ({ cwd: repo.dir, worktree: { branch: 'x2', from: 'no-such' } }), 400, /names no commit/],
    ['a branch checked out elsewhere', () => ({ cwd: repo.dir, worktree: { branch: 'main' } }), 409, /checked out at/],
    ['a branch another session works on', () => ({ cwd: repo.dir, worktree: { branch: 'busy' } }), 409, /checked out at|works in/],
    ['an existing branch with from', () => ({ cwd: repo.dir, worktree: { branch: 'standing', from: 'main' } }), 409, /exists already/],
    ['no cwd', () => ({ worktree: { branch: 'x3' } }), 400, /needs cwd/],
    ['an unknown field', () => ({ cwd: repo.dir, worktree: { branch: 'x4', base: 'main' } }), 400, /base/],
    ['a taken session name', () => ({ name: 'taken', cwd: repo.dir, worktree: { branch: 'x5' } }), 409, /already exists/],
    ['an agent not configured', () => ({ cwd: repo.dir, agent: 'nope', worktree: { branch: 'x6' } }), 400, /no agent named/],
  ] as const)('refuses %s with a clear answer, leaving nothing behind', async (_what, body, status, says) => {
    // What the refusals need, whichever test ran before: a session on a branch, a branch, a session name taken.
    await sessionIn('wt-busy', 'busy');
    branch('standing');
    if ((await item('taken')) === undefined) expect((await create({ name: 'taken', cwd: parent })).status).toBe(201);
    await eventually(() => records().includes('taken.json'), 15_000, 50, "taken's record");
    const before = await everything();
    const res = await create({ name: 'refused', ...body() });
    expect(res.status).toBe(status);
    expect(((await res.json()) as { message: string }).message).toMatch(says);
    expect(await everything()).toEqual(before);
    expect(existsSync('/tmp/pwned')).toBe(false);
  });

  it('a session that tmux cannot make takes its new worktree and branch back with it', async () => {
    // A session of that name made behind tether's back, not a tether session: tether only learns of it when it creates.
    await fx.tmux.tmux('new-session', '-d', '-s', 'raced', 'sleep 600');
    const before = await everything();
    const res = await create({ name: 'raced', cwd: repo.dir, worktree: { branch: 'raced-branch' } });
    expect(res.status).toBe(409);
    expect(await everything()).toEqual(before);
    await fx.tmux.tmux('kill-session', '-t', '=raced');
  });

  it('GET /sessions/:id/changes and /changes/diff: edits, new, deleted, renamed and binary files, and commits since the base', async () => {
    repo.write('edit.txt', 'one\ntwo\n');
    repo.write('gone.txt', 'gone\n');
    repo.write('rename-me.txt', Array.from({ length: 30 }, (_, i) => `row ${i}`).join('\n') + '\n');
    repo.write('pic.bin', Buffer.from([0, 1, 0, 1]));
    repo.commit('files to change');
    const made = await createIn('wt-changes', 'changes');
    const wt = made.worktree!.path;
    // The agent's work: a commit, then edits it has not committed.
    repo.write(join(wt, 'committed.txt'), 'c1\nc2\n');
    repo.git(['add', 'committed.txt'], wt);
    repo.git(['commit', '-q', '-m', 'agent commit'], wt);
    repo.write(join(wt, 'edit.txt'), 'one\nTWO\nthree\n');
    rmSync(join(wt, 'gone.txt'));
    repo.git(['mv', 'rename-me.txt', 'renamed.txt'], wt);
    repo.write(join(wt, 'pic.bin'), Buffer.from([0, 2, 0, 2, 2]));
    repo.write(join(wt, 'new file.md'), 'n1\nn2\nn3\n');

    const res = await fx.d.get('/sessions/wt-changes/changes');
    expect(res.status).toBe(200);
    const changes = (await res.json()) as Changes;
    expect(changes.base).toBe(made.worktree!.base);
    expect(changes.branch).toBe('changes');
    expect(changes.worktree).toEqual(made.worktree);
    expect(changes.commits.map((c) => c.subject)).toEqual(['agent commit']);
    expect(Object.fromEntries(changes.files.map((f) => [f.path, [f.status, f.added, f.removed, f.oldPath]]))).toEqual({
      'committed.txt': ['added', 2, 0, null],
      'edit.txt': ['modified', 2, 1, null],
      'gone.txt': ['deleted', 0, 1, null],
      'renamed.txt': ['renamed', 0, 0, 'rename-me.txt'],
      'pic.bin': ['modified', null, null, null],
      'new file.md': ['untracked', 3, 0, null],
    });
    expect(changes.summary).toEqual({ files: 6, added: 7, removed: 2 });

    const diff = async (path: string) => fx.d.get(`/sessions/wt-changes/changes/diff?path=${encodeURIComponent(path)}`);
    const edit = (await (await diff('edit.txt')).json()) as { diff: string; status: string };
    expect(edit.status).toBe('modified');
    expect(edit.diff).toContain('-two\n+TWO\n+three\n');
    // (git ends a name with a space in the file header with a tab)
    expect(((await (await diff('new file.md')).json()) as { diff: string }).diff).toMatch(
      /\n\+\+\+ b\/new file\.md\t?\n@@ -0,0 \+1,3 @@\n\+n1\n\+n2\n\+n3\n$/,
    );
    expect(((await (await diff('renamed.txt')).json()) as { diff: string }).diff).toContain(
      'rename from rename-me.txt\nrename to renamed.txt',
    );
    expect(await (await diff('pic.bin')).json()).toEqual({
      path: 'pic.bin',
      oldPath: null,
      status: 'modified',
      binary: true,
      diff: null,
      truncated: false,
    });
    // Paths out of the tree are refused: by `..`, absolute, through a symlink.
    symlinkSync('/etc', join(wt, 'etc-link'));
    for (const path of ['../outside', '/etc/passwd', 'etc-link/passwd', `${wt}/edit.txt`]) {
      const refused = await diff(path);
      expect(refused.status, path).toBe(400);
      expect(((await refused.json()) as { message: string }).message).toMatch(/not a path inside the working tree/);
    }
    expect((await fx.d.get('/sessions/wt-changes/changes/diff')).status).toBe(400);
    expect((await fx.d.get('/sessions/nope/changes')).status).toBe(404);
    expect((await fx.d.get('/sessions/nope/changes/diff?path=a')).status).toBe(404);

    // The list carries the summary once computed in the background, and follows the tree as the agent works.
    const agentSays = async (text: string) =>
      expect((await json('POST', '/sessions/wt-changes/input', { type: 'keys', data: `echo ${text}\r` })).status).toBe(204);
    await agentSays('made a symlink');
    await eventually(async () => (await item('wt-changes'))?.changes?.files === 7, 30_000, 200, 'the summary with the symlink counted');
    repo.write(join(wt, 'more.txt'), 'm\n');
    await agentSays('wrote more.txt');
    await eventually(async () => (await item('wt-changes'))?.changes?.files === 8, 30_000, 250, 'the summary after one more file');
  }, 120_000);

  it('a session whose directory is in no repository has no changes to show: 409', async () => {
    const plain = mkdtempSync(join(parent, 'plain-'));
    expect((await create({ name: 'plain', cwd: plain })).status).toBe(201);
    const res = await fx.d.get('/sessions/plain/changes');
    expect(res.status).toBe(409);
    expect(await res.json()).toMatchObject({ error: 'not-a-repository' });
    expect((await item('plain'))?.changes ?? null).toBeNull();
    expect((await json('DELETE', '/sessions/plain?worktree=remove')).status).toBe(400);
    expect(await item('plain')).toBeDefined();
    expect((await json('DELETE', '/sessions/plain')).status).toBe(204);
  });

  it('DELETE leaves the worktree; ?worktree=remove removes it and its branch, refused (409, nothing deleted) when work would be lost', async () => {
    const kept = (await createIn('wt-kept', 'kept')).worktree!;
    expect((await json('DELETE', '/sessions/wt-kept')).status).toBe(204);
    expect(await tmuxNames()).not.toContain('wt-kept');
    expect(existsSync(kept.path)).toBe(true);
    expect(repo.branches()).toContain('kept');
    // A new session on the same branch takes up the kept worktree again; the branch is not its own now.
    const again = (await createIn('wt-kept2', 'kept')).worktree!;
    expect(again).toMatchObject({ path: kept.path, newBranch: false });

    expect((await json('DELETE', '/sessions/wt-kept2?force=true')).status).toBe(400);
    repo.write(join(again.path, 'draft.txt'), 'draft\n');
    const refused = await json('DELETE', '/sessions/wt-kept2?worktree=remove');
    expect(refused.status).toBe(409);
    const body = (await refused.json()) as { error: string; message: string };
    expect(body.error).toBe('work-would-be-lost');
    expect(body.message).toMatch(/1 uncommitted change \(draft\.txt\).*force=true/);
    expect(await tmuxNames()).toContain('wt-kept2');
    expect(existsSync(join(again.path, 'draft.txt'))).toBe(true);
    // Committed: the branch stays (tether did not make it), so removing the worktree loses nothing.
    repo.git(['add', 'draft.txt'], again.path);
    repo.git(['commit', '-q', '-m', 'draft'], again.path);
    expect((await json('DELETE', '/sessions/wt-kept2?worktree=remove')).status).toBe(204);
    expect(await tmuxNames()).not.toContain('wt-kept2');
    expect(existsSync(again.path)).toBe(false);
    expect(repo.worktrees()).not.toContain(again.path);
    expect(repo.git(['log', '-1', '--format=%s', 'kept']).trim()).toBe('draft');

    // A branch tether made goes with its worktree: commits on no other branch are work that would be lost.
    const work = (await createIn('wt-work', 'work')).worktree!;
    repo.write(join(work.path, 'w.txt'), 'w\n');
    repo.git(['add', 'w.txt'], work.path);
    repo.git(['commit', '-q', '-m', 'work'], work.path);
    const unpushed = await json('DELETE', '/sessions/wt-work?worktree=remove');
    expect(unpushed.status).toBe(409);
    expect(((await unpushed.json()) as { message: string }).message).toMatch(/1 commit on branch work on no other branch/);
    expect(await tmuxNames()).toContain('wt-work');
    expect((await json('DELETE', '/sessions/wt-work?worktree=remove&force=true')).status).toBe(204);
    expect(await tmuxNames()).not.toContain('wt-work');
    expect(existsSync(work.path)).toBe(false);
    expect(repo.branches()).not.toContain('work');
    expect(repo.worktrees()).not.toContain(work.path);

    // A clean worktree goes without force; an existing branch tether did not make stays.
    const clean = (await createIn('wt-clean', 'clean')).worktree!;
    expect((await json('DELETE', '/sessions/wt-clean?worktree=remove')).status).toBe(204);
    expect(existsSync(clean.path)).toBe(false);
    expect(repo.branches()).not.toContain('clean');
    branch('kept-existing');
    const existing = (await createIn('wt-kept-existing', 'kept-existing')).worktree!;
    expect(existing.newBranch).toBe(false);
    expect((await json('DELETE', '/sessions/wt-kept-existing?worktree=remove')).status).toBe(204);
    expect(existsSync(existing.path)).toBe(false);
    expect(repo.branches()).toContain('kept-existing');
  });

  it('tether attach --worktree makes the session from the current repository; refusals exit 2 and leave nothing', async () => {
    const made = await runCli(['attach', '--worktree', 'cli/feature', '--detach'], fx.home.env, 45_000, [], repo.dir);
    expect(made.stderr).toBe('');
    expect(made.code).toBe(0);
    expect(made.stdout).toMatch(/^created session cli-feature in worktree .*\/cli\/feature \(branch cli\/feature\)\n$/);
    await eventually(async () => (await item('cli-feature'))?.worktree, 15_000, 50, 'cli-feature listed');
    const listed = (await item('cli-feature'))!.worktree!;
    expect(listed).toMatchObject({ repo: repo.dir, branch: 'cli/feature', newBranch: true });
    await pwdOf('cli-feature', listed.path);
    // Attaching again to the same branch's session is no error; another branch under its name is.
    expect((await runCli(['attach', 'cli-feature', '--worktree', 'cli/feature', '--detach'], fx.home.env, 45_000, [], repo.dir)).code).toBe(
      0,
    );

    for (const args of [
      ['--worktree', 'main'],
      ['--worktree', 'bad name'],
      ['--worktree=-x'],
      ['--worktree', 'ok-name', '--from', 'no-such-ref'],
      ['cli-feature', '--worktree', 'other'],
      ['--from', 'main'],
    ]) {
      const before = await everything();
      const refused = await runCli(['attach', ...args, '--detach'], fx.home.env, 45_000, [], repo.dir);
      expect(refused.code, args.join(' ')).toBe(2);
      expect(refused.stderr).toMatch(/^tether: /);
      expect(await everything()).toEqual(before);
    }
  });

  it('after the tmux server is killed, a worktree session comes back in the same worktree', async () => {
    const wt = (await sessionIn('wt-back', 'back')).worktree!;
    const running = (await list()).filter((s) => s.state === 'running').map((s) => s.id);
    const pid = Number((await fx.tmux.tmux('display-message', '-p', '#{pid}')).trim());
    process.kill(pid, 'SIGKILL');
    await eventually(
      async () => {
        const back = await item('wt-back');
        return back?.state === 'running' && Number((await fx.tmux.tmux('display-message', '-p', '#{pid}')).trim()) !== pid;
      },
      60_000,
      200,
      'wt-back running again in a new tmux server',
    );
    const back = (await item('wt-back'))!;
    expect(back.worktree).toEqual(wt);
    expect(back.cwd).toBe(wt.path);
    expect((await fx.tmux.tmux('display-message', '-p', '-t', '=wt-back:', '#{pane_current_path}')).trim()).toBe(wt.path);
    await pwdOf('wt-back', wt.path);
    expect(repo.worktrees()).toContain(wt.path);
    // The other tests' sessions are back too before the next test compares what exists.
    await eventually(
      async () => {
        const now = await list();
        return running.every((id) => now.find((s) => s.id === id)?.state === 'running');
      },
      60_000,
      200,
      `every session that ran (${running.join(', ')}) running again`,
    );
  });
});
