/**
 * Hostile input, always: a fuzzer over everything a peer can send, before and after the token,
 * against a daemon serving TLS as it does by default (testkit/fuzz: every route of the server's
 * own table with bodies and queries from its schemas, HTTP framing spoiled byte by byte,
 * WebSocket handshakes and frames, pairing, bytes that are not the protocol). A fixed seed and a
 * few hundred cases here; `npm run bench` runs a long one with a random seed
 * (docs/benchmarks.md "Fuzzing").
 *
 * Nothing crashes, every refusal is a status or close code docs/api.md gives, and no input ever
 * reaches tmux or a shell: canaries that would leave a file if anything ran them leave none,
 * tmux holds exactly the sessions the daemon said it made, and the pane's program read exactly
 * the input the daemon took, and none it refused.
 *
 * A failure prints the seed, the path and the shrunk case; run it again with
 * TETHER_FUZZ_SEED=<seed> TETHER_FUZZ_PATH=<path> and `-t '<surface>'`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DOCUMENTED_STATUSES, routeKey } from '../../testkit/fuzz/oracle.js';
import { expectHealthy, FuzzLedger, fuzzSurface, verifyLedger, type FuzzTarget, type SurfaceName } from '../../testkit/fuzz/run.js';
import { FUZZ_SESSION, fuzzProbes, fuzzTarget, fuzzWorld, prepareCertificate, sinkReady } from '../../testkit/fuzz/world.js';
import { useInProcessDaemon } from '../helpers/daemon-fixture.js';
import { eventually } from '../helpers/tmux.js';

const SEED = Number(process.env.TETHER_FUZZ_SEED ?? 20_261_126);
const PATH = process.env.TETHER_FUZZ_PATH;
/** Cases per surface: a few seconds in all on a quiet machine. */
const RUNS: readonly { surface: SurfaceName; runs: number }[] = [
  { surface: 'requests', runs: 250 },
  { surface: 'raw-http', runs: 150 },
  { surface: 'upgrades', runs: 120 },
  { surface: 'frames', runs: 60 },
  { surface: 'pairing', runs: 40 },
  { surface: 'noise', runs: 30 },
];
/** One exchange's bound: generous, a busy machine is slow; a daemon that hangs still fails. */
const EXCHANGE_MS = 20_000;

describe('fuzz: everything a peer can send, before and after the token', () => {
  const world = fuzzWorld();
  const fx = useInProcessDaemon(world.toml, { prepare: ({ home }) => prepareCertificate(home.dataDir), after: () => world.cleanup() });
  const ledger = new FuzzLedger();
  let t: FuzzTarget;
  let detach = () => undefined as void;
  const tmux = (...args: string[]) => fx.tmux.tmux(...args);
  const wait = (fn: () => boolean | Promise<boolean>, what: string) => eventually(fn, 30_000, 50, what).then(() => undefined);

  beforeAll(async () => {
    ({ target: t, detach } = await fuzzTarget(world, {
      base: fx.d.base,
      token: fx.d.token,
      routes: fx.d.routes,
      dataDir: fx.home.dataDir,
      log: () => fx.d.stderr(),
    }));
    await sinkReady(tmux, wait);
  }, 60_000);
  afterAll(() => detach());

  it("fuzzes every route of the server's table, each with the statuses docs/api.md gives it", () => {
    const keys = fx.d.routes.filter((r) => r.method !== 'HEAD').map((r) => routeKey(r.method, r.url));
    expect(keys.filter((k) => !(k in DOCUMENTED_STATUSES))).toEqual([]);
    expect(fx.d.routes.filter((r) => r.method === 'POST' && r.url === '/sessions')[0]?.schema.body).toBeDefined();
  });

  it.each(RUNS)(
    '$surface: $runs cases, each answered as docs/api.md says',
    async ({ surface, runs }) => {
      await fuzzSurface(surface, t, ledger, { seed: SEED, numRuns: runs, timeoutMs: EXCHANGE_MS, ...(PATH ? { path: PATH } : {}) });
    },
    240_000,
  );

  it('ran nothing, kept exactly the sessions it reported, and the pane read exactly the input it took', async () => {
    await verifyLedger(t, ledger, fuzzProbes(world, tmux, wait), [FUZZ_SESSION]);
    await expectHealthy(t, EXCHANGE_MS, 'after the fuzzing');
    process.stdout.write(`fuzz (seed ${SEED}):\n${ledger.summary()}\n`);
  }, 120_000);
});
