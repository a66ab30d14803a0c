/**
 * The daemon's V8 settings, made from inside the process: `tether serve` started by hand (no
 * node flags) must be as lean as one started by tether's launchers. Set by main.ts before any
 * other module loads (docs/benchmarks.md "Memory").
 *
 * - The young generation. V8 starts it at 1 MB semi-spaces and doubles them, up to 16 MB,
 *   whenever enough objects survive a scavenge; loading the daemon's modules is exactly that,
 *   so they grew to 16 MB at every start and were never given back. The maximum is fixed when
 *   the heap is made, so it cannot be lowered here; the growth factor is read at each growth,
 *   so setting it to 1 keeps the semi-spaces at their initial size. tether's garbage is
 *   short-lived (frames, JSON) and dies in the young generation at any size.
 * - `--optimize-for-size`: V8 favours memory over speed where it has the choice (a tighter
 *   heap, smaller caches).
 * - `--no-sparkplug`: no baseline-compiled copy of warm functions beside their bytecode; hot
 *   code is still optimized.
 *
 * Measured, the flood and the keystroke echo are no worse than without them, within the noise
 * of a shared machine (docs/benchmarks.md "Memory").
 */
import { setFlagsFromString } from 'node:v8';

/** V8's flags for a long-lived, mostly idle daemon, for the rest of the process. */
export const DAEMON_V8_FLAGS: readonly string[] = ['--semi-space-growth-factor=1', '--optimize-for-size', '--no-sparkplug'];

/** Sets `DAEMON_V8_FLAGS`; call before the daemon's modules load. */
export function tuneHeapForDaemon(): void {
  for (const flag of DAEMON_V8_FLAGS) setFlagsFromString(flag);
}
