/**
 * How a daemon process is started by tether's own launchers (`npm start`, the pi extension,
 * the test and bench helpers): node's flags for a long-lived, mostly idle server.
 *
 * V8's young generation grows to 16 MB semi-spaces by default and keeps them: a third of an
 * idle daemon's memory. Two are plenty for tether's short-lived garbage (chunk frames, JSON
 * frames); measured, the resident size at 10 idle sessions goes from ~110 MB to ~85 MB with
 * no loss in the 100 MB flood (docs/benchmarks.md). The flag only works at start (V8 sizes
 * the heap then), so it is an argument, not something the daemon can set on itself.
 */
export const DAEMON_NODE_ARGS: readonly string[] = ['--max-semi-space-size=2'];
