/**
 * The control-mode parser's throughput: ~64 MB of realistic `%output` lines (SGR-coloured text,
 * UTF-8, escaped CR/LF and tabs, a few hundred bytes to a few KB per line, as tmux writes them),
 * fed in 64 KiB chunks. Reports decoded pane MB/s (1 MB = 1e6 bytes), the median of several
 * runs, against the rate tmux itself emits in control mode.
 */
import { pathToFileURL } from 'node:url';
import { ControlParser } from '../src/tmux/control/control-codec.js';
import { encodeControlOutput } from '../src/tmux/control/control-escape.js';

/** tmux 3.3a emits ~5 MB/s of pane bytes in control mode on this machine (bench/tmux-baseline.ts). */
export const TMUX_CONTROL_MODE_MB_PER_SEC = 5;
const STREAM_BYTES = 64e6;
const CHUNK_BYTES = 64 * 1024;
const RUNS = 7;

/** A deterministic generator, so every run measures the same stream. */
function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const WORDS = [
  'const',
  'return',
  'function',
  'await',
  'import',
  'error:',
  'src/tmux/control/control-codec.ts',
  '│',
  '─',
  'héllo',
  '✓',
  '→',
  '日本語',
  '0x5c\\',
  'ok',
];

/** One terminal row: coloured words, a tab now and then, ending in CRLF. */
function terminalRow(rand: () => number): string {
  let row = '';
  const words = 4 + Math.floor(rand() * 14);
  for (let i = 0; i < words; i++) {
    const w = WORDS[Math.floor(rand() * WORDS.length)] as string;
    const r = rand();
    if (r < 0.25) row += `\x1b[${31 + Math.floor(rand() * 7)}m${w}\x1b[0m`;
    else if (r < 0.3) row += `\x1b[1;38;5;${Math.floor(rand() * 256)}m${w}\x1b[m`;
    else row += w;
    row += rand() < 0.1 ? '\t' : ' ';
  }
  return `${row}\r\n`;
}

/** The whole stream as one Buffer plus the number of pane bytes it decodes to. */
export function buildParserBenchStream(totalBytes = STREAM_BYTES): { stream: Buffer; payloadBytes: number } {
  const rand = lcg(0x7e7e);
  const lines: Buffer[] = [];
  let size = 0;
  let payloadBytes = 0;
  while (size < totalBytes) {
    // tmux writes what one read of the pty returned: a few hundred bytes up to a few KB.
    const target = 200 + Math.floor(rand() * rand() * 4000);
    let text = '';
    while (text.length < target) text += terminalRow(rand);
    const payload = Buffer.from(text, 'utf8');
    const line = encodeControlOutput(`%${1 + Math.floor(rand() * 3)}`, payload);
    lines.push(line);
    size += line.length;
    payloadBytes += payload.length;
  }
  return { stream: Buffer.concat(lines, size), payloadBytes };
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
}

/** Median decoded MB/s over several runs; also the escaped stream's MB/s, for reference. */
export async function runParserBench(): Promise<{ mbPerSec: number; streamMbPerSec: number; runs: number[] }> {
  const { stream, payloadBytes } = buildParserBenchStream();
  const chunks: Buffer[] = [];
  for (let i = 0; i < stream.length; i += CHUNK_BYTES) chunks.push(stream.subarray(i, i + CHUNK_BYTES));
  const seconds: number[] = [];
  for (let run = 0; run < RUNS + 1; run++) {
    let decoded = 0;
    const parser = new ControlParser((event) => {
      if (event.type === 'output') decoded += event.data.length;
    });
    const start = performance.now();
    for (const chunk of chunks) parser.push(chunk);
    parser.end();
    const elapsed = (performance.now() - start) / 1000;
    if (decoded !== payloadBytes) throw new Error(`decoded ${decoded} bytes, expected ${payloadBytes}`);
    if (run > 0) seconds.push(elapsed); // the first run warms the JIT up
    await new Promise((r) => setImmediate(r));
  }
  const mid = median(seconds);
  return {
    mbPerSec: payloadBytes / 1e6 / mid,
    streamMbPerSec: stream.length / 1e6 / mid,
    runs: seconds.map((s) => payloadBytes / 1e6 / s),
  };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const r = await runParserBench();
  const ratio = r.mbPerSec / TMUX_CONTROL_MODE_MB_PER_SEC;
  process.stdout.write(
    `control-mode parser: ${r.mbPerSec.toFixed(0)} MB/s decoded (${r.streamMbPerSec.toFixed(0)} MB/s of escaped stream), ` +
      `median of ${r.runs.length} runs [${r.runs.map((v) => v.toFixed(0)).join(', ')}]\n` +
      `vs tmux 3.3a control mode (~${TMUX_CONTROL_MODE_MB_PER_SEC} MB/s): ${ratio.toFixed(1)}x (target > 40x)\n`,
  );
}
