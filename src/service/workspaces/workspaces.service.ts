/**
 * A session's place in git (docs/api.md "Worktrees and changes"): the worktree made for a new
 * session and removed with it when asked, what changed in its tree against its base, and the
 * short summary the session list carries.
 *
 * The summary is never waited for: the list gets what is cached (null until the first answer)
 * and a stale entry is refreshed in the background, at most `SUMMARY_JOBS` git runs at a time,
 * each a child process, so the event loop never waits on a large repository. An entry is stale
 * once a session in that tree wrote output after it was begun (the agent is at work), or after
 * `SUMMARY_TTL_MS` (changes made from elsewhere; a directory in no repository is looked at again
 * only then), and is refreshed at most every `SUMMARY_MIN_INTERVAL_MS` (and no sooner than ten
 * times its last computation took: a large repository is not kept busy); two computations begin
 * at least `SUMMARY_PACE_MS` apart, whatever their trees. Sessions in the same tree against the
 * same base share one entry, so the list's work per session is one map look-up.
 */
import { stat } from 'node:fs/promises';
import { DomainError } from '../../errors.js';
import { readChanges, readFileDiff, type ChangesSummary, type FileDiff, type TreeChanges } from '../../git/changes.js';
import { lossesRefusal, removeWorktree, worktreeLosses } from '../../git/worktree.js';
import type { Logger } from '../../log.js';
import type { SessionWorktree } from '../../machines/session.machine.js';
import { createInWorktree } from './worktree-session.js';

/** How long a summary is served before it is computed again even without output. */
export const SUMMARY_TTL_MS = 30_000;
/** The shortest time between two computations of one tree's summary. */
export const SUMMARY_MIN_INTERVAL_MS = 2_000;
/** A tree is computed again no sooner than this many times its last computation took (git busy at most a tenth of the time on it). */
const SUMMARY_BUSY_FACTOR = 10;
/** How many summaries are computed at once. */
const SUMMARY_JOBS = 2;
/**
 * The shortest time between the starts of two computations, whatever tree: each is a few git
 * processes, and starting a process holds the event loop while node forks (docs/architecture.md
 * "Session facts"). A hundred worktree sessions at work, each stale at every list, would
 * otherwise keep git starting without pause; paced, they are computed in turn, two a second.
 */
export const SUMMARY_PACE_MS = 500;
/** Most trees whose summary is kept. */
const SUMMARY_ENTRIES = 512;

/** Where a session works: the directory it started in, and its worktree when it has one. */
export interface Workspace {
  readonly cwd: string | null;
  readonly worktree: SessionWorktree | null;
}

export interface WorkspacesDeps {
  /** Where worktrees go (`[worktrees] dir`, or `worktrees/` in the data dir). */
  readonly root: string;
  /** Where session `id` works; `session-not-found` when there is no such session. */
  readonly workspace: (id: string) => Promise<Workspace>;
  /** The worktree folders sessions work in now (a worktree is not shared). */
  readonly worktreesInUse: () => Promise<ReadonlySet<string>>;
  readonly now: () => number;
  readonly log: Logger;
}

export type SessionChanges = TreeChanges & { readonly id: string; readonly worktree: SessionWorktree | null };

interface SummaryEntry {
  value: ChangesSummary | null;
  /** The last computation found a repository there (output cannot make one: only the TTL looks again). */
  repository: boolean;
  /** When the last computation began (0: never). */
  begun: number;
  /** How long the last computation took: a tree that takes long is computed less often. */
  tookMs: number;
  running: boolean;
}

/** The tree a workspace's changes are read in, and the base: a worktree's start, else HEAD (null). */
function treeOf(ws: Workspace): { dir: string; base: string | null } | null {
  if (ws.worktree) return { dir: ws.worktree.path, base: ws.worktree.base };
  return ws.cwd === null ? null : { dir: ws.cwd, base: null };
}

export class Workspaces {
  private readonly summaries = new Map<string, SummaryEntry>();
  private readonly queue: { key: string; dir: string; base: string | null }[] = [];
  private running = 0;
  /** A computation started less than SUMMARY_PACE_MS ago: the next waits for this timer. */
  private pace: NodeJS.Timeout | null = null;
  /** The worktree-session creation under way; the next waits for it. */
  private making: Promise<unknown> = Promise.resolve();

  constructor(private readonly deps: WorkspacesDeps) {}

  /**
   * Makes the worktree of a new session in the repository `repoDir` is in and runs `create` in it;
   * when `create` fails, the worktree is taken back. Refusals leave nothing behind (the flow is
   * `createInWorktree`'s, which `tether attach --worktree` runs too).
   */
  async around<T>(
    repoDir: string | undefined,
    spec: { branch: string; from?: string },
    create: (cwd: string, worktree: SessionWorktree) => Promise<T>,
  ): Promise<T> {
    if (repoDir === undefined)
      throw new DomainError('invalid', 'a worktree needs cwd: a directory of the repository', { field: 'worktree' });
    // One at a time: a worktree in use is told by the sessions made before this one.
    const request = { repoDir, ...spec, root: this.deps.root, inUse: this.deps.worktreesInUse };
    const turn = this.making.then(() => createInWorktree(request, (worktree) => create(worktree.path, worktree)));
    this.making = turn.catch(() => undefined);
    return turn;
  }

  /**
   * Session `id`'s worktree, once it is known that removing it loses nothing (or `force`):
   * otherwise `work-would-be-lost`, saying what would be lost. A session without one is a 400.
   */
  async removable(id: string, force: boolean): Promise<SessionWorktree> {
    const { worktree } = await this.deps.workspace(id);
    if (!worktree)
      throw new DomainError('invalid', `session ${id} has no worktree of tether's to remove`, { field: 'querystring/worktree' });
    if (force) return worktree;
    const refusal = lossesRefusal(worktree, await worktreeLosses(worktree));
    if (refusal) throw refusal;
    return worktree;
  }

  /** Removes a worktree (and the branch tether made for it). */
  async remove(worktree: SessionWorktree, force: boolean): Promise<void> {
    await removeWorktree(worktree, this.deps.root, force);
    this.deps.log.info({ path: worktree.path, branch: worktree.branch, force }, 'worktree removed');
  }

  /** The files changed in session `id`'s tree against its base, and the commits since it. */
  async changes(id: string): Promise<SessionChanges> {
    const ws = await this.deps.workspace(id);
    const tree = await this.repositoryTree(id, ws);
    const changes = await readChanges(tree.dir, tree.base);
    if (!changes) throw notRepository(id, tree.dir);
    this.remember(tree, changes.summary, this.deps.now());
    return { id, worktree: ws.worktree, ...changes };
  }

  /** One file's diff in session `id`'s tree against its base. */
  async diff(id: string, path: string): Promise<FileDiff> {
    const tree = await this.repositoryTree(id, await this.deps.workspace(id));
    const diff = await readFileDiff(tree.dir, tree.base, path);
    if (!diff) throw notRepository(id, tree.dir);
    return diff;
  }

  private async repositoryTree(id: string, ws: Workspace): Promise<{ dir: string; base: string | null }> {
    const tree = treeOf(ws);
    if (!tree) throw new DomainError('not-a-repository', `tether does not know the directory of session ${id}`);
    const info = await stat(tree.dir).catch(() => null);
    if (!info?.isDirectory()) throw new DomainError('not-a-repository', `the directory ${tree.dir} of session ${id} is gone`);
    return tree;
  }

  /**
   * The summary of a workspace's changes as last computed (null before the first answer, or outside
   * git), at once; a stale one is computed again in the background. `lastOutputAt`: the session's
   * latest output (epoch ms), which makes an older summary stale.
   */
  summary(ws: Workspace, lastOutputAt: number | null): ChangesSummary | null {
    const tree = treeOf(ws);
    if (!tree) return null;
    const key = `${tree.dir}\0${tree.base ?? ''}`;
    let entry = this.summaries.get(key);
    if (!entry) {
      entry = { value: null, repository: true, begun: 0, tookMs: 0, running: false };
      this.summaries.set(key, entry);
      if (this.summaries.size > SUMMARY_ENTRIES) this.summaries.delete(this.summaries.keys().next().value!);
    }
    const now = this.deps.now();
    const touched = entry.repository && lastOutputAt !== null && lastOutputAt >= entry.begun;
    const stale = entry.begun === 0 || now - entry.begun >= SUMMARY_TTL_MS || touched;
    if (stale && !entry.running && now - entry.begun >= Math.max(SUMMARY_MIN_INTERVAL_MS, SUMMARY_BUSY_FACTOR * entry.tookMs)) {
      entry.running = true;
      this.queue.push({ key, ...tree });
      this.pump();
    }
    return entry.value;
  }

  private remember(tree: { dir: string; base: string | null }, value: ChangesSummary, begun: number): void {
    const entry = this.summaries.get(`${tree.dir}\0${tree.base ?? ''}`);
    if (entry && begun >= entry.begun) {
      entry.value = value;
      entry.begun = begun;
    }
  }

  private pump(): void {
    while (this.pace === null && this.running < SUMMARY_JOBS && this.queue.length > 0) {
      const job = this.queue.shift()!;
      const entry = this.summaries.get(job.key);
      if (!entry) continue;
      this.pace = setTimeout(() => {
        this.pace = null;
        this.pump();
      }, SUMMARY_PACE_MS);
      this.pace.unref();
      this.running++;
      const begun = this.deps.now();
      entry.begun = begun;
      void readChanges(job.dir, job.base, false)
        .then(
          (changes) => {
            entry.value = changes?.summary ?? null;
            entry.repository = changes !== null;
          },
          (err: Error) => this.deps.log.debug({ dir: job.dir, err: err.message }, 'the changes summary could not be computed'),
        )
        .finally(() => {
          entry.tookMs = this.deps.now() - begun;
          entry.running = false;
          this.running--;
          this.pump();
        });
    }
  }
}

const notRepository = (id: string, dir: string) =>
  new DomainError('not-a-repository', `the directory ${dir} of session ${id} is not in a git repository`);
