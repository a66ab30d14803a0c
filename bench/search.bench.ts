/**
 * Search of a 100 MB history (docs/api.md "Search"; target: an answer within 1 s): a disk buffer
 * of agent-like output (colours, a spinner's carriage returns, UTF-8, CRLF) is searched by
 * tether's search runner, in its worker thread, for a text that is nowhere (the whole buffer is
 * read), a text only near its start, and a common one (the newest 50). The baseline is GNU
 * `grep -c -i -F` over the same file in the same run (it does not strip escapes). While each
 * search runs, the daemon-side event loop's delay is sampled: the search must not block it.
 * Beside the wall time, the process's CPU time over the search (the worker's, in practice) is
 * reported: on a busy host the wall time mostly measures the wait for a core.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { SearchRunner } from '../src/history/search.js';
import { envNumber, median, type Row } from './figures.js';

const WORKER = new URL('../dist/history/search-worker.js', import.meta.url);

/** About `mb` MB of output an agent session could print, and a marker on line 100. */
function agentOutput(mb: number): Buffer {
  const parts: string[] = [];
  let bytes = 0;
  for (let i = 0; bytes < mb * 1e6; i++) {
    const line =
      i === 100
        ? 'needle-near-the-start: \u001b[1mfound\u001b[0m here\r\n'
        : i % 7 === 0
          ? `\u001b[32m✓\u001b[0m test ${i} passed \u001b[2m(${i % 97} ms)\u001b[0m\r\n`
          : i % 11 === 0
            ? `\u001b[36m⠋\u001b[0m Working…\r\u001b[2K\u001b[36m⠙\u001b[0m Working… ${i}\r\n`
            : `  ${i.toString(16).padStart(8, '0')}  \u001b[33mconst\u001b[0m value_${i} = compute(${i}, "text with spaces and ünïcode");\r\n`;
    parts.push(line);
    bytes += Buffer.byteLength(line);
  }
  return Buffer.from(parts.join(''));
}

async function timed(runner: SearchRunner, files: { log: string; idx: string }, q: string, limit: number) {
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  const cpu = process.cpuUsage();
  const start = performance.now();
  const result = await runner.search(files, q, limit);
  const ms = performance.now() - start;
  const used = process.cpuUsage(cpu);
  loop.disable();
  return { ms, cpuMs: (used.user + used.system) / 1000, matches: result.matches.length, loopP99Ms: loop.percentile(99) / 1e6 };
}

export async function runSearchBench(): Promise<Row[]> {
  const mb = envNumber('BENCH_SEARCH_MB', 100);
  const runs = envNumber('BENCH_SEARCH_RUNS', 5);
  const dir = mkdtempSync(join(tmpdir(), 'tether-search-bench-'));
  try {
    const log = join(dir, 'bench.log');
    const data = agentOutput(mb);
    writeFileSync(log, data);
    writeFileSync(join(dir, 'bench.idx'), `0 ${1e12}\n`);
    const files = { log, idx: join(dir, 'bench.idx') };
    // The bench runs under tsx; the worker runs the built code without it, as in the daemon.
    const runner = new SearchRunner(WORKER, []);
    const cases = [
      { name: 'a text found nowhere (the whole buffer read)', q: 'no-such-text-anywhere', limit: 50 },
      { name: 'a text near the start only', q: 'NEEDLE-near-the-START', limit: 50 },
      { name: 'a common text, newest 50', q: 'passed', limit: 50 },
    ];
    const rows: Row[] = [];
    for (const c of cases) {
      const grep: number[] = [];
      const ours: number[] = [];
      const cpu: number[] = [];
      let loop = 0;
      let matches = 0;
      for (let i = 0; i < runs; i++) {
        const g = performance.now();
        spawnSync('grep', ['-c', '-i', '-F', c.q, log]);
        grep.push(performance.now() - g);
        const t = await timed(runner, files, c.q, c.limit);
        ours.push(t.ms);
        cpu.push(t.cpuMs);
        loop = Math.max(loop, t.loopP99Ms);
        matches = t.matches;
      }
      rows.push({
        name: `search ${(data.length / 1e6).toFixed(0)} MB: ${c.name} (${matches} matches)`,
        value: `${median(ours).toFixed(0)} ms (CPU ${median(cpu).toFixed(0)} ms; event loop p99 delay ${loop.toFixed(1)} ms)`,
        baseline: `${median(grep).toFixed(0)} ms (grep -c -i -F, this run)`,
        ratio: `${(median(ours) / median(grep)).toFixed(1)}x`,
        target: '< 1000 ms',
      });
    }
    return rows;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
