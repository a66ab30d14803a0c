/**
 * `npm run bench`: every benchmark, each reported against a baseline measured in the same run
 * (never a timed assertion). Add a scenario by exporting a `run…Bench` from a bench file and
 * listing it here.
 */
import { ControlParser } from '../src/tmux/control-codec.js';
import { runParserBench } from './parser.bench.js';
import { measureTmuxControlRate } from './tmux-baseline.js';

interface Row {
  readonly name: string;
  readonly value: string;
  readonly baseline: string;
  readonly ratio: string;
  readonly target: string;
}

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

async function main(): Promise<void> {
  const rows: Row[] = [];
  // The baseline, measured now: how fast this machine's tmux emits a flood in control mode.
  const tmux = await measureTmuxControlRate(20);
  const parser = await runParserBench();
  const replay = parseRecording(tmux.recording);
  rows.push({
    name: 'control-mode parser (the flood tmux emitted)',
    value: `${replay.mbPerSec.toFixed(0)} MB/s`,
    baseline: `${tmux.mbPerSec.toFixed(1)} MB/s (tmux -C flood, measured in this run)`,
    ratio: `${(replay.mbPerSec / tmux.mbPerSec).toFixed(1)}x`,
    target: '> 40x',
  });
  rows.push({
    name: 'control-mode parser (decode %output)',
    value: `${parser.mbPerSec.toFixed(0)} MB/s`,
    baseline: `${tmux.mbPerSec.toFixed(1)} MB/s (tmux -C flood, measured in this run)`,
    ratio: `${(parser.mbPerSec / tmux.mbPerSec).toFixed(1)}x`,
    target: '> 40x',
  });
  const w = (s: string, n: number) => s.padEnd(n);
  process.stdout.write(`${w('benchmark', 48)}${w('value', 14)}${w('ratio', 10)}${w('target', 10)}baseline\n`);
  for (const r of rows) process.stdout.write(`${w(r.name, 48)}${w(r.value, 14)}${w(r.ratio, 10)}${w(r.target, 10)}${r.baseline}\n`);
}

await main();
