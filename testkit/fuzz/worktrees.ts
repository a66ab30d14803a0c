/**
 * Worktrees and changes (docs/api.md "Worktrees and changes"): what a peer sends to
 * `POST /sessions` as `cwd` and `worktree`, and to `GET /sessions/:id/changes/diff` as `path`,
 * aimed at the fuzzer's own repository (values made from the schemas alone almost never name a
 * directory that exists, so git would never run), and what a success there promised.
 *
 * Invariant: every worktree the daemon says it made is written in the ledger until the daemon
 * says it removed it; the end of the run checks the repository's branches and worktrees are as
 * they were and no folder is left (run.ts `verifyLedger`).
 */
import { existsSync, statSync } from 'node:fs';
import { dirname, join, posix } from 'node:path';
import fc from 'fast-check';
import { FuzzFinding, type FuzzLedger, type FuzzTarget } from './target.js';

export const CREATE_ROUTE = 'POST /sessions';
export const CHANGES_ROUTE = 'GET /sessions/:id/changes';
export const DIFF_ROUTE = 'GET /sessions/:id/changes/diff';

/** Branch names and refs git or a shell would read as something else: options, ref syntax, paths. */
const TRICKY_REFS = [
  'main',
  'side',
  'HEAD',
  '@',
  '@{-1}',
  'HEAD~9',
  'side^{tree}',
  'a..b',
  'x.lock',
  'a b',
  'a//b',
  '.hidden',
  'refs/heads/side',
  '../../escape',
  '-x',
  '-b',
  '--orphan',
  '--detach',
  '--',
];

/** A `POST /sessions` body asking for a session in (or beside) the repository, often with a worktree. */
export function createBodies(t: FuzzTarget, text: fc.Arbitrary<string>, canaries: readonly string[]): fc.Arbitrary<unknown> {
  const repo = t.repo.dir;
  const cwd = fc.constantFrom(repo, join(repo, 'src'), `${repo}/`, join(repo, 'out'), dirname(repo), `${repo}/../repo`);
  const ref = fc.oneof(
    { weight: 4, arbitrary: fc.stringMatching(/^fz[a-z0-9-]{1,10}(\/[a-z0-9]{1,6})?$/) },
    { weight: 3, arbitrary: fc.constantFrom(...TRICKY_REFS, ...canaries) },
    { weight: 2, arbitrary: text },
  );
  const worktree = fc.record({ branch: ref, from: fc.oneof(fc.constantFrom('HEAD', 'main', 'side'), ref) }, { requiredKeys: ['branch'] });
  return fc.record(
    { name: fc.stringMatching(/^fzw[a-z0-9]{1,8}$/), cwd, worktree: fc.oneof({ weight: 4, arbitrary: worktree }, text), project: text },
    { requiredKeys: ['cwd'] },
  );
}

/** A `path` for a diff: the repository's own files (changed, unchanged, odd names, the symlink out), escapes, options. */
export function diffPaths(t: FuzzTarget, text: fc.Arbitrary<string>, canaries: readonly string[]): fc.Arbitrary<{ path: string }> {
  const known = fc.constantFrom(
    ...t.repo.changes,
    'README.md',
    'semi;$(x) `y`.txt',
    'out/x',
    'src',
    '.',
    'src/../new.txt',
    '../repo/new.txt',
    '/etc/passwd',
    join(t.repo.dir, 'new.txt'),
    '.git/config',
    ':(top)new.txt',
    ':!x',
    '*',
    '-R',
    '--no-index',
    'nope',
  );
  return fc.record({ path: fc.oneof({ weight: 4, arbitrary: known }, { weight: 1, arbitrary: fc.constantFrom(...canaries) }, text) });
}

/** An authenticated request, for the fuzzer's own checks (requests.ts `api`). */
type Api = (method: string, path: string) => Promise<{ status: number; json: unknown }>;

interface Worktree {
  readonly repo: string;
  readonly branch: string;
  readonly path: string;
  readonly newBranch: boolean;
}

/**
 * A session made with a worktree: listed with it, started in its folder, and removed with it
 * (`worktree=remove`: nothing was changed in it, so no `force` is needed).
 */
export async function checkWorktreeSession(
  api: Api,
  ledger: FuzzLedger,
  id: string,
  sent: { cwd?: unknown; worktree?: unknown },
  evidence: object,
): Promise<void> {
  const list = (await api('GET', '/sessions')).json as { id: string; cwd: string | null; worktree: Worktree | null }[];
  const item = list.find((s) => s.id === id);
  const asked = sent.worktree as { branch: string };
  const wt = item?.worktree ?? null;
  if (wt) ledger.worktrees.add(wt.path);
  const made = wt !== null && existsSync(wt.path) && statSync(wt.path).isDirectory();
  if (!item || !wt || wt.branch !== asked.branch || item.cwd !== wt.path || !made)
    throw new FuzzFinding('a session made with a worktree is not listed in it as asked', { ...evidence, item: item ?? null, made });
  const removed = await api('DELETE', `/sessions/${id}?worktree=remove`);
  if (removed.status !== 204)
    throw new FuzzFinding(`removing a session and its untouched worktree answered ${removed.status}`, { ...evidence, removed });
  if (existsSync(wt.path)) throw new FuzzFinding('a removed worktree is still on disk', { ...evidence, worktree: wt });
  ledger.worktrees.delete(wt.path);
  ledger.count('git', 'worktree made and removed');
}

/** The changes of the session in the repository are its changes: its tree, the files changed in it. */
export function checkChanges(
  t: FuzzTarget,
  ledger: FuzzLedger,
  id: string,
  answer: { root?: unknown; files?: { path: string }[] },
  evidence: object,
): void {
  if (id !== t.repo.session) return;
  const paths = (answer.files ?? []).map((f) => f.path).sort();
  if (answer.root !== t.repo.dir || JSON.stringify(paths) !== JSON.stringify([...t.repo.changes].sort()))
    throw new FuzzFinding("the repository session's changes are not its tree's", { ...evidence, root: answer.root, paths });
  ledger.count('git', 'changes listed');
}

/** A diff answered is the diff of the file asked for (or of nothing, for a file that did not change). */
export function checkDiff(
  ledger: FuzzLedger,
  asked: string,
  answer: { path?: unknown; oldPath?: unknown; status?: unknown },
  evidence: object,
): void {
  const same = (p: unknown) => p === asked || p === posix.normalize(asked);
  const named = same(answer.path) || same(answer.oldPath) || answer.status === null;
  if (!named) throw new FuzzFinding('a diff answered for another file than asked', { ...evidence, asked, answer });
  ledger.count('git', 'diff answered');
}
