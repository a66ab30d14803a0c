/**
 * What changed in a working tree against a base commit, as git tells it: the files (added,
 * modified, deleted, renamed, untracked) with the lines added and removed, the commits made
 * since the base, and one file's unified diff (docs/api.md "Worktrees and changes"). git does
 * every comparison; nothing here compares text.
 *
 * Untracked files are compared too, without touching the repository: they are marked
 * intent-to-add in a scratch copy of the index (`GIT_INDEX_FILE`, removed after), so one
 * `git diff` sees the whole tree (renames onto a new file included) and no object is written.
 *
 * Invariants: every answer is bounded (files, commits, diff bytes; each says when it was cut);
 * a path a client names is confined to the working tree, also through symlinks.
 */
import { copyFile, lstat, mkdtemp, readlink, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, isAbsolute, join, posix, resolve } from 'node:path';
import { DomainError } from '../errors.js';
import { isInside } from '../files.js';
import { gitFailed, gitOutput, nulFields, runGit } from './exec.js';

/** Most files a changes answer lists (the summary counts them all). */
export const MAX_CHANGED_FILES = 1000;
/** Most untracked files compared; past it the answer says it was cut. */
const MAX_UNTRACKED = 5000;
/** Most commits since the base an answer lists. */
export const MAX_COMMITS = 200;
/** Most bytes of one file's diff. */
export const MAX_DIFF_BYTES = 512 * 1024;

export type ChangeStatus = 'added' | 'modified' | 'deleted' | 'renamed' | 'untracked';

export interface ChangedFile {
  readonly path: string;
  /** A renamed file's path at the base; null otherwise. */
  readonly oldPath: string | null;
  readonly status: ChangeStatus;
  /** Lines added and removed; null for a binary file. */
  readonly added: number | null;
  readonly removed: number | null;
  readonly binary: boolean;
}

export interface CommitSince {
  readonly sha: string;
  readonly subject: string;
  readonly author: string;
  readonly date: string;
}

export interface ChangesSummary {
  readonly files: number;
  readonly added: number;
  readonly removed: number;
}

export interface TreeChanges {
  /** The top of the working tree. */
  readonly root: string;
  /** The commit compared with (HEAD when no base was given; git's empty tree before the first commit). */
  readonly base: string;
  readonly head: string | null;
  /** The branch checked out; null when detached. */
  readonly branch: string | null;
  readonly files: readonly ChangedFile[];
  readonly filesTruncated: boolean;
  readonly commits: readonly CommitSince[];
  readonly commitsTruncated: boolean;
  readonly summary: ChangesSummary;
}

/** The working tree `dir` is in: its top and its index file; null when it is in none. */
async function treeOf(dir: string): Promise<{ top: string; index: string } | null> {
  const result = await runGit(dir, ['rev-parse', '--show-toplevel', '--git-path', 'index']);
  if (result.code !== 0) return null;
  const [top, index] = result.stdout.toString('utf8').replace(/\n$/, '').split('\n');
  return top && index ? { top, index: resolve(dir, index) } : null;
}

interface TreeStatus {
  readonly head: string | null;
  readonly branch: string | null;
  readonly untracked: string[];
  readonly untrackedCut: boolean;
}

async function statusOf(top: string): Promise<TreeStatus> {
  const args = ['status', '--porcelain=v2', '-z', '--branch', '--untracked-files=all'];
  const result = await runGit(top, args);
  if (result.code !== 0 && !result.truncated) throw gitFailed(args, result);
  const fields = nulFields(result.stdout);
  if (result.truncated) fields.pop(); // cut off: the last field may be half a path
  let head: string | null = null;
  let branch: string | null = null;
  const untracked: string[] = [];
  for (let i = 0; i < fields.length; i++) {
    const f = fields[i]!;
    if (f.startsWith('# branch.oid ')) head = /^[0-9a-f]{40,64}$/.test(f.slice(13)) ? f.slice(13) : null;
    else if (f.startsWith('# branch.head ')) branch = f.slice(14) === '(detached)' ? null : f.slice(14);
    else if (f.startsWith('? ')) untracked.push(f.slice(2));
    else if (f.startsWith('2 ')) i++; // a rename's original path follows as its own field
  }
  return { head, branch, untracked: untracked.slice(0, MAX_UNTRACKED), untrackedCut: result.truncated || untracked.length > MAX_UNTRACKED };
}

/** Runs `use` with the environment of a scratch index in which `untracked` are intent-to-add. */
async function withUntrackedSeen<T>(
  top: string,
  index: string,
  untracked: readonly string[],
  use: (env: Record<string, string>) => Promise<T>,
): Promise<T> {
  const literal = { GIT_LITERAL_PATHSPECS: '1' };
  if (untracked.length === 0) return use(literal);
  const dir = await mkdtemp(join(tmpdir(), 'tether-index-'));
  try {
    const scratch = join(dir, 'index');
    await copyFile(index, scratch).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err; // no index yet: git starts an empty one
    });
    const env = { ...literal, GIT_INDEX_FILE: scratch };
    const args = ['add', '--intent-to-add', '--pathspec-from-file=-', '--pathspec-file-nul'];
    const added = await runGit(top, args, { env, input: `${untracked.join('\0')}\0` });
    if (added.code !== 0) throw gitFailed(args, added);
    return await use(env);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The base to compare with: the given one, else HEAD, else (no commit yet) git's empty tree. */
async function baseOf(top: string, base: string | null, head: string | null): Promise<string> {
  if (base !== null) return base;
  if (head !== null) return head;
  return (await gitOutput(top, ['hash-object', '-t', 'tree', '--stdin'])).toString('utf8').trim();
}

const STATUS: Record<string, ChangeStatus> = {
  A: 'added',
  M: 'modified',
  T: 'modified',
  U: 'modified',
  D: 'deleted',
  R: 'renamed',
  C: 'added',
};

/** Parses `git diff --raw --numstat -z`: the raw entries, then the numstat ones. */
function parseDiff(out: Buffer, untracked: ReadonlySet<string>): ChangedFile[] {
  const fields = nulFields(out);
  const raw: { status: string; path: string; oldPath: string | null }[] = [];
  const counts = new Map<string, { added: number | null; removed: number | null }>();
  for (let i = 0; i < fields.length; i++) {
    const f = fields[i]!;
    if (f.startsWith(':')) {
      const letter = f.split(' ')[4]?.[0] ?? 'M';
      if (letter === 'R' || letter === 'C') raw.push({ status: letter, oldPath: fields[++i]!, path: fields[++i]! });
      else raw.push({ status: letter, oldPath: null, path: fields[++i]! });
      continue;
    }
    // `added\tremoved\tpath`: the path may hold tabs itself.
    const t1 = f.indexOf('\t');
    const t2 = f.indexOf('\t', t1 + 1);
    const [a, r, path] = [f.slice(0, t1), f.slice(t1 + 1, t2), f.slice(t2 + 1)];
    const name = path === '' ? (i++, fields[++i]!) : path; // a rename: the old path, then the new
    counts.set(name, { added: a === '-' ? null : Number(a), removed: r === '-' ? null : Number(r) });
  }
  return raw.map((e) => {
    const c = counts.get(e.path) ?? { added: null, removed: null };
    const status = STATUS[e.status] ?? 'modified';
    return {
      path: e.path,
      oldPath: e.status === 'R' ? e.oldPath : null,
      status: status === 'added' && untracked.has(e.path) ? 'untracked' : status,
      added: c.added,
      removed: c.removed,
      binary: c.added === null,
    };
  });
}

const DIFF_ARGS = ['diff', '--no-ext-diff', '--no-textconv', '--no-color', '-M'];

async function commitsSince(top: string, base: string, head: string | null): Promise<{ commits: CommitSince[]; cut: boolean }> {
  if (head === null || head === base) return { commits: [], cut: false };
  const out = await gitOutput(top, ['log', '-z', `--max-count=${MAX_COMMITS + 1}`, '--format=%H%x1f%an%x1f%aI%x1f%s', `${base}..${head}`]);
  const commits = nulFields(out).map((line) => {
    const [sha = '', author = '', date = '', subject = ''] = line.replace(/^\n/, '').split('\x1f');
    return { sha, subject, author, date };
  });
  return { commits: commits.slice(0, MAX_COMMITS), cut: commits.length > MAX_COMMITS };
}

/** Everything git tells of the tree against the base, uncut: every changed file. */
interface Scan {
  readonly top: string;
  readonly index: string;
  readonly status: TreeStatus;
  readonly base: string;
  readonly files: ChangedFile[];
  readonly cut: boolean;
}

async function scan(dir: string, base: string | null, known?: { top: string; index: string }): Promise<Scan | null> {
  const tree = known ?? (await treeOf(dir));
  if (!tree) return null;
  const status = await statusOf(tree.top);
  const from = await baseOf(tree.top, base, status.head);
  const diff = await withUntrackedSeen(tree.top, tree.index, status.untracked, async (env) => {
    const result = await runGit(tree.top, [...DIFF_ARGS, '--raw', '--numstat', '-z', from, '--'], { env });
    if (result.code !== 0 && !result.truncated) throw gitFailed(['diff'], result);
    return result;
  });
  const files = parseDiff(diff.stdout, new Set(status.untracked));
  return { ...tree, status, base: from, files, cut: status.untrackedCut || diff.truncated };
}

/**
 * What changed in the working tree `dir` is in, against `base` (HEAD when null), with the commits
 * since it when `withCommits`; null when `dir` is in no git working tree.
 */
export async function readChanges(dir: string, base: string | null, withCommits = true): Promise<TreeChanges | null> {
  const s = await scan(dir, base);
  if (!s) return null;
  const { commits, cut } = withCommits ? await commitsSince(s.top, s.base, s.status.head) : { commits: [], cut: false };
  return {
    root: s.top,
    base: s.base,
    head: s.status.head,
    branch: s.status.branch,
    files: s.files.slice(0, MAX_CHANGED_FILES),
    filesTruncated: s.files.length > MAX_CHANGED_FILES || s.cut,
    commits,
    commitsTruncated: cut,
    summary: {
      files: s.files.length,
      added: s.files.reduce((n, f) => n + (f.added ?? 0), 0),
      removed: s.files.reduce((n, f) => n + (f.removed ?? 0), 0),
    },
  };
}

const outside = (path: string) =>
  new DomainError('invalid', `${JSON.stringify(path.slice(0, 200))} is not a path inside the working tree`, { field: 'querystring/path' });

/**
 * `path` as a path relative to the top of the tree, refused when it leads out of it: absolute,
 * through `..`, or through a symlink (of a folder on the way or the file itself) whose target is outside.
 */
export async function confinePath(top: string, path: string): Promise<string> {
  if (path === '' || path.includes('\0') || isAbsolute(path)) throw outside(path);
  const clean = posix.normalize(path).replace(/\/+$/, '');
  if (clean === '' || clean === '.' || clean === '..' || clean.startsWith('../')) throw outside(path);
  const realTop = await realpath(top);
  const full = join(realTop, clean);
  let probe = full;
  for (;;) {
    const info = await lstat(probe).catch(() => null);
    if (info) {
      const real = await realpath(probe).catch(() => null);
      if (real !== null) {
        if (!isInside(real, realTop)) throw outside(path);
      } else if (info.isSymbolicLink()) {
        // A symlink whose target does not exist: judged by where it points.
        if (!isInside(resolve(dirname(probe), await readlink(probe)), realTop)) throw outside(path);
      }
      break;
    }
    probe = dirname(probe);
  }
  return clean;
}

export interface FileDiff {
  readonly path: string;
  readonly oldPath: string | null;
  /** null when the file is unchanged. */
  readonly status: ChangeStatus | null;
  readonly binary: boolean;
  /** The unified diff (empty for an unchanged file); null for a binary file, which is named, never shown. */
  readonly diff: string | null;
  /** The diff passed `MAX_DIFF_BYTES` and ends at the last whole line before it. */
  readonly truncated: boolean;
}

/** One file's unified diff against `base` (HEAD when null); null when `dir` is in no git working tree. */
export async function readFileDiff(dir: string, base: string | null, path: string): Promise<FileDiff | null> {
  const tree = await treeOf(dir);
  if (!tree) return null;
  const clean = await confinePath(tree.top, path);
  const s = (await scan(dir, base, tree))!;
  const file = s.files.find((f) => f.path === clean || f.oldPath === clean);
  if (!file) return { path: clean, oldPath: null, status: null, binary: false, diff: '', truncated: false };
  const head = { path: file.path, oldPath: file.oldPath, status: file.status, binary: file.binary };
  if (file.binary) return { ...head, diff: null, truncated: false };
  const untracked = s.status.untracked.includes(file.path) ? [file.path] : [];
  const paths = [...(file.oldPath !== null ? [file.oldPath] : []), file.path];
  const result = await withUntrackedSeen(s.top, s.index, untracked, (env) =>
    runGit(s.top, [...DIFF_ARGS, s.base, '--', ...paths], { env, maxBytes: MAX_DIFF_BYTES + 1 }),
  );
  if (result.code !== 0 && !result.truncated) throw gitFailed(['diff'], result);
  let out = result.stdout;
  const truncated = result.truncated || out.length > MAX_DIFF_BYTES;
  if (truncated) out = out.subarray(0, out.subarray(0, MAX_DIFF_BYTES).lastIndexOf(0x0a) + 1);
  return { ...head, diff: out.toString('utf8'), truncated };
}
