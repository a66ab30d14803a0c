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

/**
 * Live sessions beyond which the daemon stops favouring memory over pauses: the young
 * generation may grow again (V8's own growth factor, 2, up to the semi-space maximum node was
 * started with) and `--optimize-for-size` is off. The garbage of many busy streams does not die
 * within 1 MB semi-spaces: at 100 sessions printing 20 lines a second, 25 scavenges a second
 * promoted enough for a mark-compact every second or two, pauses of up to a few hundred
 * milliseconds on a loaded machine. With the young generation free to grow but V8 still
 * optimizing for size, it kept it small all the same (4.5 scavenges a second) and ran a
 * mark-compact every 5 s whose pause (13-27 ms) set the keystroke echo's p99 at 100 sessions;
 * without it, 1.8 scavenges a second and the longest pause 8 ms, for about 15 MB more RSS at
 * 100 busy sessions (docs/benchmarks.md "Scale"). Below it, both are back; V8 gives the grown
 * space back once the allocation rate drops.
 */
export const GROW_YOUNG_GENERATION_ABOVE_SESSIONS = 16;

let tuned = false;
let growing = false;

/** Sets `DAEMON_V8_FLAGS`; call before the daemon's modules load. */
export function tuneHeapForDaemon(): void {
  for (const flag of DAEMON_V8_FLAGS) setFlagsFromString(flag);
  tuned = true;
}

/** The number of live sessions changed: many of them get the heap of a busy server (only where `tuneHeapForDaemon` set a lean one). */
export function fitYoungGeneration(liveSessions: number): void {
  const grow = liveSessions > GROW_YOUNG_GENERATION_ABOVE_SESSIONS;
  if (!tuned || grow === growing) return;
  growing = grow;
  setFlagsFromString(`--semi-space-growth-factor=${grow ? 2 : 1}`);
  setFlagsFromString(grow ? '--no-optimize-for-size' : '--optimize-for-size');
}

/** Counts the sessions with a live pane and fits the young generation to their number as it changes. */
export function livePaneCounter(fit: (sessions: number) => void = fitYoungGeneration): { added(): void; removed(): void } {
  let live = 0;
  return { added: () => fit(++live), removed: () => fit(--live) };
}
