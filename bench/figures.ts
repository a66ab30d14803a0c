/**
 * The figures of a benchmark: a row of the report, the statistics it is made of, the knobs read
 * from the environment, and a poll for a condition with a bound.
 */

/** One line of the report. Every value is set against a baseline measured in the same run. */
export interface Row {
  readonly name: string;
  readonly value: string;
  readonly baseline: string;
  readonly ratio: string;
  readonly target: string;
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A number from the environment, or the default. */
export function envNumber(name: string, def: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return def;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} must be a positive number, not "${raw}"`);
  return n;
}

/** Nearest-rank percentile (p in 0..100) of unsorted samples. */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1]!;
}

export const median = (samples: readonly number[]): number => percentile(samples, 50);

export const ms = (v: number): string => (v < 10 ? `${v.toFixed(2)} ms` : `${v.toFixed(0)} ms`);

/** Waits until `fn` is truthy, polling. */
export async function waitFor<T>(what: string, fn: () => T | Promise<T>, timeoutMs = 30_000, everyMs = 20): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

/** `<a> / <b>` formatted as a ratio. */
export const ratio = (a: number, b: number, digits = 2): string => `${(a / b).toFixed(digits)}x`;
