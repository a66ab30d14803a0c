/**
 * `npm run test:times`: how long each test file took in a vitest JSON report (by default the
 * one `npm run test:times` has vitest write: test-artifacts/vitest-times.json), written to
 * test/times.json, which the suite's sequencer reads to start the longest files first
 * (vitest.config.ts), and printed as the table of docs/testing.md "Time". Run it on a quiet
 * machine after a change that moves a file's time by more than a few seconds.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const TIMES = join(ROOT, 'test/times.json');

interface Report {
  readonly testResults: readonly {
    readonly name: string;
    readonly startTime: number;
    readonly endTime: number;
    readonly assertionResults: readonly unknown[];
  }[];
}

const file = process.argv[2] ?? join(ROOT, 'test-artifacts/vitest-times.json');
const report = JSON.parse(readFileSync(file, 'utf8')) as Report;
const rows = report.testResults
  .map((r) => ({
    file: relative(ROOT, r.name),
    seconds: Math.round((r.endTime - r.startTime) / 100) / 10,
    tests: r.assertionResults.length,
  }))
  .sort((a, b) => b.seconds - a.seconds || a.file.localeCompare(b.file));
const seconds = Object.fromEntries(rows.map((r) => [r.file, r.seconds]));
writeFileSync(
  TIMES,
  `${JSON.stringify({ $comment: 'Seconds per test file in a full run (npm run test:times); the sequencer starts the longest first.', seconds }, null, 2)}\n`,
);
process.stdout.write(`| file | tests | seconds |\n| --- | --- | --- |\n`);
for (const r of rows) process.stdout.write(`| ${r.file} | ${r.tests} | ${r.seconds.toFixed(1)} |\n`);
process.stdout.write(
  `\n${rows.length} files, ${rows.reduce((s, r) => s + r.seconds, 0).toFixed(0)} s in all; written to ${relative(ROOT, TIMES)}\n`,
);
