/**
 * The world a fuzzed daemon lives in, shared by the test and the benchmark: a folder for the
 * canaries, an agent that is no shell (a program that takes every byte of its terminal raw and
 * writes it to a file, so input can be found exactly as the pane got it and nothing typed is ever
 * run), the config that runs it over TLS, and the target and probes the fuzzer needs once the
 * daemon is up.
 *
 * Invariant: only what this module made is removed, and its process listeners are taken off
 * again by `detach`.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT } from '../built-cli.js';
import type { ensureCertificate } from '../../src/auth/certificate.js';
import { PairingStore } from '../../src/auth/pairing-store.js';
import { TokenStore } from '../../src/auth/token-store.js';
import { api } from './requests.js';
import type { FuzzProbes } from './run.js';
import type { FuzzRoute, FuzzTarget } from './target.js';
import { gitEnv } from '../git-env.js';

/** The session the fuzzer types into (never deleted by it), started where the daemon was. */
export const FUZZ_SESSION = 'fz';
/** The second one (never deleted either), started in the world's git repository: its changes and diffs are fuzzed. */
export const FUZZ_GIT_SESSION = 'fzgit';

/** The pane's program: raw mode (no line discipline: ^C, ^D and Enter are bytes), every byte to a file of its pane. */
const SINK = `const fs = require('node:fs');
const out = process.argv[2] + '-' + String(process.env.TMUX_PANE || process.pid).replace(/\\W/g, '');
let fd = null;
process.stdin.setRawMode(true);
process.stdout.write('sink-ready\\n');
process.stdin.on('data', (d) => { fd = fd ?? fs.openSync(out, 'a'); fs.writeSync(fd, d); });
`;

/** What a repository holds that a worktree request could change. */
export interface RepoState {
  readonly branches: readonly string[];
  readonly worktrees: readonly string[];
}

export interface FuzzWorld {
  readonly dir: string;
  readonly canaryDir: string;
  /**
   * A git repository (a real path) with a commit on `main`, a second branch `side`, a file
   * changed, one untracked, one with shell characters in its name, and a symlink `out` leading to
   * the canary folder: whatever is written through it shows up as a canary.
   */
  readonly repo: string;
  /** The paths `GET /changes` of a session in `repo` must list (the files changed, untracked, the symlink). */
  readonly repoChanges: readonly string[];
  /** The config's lines for the fuzzed daemon (TLS on, the sink as its agent). */
  readonly toml: string;
  /** Everything every pane's program has read so far (each pane writes a file of its own). */
  paneInput(): Buffer;
  /** The repository's branches and worktrees as made. */
  readonly repoAtStart: RepoState;
  /** The repository's branches and worktrees now. */
  repoState(): RepoState;
  cleanup(): void;
}

const gitIn = (dir: string, args: readonly string[]): string =>
  execFileSync('git', [...args], { cwd: dir, env: gitEnv('Fuzz'), encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

/** Makes the world's repository in `parent` (see `FuzzWorld.repo`). */
function makeRepo(parent: string, canaryDir: string): string {
  const repo = join(realpathSync(parent), 'repo');
  mkdirSync(join(repo, 'src'), { recursive: true });
  gitIn(repo, ['init', '-q', '-b', 'main']);
  writeFileSync(join(repo, 'README.md'), 'hello\n');
  writeFileSync(join(repo, 'src', 'a.txt'), 'one\ntwo\n');
  writeFileSync(join(repo, 'semi;$(x) `y`.txt'), 'odd\n');
  gitIn(repo, ['add', '-A']);
  gitIn(repo, ['commit', '-q', '-m', 'first']);
  gitIn(repo, ['branch', 'side']);
  writeFileSync(join(repo, 'src', 'a.txt'), 'one\nthree\n');
  writeFileSync(join(repo, 'new.txt'), 'untracked\n');
  symlinkSync(canaryDir, join(repo, 'out'));
  return repo;
}

export function fuzzWorld(): FuzzWorld {
  const dir = mkdtempSync(join(tmpdir(), 'tether-fuzz-'));
  const canaryDir = mkdtempSync(join(tmpdir(), 'tether-canary-'));
  const sink = join(dir, 'sink.cjs');
  writeFileSync(sink, SINK);
  const panes = join(dir, 'panes');
  mkdirSync(panes);
  const command = `${process.execPath} ${sink} ${join(panes, 'pane')}`;
  const repo = makeRepo(dir, canaryDir);
  const repoState = (): RepoState => ({
    branches: gitIn(repo, ['for-each-ref', '--format=%(refname:short)', 'refs/heads']).split('\n').filter(Boolean).sort(),
    worktrees: gitIn(repo, ['worktree', 'list', '--porcelain'])
      .split('\n')
      .filter((l) => l.startsWith('worktree '))
      .map((l) => l.slice('worktree '.length)),
  });
  return {
    dir,
    canaryDir,
    repo,
    repoChanges: ['new.txt', 'out', 'src/a.txt'],
    toml: `tls = true\n[agent]\ncommand = ${JSON.stringify(command)}\ndefault_session = "${FUZZ_SESSION}"\n`,
    paneInput: () => Buffer.concat(readdirSync(panes).map((f) => readFileSync(join(panes, f)))),
    repoAtStart: repoState(),
    repoState,
    cleanup: () => {
      rmSync(dir, { recursive: true, force: true });
      rmSync(canaryDir, { recursive: true, force: true });
    },
  };
}

/**
 * Makes the daemon's certificate in `dataDir` before it starts, with the built certificate
 * module (as the tests' `makeCertificate` does): from source, a daemon in this process would
 * start its certificate maker as a .ts file, which node without a TypeScript loader cannot run.
 */
export async function prepareCertificate(dataDir: string): Promise<void> {
  const built = (await import(pathToFileURL(join(ROOT, 'dist/auth/certificate.js')).href)) as {
    ensureCertificate: typeof ensureCertificate;
  };
  await built.ensureCertificate(join(dataDir, 'tls'), ['127.0.0.1']);
}

export interface FuzzTargetParts {
  /** The daemon's base URL (`https://127.0.0.1:<port>`) and token. */
  readonly base: string;
  readonly token: string;
  readonly routes: readonly FuzzRoute[];
  readonly dataDir: string;
  /** The daemon's log so far: its error lines count as failures. */
  readonly log: () => string;
}

/**
 * The target for a daemon running in this process. Uncaught errors and the daemon's error log
 * lines are collected as it runs; `detach` takes the listeners off.
 */
export async function fuzzTarget(world: FuzzWorld, parts: FuzzTargetParts): Promise<{ target: FuzzTarget; detach: () => void }> {
  const url = new URL(parts.base);
  const authDir = join(parts.dataDir, 'auth');
  const store = await TokenStore.open(authDir);
  const revoked = store.create('fuzz-revoked').token;
  store.revoke('fuzz-revoked');
  store.close();
  const pairings = new PairingStore(authDir);
  const raised: string[] = [];
  const onError = (err: unknown) => raised.push(`uncaught: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  process.on('uncaughtException', onError);
  process.on('unhandledRejection', onError);
  let logSeen = parts.log().length;
  const target: FuzzTarget = {
    peer: { host: url.hostname, port: Number(url.port), tls: url.protocol === 'https:' },
    host: url.host,
    token: parts.token,
    badTokens: ['fz-wrong-token-0000000000000000000000000000', revoked, pairings.create().token],
    routes: parts.routes,
    live: [FUZZ_SESSION, FUZZ_GIT_SESSION],
    repo: { dir: world.repo, session: FUZZ_GIT_SESSION, changes: world.repoChanges },
    canaryDir: world.canaryDir,
    uploadsRoot: parts.dataDir,
    newPairingToken: () => pairings.create().token,
    crashes: () => raised.splice(0),
    errorLog: () => {
      const log = parts.log();
      const lines = log
        .slice(logSeen)
        .split('\n')
        .filter((l) => /"level":(50|60)/.test(l));
      logSeen = log.length;
      return lines;
    },
  };
  return {
    target,
    detach: () => {
      process.off('uncaughtException', onError);
      process.off('unhandledRejection', onError);
    },
  };
}

/** Every file under `dir` (none when it does not exist). */
function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => !e.isDirectory())
    .map((e) => join(e.parentPath, e.name));
}

/** The probes of tmux, the panes and the repository (`tmux` runs a tmux command on the daemon's server). */
export function fuzzProbes(
  world: FuzzWorld,
  dataDir: string,
  tmux: (...args: string[]) => Promise<string>,
  eventually: FuzzProbes['eventually'],
): FuzzProbes {
  const before = world.repoAtStart;
  return {
    sessions: async () => (await tmux('list-sessions', '-F', '#{session_name}')).trim().split('\n').filter(Boolean),
    paneInput: () => world.paneInput(),
    description: async (id) => (await tmux('show-options', '-v', '-q', '-t', `=${id}:`, '@description')).replace(/\n$/, ''),
    repoChanged: () => {
      const now = world.repoState();
      const left = filesUnder(join(dataDir, 'worktrees'));
      return JSON.stringify(now) === JSON.stringify(before) && left.length === 0 ? null : { before, now, left: left.slice(0, 20) };
    },
    eventually,
  };
}

/**
 * Makes the session in the repository (it must answer 201), then waits until both panes'
 * programs are reading (their first line on the screen).
 */
export async function worldReady(
  t: FuzzTarget,
  tmux: (...args: string[]) => Promise<string>,
  eventually: FuzzProbes['eventually'],
  timeoutMs: number,
): Promise<void> {
  const made = await api(t, 'POST', '/sessions', { name: FUZZ_GIT_SESSION, cwd: t.repo.dir }, timeoutMs);
  if (made.status !== 201) throw new Error(`the session in the fuzz repository was not made: ${made.status} ${JSON.stringify(made.json)}`);
  for (const id of [FUZZ_SESSION, FUZZ_GIT_SESSION])
    await eventually(
      async () => (await tmux('capture-pane', '-p', '-t', `=${id}:`)).includes('sink-ready'),
      `the pane program of ${id} (sink-ready)`,
    );
}
