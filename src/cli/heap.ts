/**
 * The daemon's heap, sized from inside the process: `tether serve` started by hand (no node
 * flags) must be as lean as one started by tether's launchers.
 *
 * V8 starts the young generation at 1 MB semi-spaces and doubles them, up to 16 MB, whenever
 * enough objects survive a scavenge; loading the daemon's modules is exactly that, so they grew
 * to 16 MB at every start and were never given back: a quarter of an idle daemon's memory
 * (docs/benchmarks.md "Memory"). The maximum is fixed when the heap is made, so it cannot be
 * lowered here; the growth factor is read at each growth, so setting it to 1 keeps the
 * semi-spaces at their initial size. tether's garbage is short-lived (frames, JSON) and dies
 * in the young generation at any size; measured, the flood is unchanged.
 */
import { setFlagsFromString } from 'node:v8';

/** Keeps V8's young generation at its initial size for the rest of the process. */
export function holdYoungGeneration(): void {
  setFlagsFromString('--semi-space-growth-factor=1');
}
