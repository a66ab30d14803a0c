/**
 * The fuzzer's entry: every surface a peer can reach (the route table's routes, HTTP framing,
 * WebSocket handshakes and frames, pairing, bytes before TLS), run as fast-check properties
 * against a live daemon, and the checks of what the ledger was promised once they ran.
 *
 * Invariant: a run is reproducible: the seed decides every case, a failure names the seed, the
 * path to the case and the shrunk case itself, and the same seed and path run that case again
 * (TETHER_FUZZ_SEED, TETHER_FUZZ_PATH).
 */
import { readdirSync } from 'node:fs';
import fc from 'fast-check';
import { runFramesCase, framesCases } from './frames.js';
import { hostileString } from './hostile.js';
import { noiseCases, runNoiseCase } from './noise.js';
import { pairCases, runPairCase } from './pairing.js';
import { rawCases, runRawCase } from './raw-requests.js';
import { api, requestCases, runRequestCase } from './requests.js';
import { FuzzFinding, type FuzzLedger, type FuzzTarget } from './target.js';
import { runUpgradeCase, upgradeCases } from './upgrades.js';

export { FuzzLedger } from './target.js';
export type { FuzzTarget } from './target.js';

interface Surface {
  /** What a peer sends on it, for the report. */
  readonly about: string;
  cases(t: FuzzTarget): fc.Arbitrary<unknown>;
  run(t: FuzzTarget, ledger: FuzzLedger, c: unknown, opts: { timeoutMs: number }): Promise<void>;
}

const surface = <C>(
  about: string,
  cases: (t: FuzzTarget) => fc.Arbitrary<C>,
  run: (t: FuzzTarget, l: FuzzLedger, c: C, o: { timeoutMs: number }) => Promise<void>,
): Surface => ({
  about,
  cases,
  run: (t, l, c, o) => run(t, l, c as C, o),
});

/** Every surface, by name. */
export const SURFACES = {
  requests: surface(
    'every route: path, query and body from its schema, with and without the token',
    (t) => requestCases(t, hostileString(t.canaryDir)),
    runRequestCase,
  ),
  'raw-http': surface('request lines, headers and body framing spoiled byte by byte', rawCases, runRawCase),
  upgrades: surface('WebSocket handshakes to every route', (t) => upgradeCases(t, hostileString(t.canaryDir)), runUpgradeCase),
  frames: surface('WebSocket frames after a real upgrade', (t) => framesCases(t, hostileString(t.canaryDir)), runFramesCase),
  pairing: surface('POST /pair bodies and pairing tokens', (t) => pairCases(hostileString(t.canaryDir)), runPairCase),
  noise: surface('bytes that are not the protocol, before anything else', () => noiseCases, runNoiseCase),
} as const;
export type SurfaceName = keyof typeof SURFACES;

export interface FuzzRunOptions {
  readonly seed: number;
  readonly numRuns: number;
  /** A failure's path, to run just that case again. */
  readonly path?: string;
  /** The bound of one exchange (generous: a busy machine is slow). */
  readonly timeoutMs: number;
  /** Ask `/health` every this many cases. */
  readonly healthEvery?: number;
}

/** The daemon answers `/health` with 200 and nothing was raised that nothing caught. */
export async function expectHealthy(t: FuzzTarget, timeoutMs: number, after: string): Promise<void> {
  const crashes = t.crashes();
  if (crashes.length > 0) throw new FuzzFinding(`the daemon raised an error nothing caught (${after})`, { crashes });
  const errors = t.errorLog();
  if (errors.length > 0) throw new FuzzFinding(`the daemon logged errors (${after})`, { errors: errors.slice(0, 5) });
  const res = await api(t, 'GET', '/health', undefined, timeoutMs).catch((err: unknown) => ({ status: 0, json: String(err) }));
  if (res.status !== 200) throw new FuzzFinding(`/health answered ${res.status} ${after}`, { json: res.json });
}

/** Runs one surface; a failure throws fast-check's report (seed, path, shrunk case, the finding). */
export async function fuzzSurface(name: SurfaceName, t: FuzzTarget, ledger: FuzzLedger, opts: FuzzRunOptions): Promise<void> {
  const s = SURFACES[name];
  let n = 0;
  const every = opts.healthEvery ?? 50;
  await fc.assert(
    fc.asyncProperty(s.cases(t), async (c) => {
      const started = performance.now();
      await s.run(t, ledger, c, { timeoutMs: opts.timeoutMs });
      if (process.env.TETHER_FUZZ_VERBOSE)
        process.stderr.write(`${name} #${n} ${(performance.now() - started).toFixed(0)} ms: ${fc.stringify(c).slice(0, 3000)}\n`);
      if (++n % every === 0) await expectHealthy(t, opts.timeoutMs, `after ${n} ${name} cases`);
    }),
    { seed: opts.seed, numRuns: opts.numRuns, ...(opts.path ? { path: opts.path } : {}) },
  );
  await expectHealthy(t, opts.timeoutMs, `after the ${name} surface`);
}

/** What the fuzzer checks of tmux and the pane once the surfaces ran. */
export interface FuzzProbes {
  /** The tmux server's sessions now. */
  sessions(): Promise<string[]>;
  /** Everything the live session's pane program has read so far. */
  paneInput(): Buffer;
  /** What changed in the fuzzer's repository (branches, worktrees) and is left in the worktrees folder, or null when nothing. */
  repoChanged(): Record<string, unknown> | null;
  /** A session's `@description` as tmux holds it. */
  description(id: string): Promise<string>;
  /** Waits until `fn` holds (or throws after its bound, saying what it waited for). */
  eventually(fn: () => boolean | Promise<boolean>, what: string): Promise<void>;
}

/**
 * Checks the ledger against the world: no canary ran, tmux holds exactly the sessions it held
 * (`sessions`) plus none the daemon did not create, the repository has the branches and
 * worktrees it had and no worktree folder is left, every input the daemon took reached the pane
 * as sent and no input it refused did, descriptions read back from tmux as set.
 */
export async function verifyLedger(t: FuzzTarget, ledger: FuzzLedger, probes: FuzzProbes, sessions: readonly string[]): Promise<void> {
  const ran = readdirSync(t.canaryDir);
  if (ran.length > 0) throw new FuzzFinding('hostile input was run: canaries fired', { ran });
  if (ledger.created.size > 0) throw new FuzzFinding('sessions the fuzzer made could not be deleted', { created: [...ledger.created] });
  if (ledger.worktrees.size > 0) throw new FuzzFinding('worktrees the fuzzer made could not be removed', { made: [...ledger.worktrees] });
  const repo = probes.repoChanged();
  if (repo) throw new FuzzFinding('the repository or the worktrees folder is not as it was', repo);
  const now = (await probes.sessions()).sort();
  if (JSON.stringify(now) !== JSON.stringify([...sessions].sort()))
    throw new FuzzFinding('tmux holds other sessions than the daemon said', { now, expected: sessions });
  const missing = () => [...ledger.delivered].filter(([, bytes]) => !probes.paneInput().includes(bytes)).map(([m]) => m);
  await probes
    .eventually(() => missing().length === 0, `every input the daemon took (${ledger.delivered.size}) in the pane`)
    .catch(() => {
      throw new FuzzFinding('input the daemon took never reached the pane', {
        missing: missing()
          .slice(0, 20)
          .map((m) => `${m} ${ledger.origin.get(m) ?? ''}`),
        of: ledger.delivered.size,
      });
    });
  const input = probes.paneInput();
  const leaked = [...ledger.refused].filter((m) => input.includes(m));
  if (leaked.length > 0)
    throw new FuzzFinding('input the daemon refused reached the pane', {
      leaked: leaked.slice(0, 20).map((m) => `${m} ${ledger.origin.get(m) ?? ''}`),
    });
  for (const [id, want] of ledger.descriptions) {
    if (!now.includes(id)) continue;
    const got = await probes.description(id);
    if (got !== want) throw new FuzzFinding(`the description of ${id} is not what the daemon said it set`, { want, got });
  }
  await expectHealthy(t, 30_000, 'at the end');
}
