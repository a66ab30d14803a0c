/**
 * `npm run bench`: every benchmark, each reported against a baseline measured in the same run
 * (never a timed assertion). Add a scenario by exporting a `run…Bench` from a bench file and
 * listing it here.
 */
import { runParserBench } from './parser.bench.js';
import { measureTmuxControlRate } from './tmux-baseline.js';

interface Row {
  readonly name: string;
  readonly value: string;
  readonly baseline: string;
  readonly ratio: string;
  readonly target: string;
}

async function main(): Promise<void> {
  const rows: Row[] = [];
  // The baseline, measured now: how fast this machine's tmux emits a flood in control mode.
  const tmux = await measureTmuxControlRate(20);
  const parser = await runParserBench();
  rows.push({
    name: 'control-mode parser (decode %output)',
    value: `${parser.mbPerSec.toFixed(0)} MB/s`,
    baseline: `${tmux.mbPerSec.toFixed(1)} MB/s (tmux -C flood, measured in this run)`,
    ratio: `${(parser.mbPerSec / tmux.mbPerSec).toFixed(1)}x`,
    target: '> 40x',
  });
  const w = (s: string, n: number) => s.padEnd(n);
  process.stdout.write(`${w('benchmark', 40)}${w('value', 14)}${w('ratio', 10)}${w('target', 10)}baseline\n`);
  for (const r of rows) process.stdout.write(`${w(r.name, 40)}${w(r.value, 14)}${w(r.ratio, 10)}${w(r.target, 10)}${r.baseline}\n`);
}

await main();
