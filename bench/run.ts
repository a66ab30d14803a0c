/**
 * `npm run bench`: every benchmark, each reported against a baseline measured in the same run
 * (never a timed assertion). Add a scenario by exporting a `run…Bench` from a bench file and
 * listing it in SCENARIOS. `TETHER_BENCH_ONLY=flood,echo` (or `npm run bench -- flood echo`)
 * runs a subset; docs/benchmarks.md lists the other knobs. A `--<name>=<value>` argument sets
 * the knob `TETHER_BENCH_<NAME>` (`npm run bench -- days --days-minutes=120` is
 * `TETHER_BENCH_DAYS_MINUTES=120 npm run bench -- days`).
 */
import { ControlParser } from '../src/tmux/control/control-codec.js';
import { runActivityBench } from './activity.bench.js';
import { runAsksBench } from './asks.bench.js';
import { runStopsBench } from './stops.bench.js';
import { runPromptsBench } from './prompts.bench.js';
import { runUsageBench } from './usage.bench.js';
import { runDaysBench } from './days.bench.js';
import { runDeflateBench } from './deflate.bench.js';
import { runEchoBench } from './echo.bench.js';
import { runFloodBench } from './flood.bench.js';
import { runFuzzBench } from './fuzz.bench.js';
import { runHostileBench } from './hostile.bench.js';
import { benchWantsTls } from './harness.js';
import type { Row } from './figures.js';
import { runParserBench } from './parser.bench.js';
import { PEERS } from './peers.js';
import { runVibeTunnelBench } from './vibetunnel.bench.js';
import { runWettyBench } from './wetty.bench.js';
import { runReconnectBench } from './reconnect.bench.js';
import { runScaleBench } from './scale.bench.js';
import { runSearchBench } from './search.bench.js';
import { runPausedBench, runSoakBench } from './soak.bench.js';
import { runTokenVerifyBench } from './token-verify.bench.js';
import { runWakeBench } from './wake.bench.js';
import { measureTmuxControlRate } from './tmux-baseline.js';

/** Decodes a recorded control-mode stream several times; median pane MB/s decoded. */
function parseRecording(recording: Buffer, runs = 7): { mbPerSec: number } {
  const chunks: Buffer[] = [];
  for (let i = 0; i < recording.length; i += 65536) chunks.push(recording.subarray(i, i + 65536));
  const rates: number[] = [];
  for (let run = 0; run <= runs; run++) {
    let decoded = 0;
    const parser = new ControlParser((e) => {
      if (e.type === 'output') decoded += e.data.length;
    });
    const start = performance.now();
    for (const c of chunks) parser.push(c);
    const seconds = (performance.now() - start) / 1000;
    if (run > 0) rates.push(decoded / 1e6 / seconds); // the first run warms the JIT up
  }
  rates.sort((a, b) => a - b);
  return { mbPerSec: rates[Math.floor(rates.length / 2)]! };
}

async function parserRows(): Promise<Row[]> {
  // The baseline, measured now: how fast this machine's tmux emits a flood in control mode.
  const tmux = await measureTmuxControlRate(20);
  const parser = await runParserBench();
  const replay = parseRecording(tmux.recording);
  const row = (name: string, mbPerSec: number): Row => ({
    name: `control-mode parser (${name})`,
    value: `${mbPerSec.toFixed(0)} MB/s`,
    baseline: `${tmux.mbPerSec.toFixed(1)} MB/s (tmux -C flood, measured in this run)`,
    ratio: `${(mbPerSec / tmux.mbPerSec).toFixed(1)}x`,
    target: '> 40x',
  });
  return [row('the flood tmux emitted', replay.mbPerSec), row('decode %output', parser.mbPerSec)];
}

/** What a scenario answers: its rows, and optionally a markdown table printed after the report (docs/benchmarks.md shows it). */
type ScenarioResult = Row[] | { readonly rows: Row[]; readonly markdown: string };

/** Every scenario by name, in the order they run; each starts and stops its own daemon and tmux. */
const SCENARIOS: Readonly<Record<string, () => Promise<ScenarioResult>>> = {
  parser: parserRows,
  flood: async () => (await runFloodBench()).rows,
  echo: async () => (await runEchoBench()).rows,
  reconnect: async () => (await runReconnectBench()).rows,
  wake: runWakeBench,
  deflate: runDeflateBench,
  scale: runScaleBench,
  search: runSearchBench,
  paused: runPausedBench,
  soak: runSoakBench,
  tokens: runTokenVerifyBench,
  fuzz: runFuzzBench,
  hostile: runHostileBench,
  asks: runAsksBench,
  stops: runStopsBench,
  prompts: runPromptsBench,
  usage: runUsageBench,
  activity: runActivityBench,
  // The days soak's smoke run (10 minutes a deflate setting); hours with --days-minutes.
  days: runDaysBench,
  // BENCH_PEERS=0 leaves the peers out (they install from the registry on first use).
  ...(process.env.BENCH_PEERS === '0' ? {} : { peers: async () => [...(await runWettyBench()), ...(await runVibeTunnelBench())] }),
};

/** `--days-minutes=120` -> TETHER_BENCH_DAYS_MINUTES=120; answers the other arguments (scenario names). */
function takeFlags(args: readonly string[]): string[] {
  const names: string[] = [];
  for (const a of args) {
    const flag = /^--([a-z][a-z0-9-]*)=(.*)$/.exec(a);
    if (!flag) {
      if (a.startsWith('--')) throw new Error(`${a}: a knob is --<name>=<value> (TETHER_BENCH_<NAME>)`);
      names.push(a);
      continue;
    }
    process.env[`TETHER_BENCH_${flag[1]!.toUpperCase().replace(/-/g, '_')}`] = flag[2]!;
  }
  return names;
}

async function main(): Promise<void> {
  // `npm run bench -- fuzz echo` names scenarios as TETHER_BENCH_ONLY=fuzz,echo does.
  const named = takeFlags(process.argv.slice(2)).join(',') || process.env.TETHER_BENCH_ONLY;
  const only = named
    ?.split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const unknown = only?.filter((n) => !Object.hasOwn(SCENARIOS, n)) ?? [];
  if (unknown.length > 0)
    throw new Error(`TETHER_BENCH_ONLY: unknown scenario ${unknown.join(', ')} (known: ${Object.keys(SCENARIOS).join(', ')})`);
  process.stdout.write(
    `tether benchmarks: node ${process.version}, ${benchWantsTls() ? 'TLS asked for (TETHER_BENCH_TLS=1)' : 'plain http (TETHER_BENCH_TLS=1 for TLS)'}\n`,
  );
  const w = (s: string, n: number) => s.padEnd(n);
  const header = `${w('benchmark', 64)}${w('value', 22)}${w('ratio', 12)}${w('target', 16)}baseline (same run)\n`;
  const all: Row[] = [];
  const tables: string[] = [];
  for (const [name, run] of Object.entries(SCENARIOS)) {
    if (only && !only.includes(name)) continue;
    const start = performance.now();
    const result = await run();
    if (Array.isArray(result)) all.push(...result);
    else {
      all.push(...result.rows);
      tables.push(`${name}:\n\n${result.markdown}\n`);
    }
    process.stderr.write(`[${name}: ${((performance.now() - start) / 1000).toFixed(0)} s]\n`);
  }
  process.stdout.write(header);
  for (const r of all) process.stdout.write(`${w(r.name, 64)}${w(r.value, 22)}${w(r.ratio, 12)}${w(r.target, 16)}${r.baseline}\n`);
  for (const t of tables) process.stdout.write(`\n${t}`);
  const peersRan = process.env.BENCH_PEERS !== '0' && (!only || only.includes('peers'));
  for (const peer of PEERS)
    process.stdout.write(
      `peer ${peer.name}: ${peersRan || peer.status.startsWith('skipped') ? peer.status : 'not run (BENCH_PEERS=0 or TETHER_BENCH_ONLY)'}\n`,
    );
}

await main();
