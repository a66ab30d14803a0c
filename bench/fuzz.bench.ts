/**
 * The long fuzzing run (docs/benchmarks.md "Fuzzing"): the same surfaces and oracle as
 * test/chaos/fuzz.test.ts (testkit/fuzz), many more cases, a random seed unless
 * `TETHER_FUZZ_SEED` gives one (printed first, so a finding can be run again), against a daemon
 * in this process serving TLS on a private tmux server. `BENCH_FUZZ_RUNS` scales the cases (the
 * default runs 10 times the test's), `BENCH_FUZZ_ONLY=frames,requests` picks surfaces.
 *
 * A finding ends the run with fast-check's report: the seed, the path and the shrunk case. The
 * rows say how many cases each surface ran and at what cost per case, against a plain `GET
 * /health` over TLS measured in the same run.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { promisify } from 'node:util';
import { runDaemon } from '../src/daemon/root.js';
import { api } from '../testkit/fuzz/requests.js';
import { FuzzLedger, fuzzSurface, SURFACES, verifyLedger, type SurfaceName } from '../testkit/fuzz/run.js';
import {
  FUZZ_GIT_SESSION,
  FUZZ_SESSION,
  fuzzProbes,
  fuzzTarget,
  fuzzWorld,
  prepareCertificate,
  worldReady,
} from '../testkit/fuzz/world.js';
import { envNumber, waitFor, type Row } from './figures.js';

const run = promisify(execFile);

/** Cases per surface at BENCH_FUZZ_RUNS=1 (the test's own counts). */
const BASE_RUNS: Readonly<Record<SurfaceName, number>> = {
  requests: 250,
  'raw-http': 150,
  upgrades: 120,
  frames: 60,
  pairing: 40,
  noise: 30,
};
const EXCHANGE_MS = 30_000;

export async function runFuzzBench(): Promise<Row[]> {
  const seed = process.env.TETHER_FUZZ_SEED ? Number(process.env.TETHER_FUZZ_SEED) : Math.floor(Math.random() * 2 ** 31);
  const scale = envNumber('BENCH_FUZZ_RUNS', 10);
  const only = process.env.BENCH_FUZZ_ONLY?.split(',').map((s) => s.trim()) as SurfaceName[] | undefined;
  process.stderr.write(`[fuzz: seed ${seed}; TETHER_FUZZ_SEED=${seed} runs it again]\n`);
  const world = fuzzWorld();
  const dir = mkdtempSync(join(tmpdir(), 'tether-fuzz-bench-'));
  const socket = join(dir, 'tmux.sock');
  const tmux = async (...args: string[]) => (await run('tmux', ['-S', socket, ...args])).stdout;
  const dataDir = join(dir, 'data');
  mkdirSync(dataDir, { recursive: true });
  const configFile = join(dir, 'config.toml');
  writeFileSync(configFile, `bindAddress = "127.0.0.1:0"\n${world.toml}\n[tmux]\nsocket = ${JSON.stringify(socket)}\n`);
  await prepareCertificate(dataDir);
  let log = '';
  const stderr = new PassThrough();
  // Only its error lines are kept (the fuzzer reads nothing else of the log).
  stderr.on(
    'data',
    (d: Buffer) =>
      (log += d
        .toString('utf8')
        .split('\n')
        .filter((l) => /"level":(50|60)/.test(l))
        .map((l) => `${l}\n`)
        .join('')),
  );
  const env: NodeJS.ProcessEnv = { ...process.env, TETHER_CONFIG: configFile, TETHER_DATA_DIR: dataDir, TETHER_LOG_LEVEL: 'warn' };
  delete env.TMUX;
  const daemon = await runDaemon({ env, stdout: new PassThrough(), stderr, cwd: world.dir });
  const url = new URL(daemon.url);
  const { target, detach } = await fuzzTarget(world, {
    base: `${url.protocol}//${url.host}`,
    token: url.searchParams.get('token') ?? '',
    routes: daemon.routes,
    dataDir,
    log: () => log,
  });
  const eventually = async (fn: () => boolean | Promise<boolean>, what: string) => void (await waitFor(what, fn, 60_000, 50));
  try {
    await worldReady(target, tmux, eventually, EXCHANGE_MS);
    // The baseline: what one plain authenticated request costs here, now (after a warm-up).
    for (let i = 0; i < 20; i++) await api(target, 'GET', '/health', undefined, EXCHANGE_MS);
    const healthStart = performance.now();
    for (let i = 0; i < 100; i++) await api(target, 'GET', '/health', undefined, EXCHANGE_MS);
    const healthMs = (performance.now() - healthStart) / 100;
    const ledger = new FuzzLedger();
    const rows: Row[] = [];
    for (const name of Object.keys(SURFACES) as SurfaceName[]) {
      if (only && !only.includes(name)) continue;
      const numRuns = Math.round(BASE_RUNS[name] * scale);
      const start = performance.now();
      await fuzzSurface(name, target, ledger, {
        seed,
        numRuns,
        timeoutMs: EXCHANGE_MS,
        ...(process.env.TETHER_FUZZ_PATH ? { path: process.env.TETHER_FUZZ_PATH } : {}),
      });
      const perCase = (performance.now() - start) / numRuns;
      rows.push({
        name: `fuzz ${name}: ${SURFACES[name].about}`.slice(0, 63),
        value: `${numRuns} cases passed`,
        baseline: `${healthMs.toFixed(1)} ms per GET /health (TLS, same run); seed ${seed}`,
        ratio: `${(perCase / healthMs).toFixed(1)}x`,
        target: '0 findings',
      });
    }
    await verifyLedger(target, ledger, fuzzProbes(world, dataDir, tmux, eventually), [FUZZ_SESSION, FUZZ_GIT_SESSION]);
    process.stderr.write(`${ledger.summary()}\n`);
    return rows;
  } catch (err) {
    // A finding: the daemon's own error lines say what happened inside.
    if (log !== '') process.stderr.write(`the daemon's error log:\n${log.slice(-20_000)}\n`);
    throw err;
  } finally {
    detach();
    await daemon.stop();
    await tmux('kill-server').catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
    world.cleanup();
  }
}
