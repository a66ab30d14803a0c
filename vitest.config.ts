import { defineConfig } from 'vitest/config';
import { LongestFirst } from './test/sequencer.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Real tmux servers and daemons: most of a test's time is spent waiting on them, not on the
    // CPU (a full run with three at once kept two cores about half busy), so five files run at
    // once on two cores (docs/testing.md "Time").
    pool: 'forks',
    maxWorkers: 5,
    // A worker runs its files one after another in the same process, modules loaded once: a
    // fresh process per file cost more CPU in loading than most files spend testing. Test files
    // leave the process as they found it (environment, timers, listeners).
    isolate: false,
    // The longest files first (test/times.json): docs/testing.md "Time".
    sequence: { sequencer: LongestFirst },
  },
});
