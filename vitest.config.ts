import { defineConfig } from 'vitest/config';
import { LongestFirst } from './test/sequencer.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Real tmux servers and daemons: keep parallelism at the machine's two cores.
    pool: 'forks',
    maxWorkers: 2,
    // The longest files first (test/times.json): docs/testing.md "Time".
    sequence: { sequencer: LongestFirst },
  },
});
