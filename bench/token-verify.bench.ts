/**
 * What checking the token file on every authentication costs: `TokenStore.verify` (a `stat` of
 * tokens.json, a read only when it changed, then the constant-time match) against the match
 * alone on records held in memory, the way the daemon verified before it looked per request.
 * Reports microseconds per call, the median of several runs, and the difference.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { TokenStore } from '../src/auth/token-store.js';
import type { Row } from './figures.js';

const CALLS = 20_000;
const RUNS = 7;
/** A store as a user has it: a handful of devices and scripts. */
const TOKENS = 8;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

/** Microseconds per call of `fn`, median of RUNS runs after one warm-up run. */
function perCall(fn: () => void): number {
  const runs: number[] = [];
  for (let run = 0; run <= RUNS; run++) {
    const start = performance.now();
    for (let i = 0; i < CALLS; i++) fn();
    if (run > 0) runs.push(((performance.now() - start) * 1000) / CALLS);
  }
  return median(runs);
}

export async function runTokenVerifyBench(): Promise<Row[]> {
  const dir = mkdtempSync(join(tmpdir(), 'tether-bench-tokens-'));
  try {
    const store = await TokenStore.open(dir);
    const tokens = Array.from({ length: TOKENS }, (_, i) => store.create(`device-${i}`).token);
    const last = tokens.at(-1)!;
    // The baseline: the same hashing and constant-time comparison, on digests in memory only.
    const digests = tokens.map((t) => createHash('sha256').update(t, 'utf8').digest());
    const inMemory = perCall(() => {
      const d = createHash('sha256').update(last, 'utf8').digest();
      let found = -1;
      for (let i = 0; i < digests.length; i++) if (timingSafeEqual(d, digests[i]!) && found < 0) found = i;
      if (found < 0) throw new Error('the token was not found');
    });
    const perRequest = perCall(() => {
      if (store.verify(last) === null) throw new Error('the token was not verified');
    });
    store.close();
    return [
      {
        name: `token check per request (stat of tokens.json + match, ${TOKENS} tokens)`,
        value: `${perRequest.toFixed(2)} µs`,
        baseline: `${inMemory.toFixed(2)} µs (the match on records in memory only)`,
        ratio: `+${(perRequest - inMemory).toFixed(2)} µs`,
        target: '< 100 µs per request',
      },
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  for (const row of await runTokenVerifyBench()) console.log(`${row.name}: ${row.value} (baseline ${row.baseline}, ${row.ratio})`);
}
