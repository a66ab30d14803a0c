/**
 * The order the test files start in: the longest first, by test/times.json (seconds per file in
 * a full run, written by `npm run test:times`), so that no long file starts last and keeps one
 * worker busy while the others are done. A file the table does not know yet counts as
 * DEFAULT_SECONDS. vitest's own order needs the timings of an earlier run on the same machine,
 * which a fresh clone has not got.
 */
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** What a file the table does not know is taken to take: about a median e2e file. */
export const DEFAULT_SECONDS = 5;

const TIMES = new URL('./times.json', import.meta.url);

export class LongestFirst extends BaseSequencer {
  private readonly seconds: Readonly<Record<string, number>> = (
    JSON.parse(readFileSync(TIMES, 'utf8')) as { seconds: Record<string, number> }
  ).seconds;

  override sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const weight = (f: TestSpecification) => this.seconds[relative(root, f.moduleId)] ?? DEFAULT_SECONDS;
    return Promise.resolve([...files].sort((a, b) => weight(b) - weight(a) || a.moduleId.localeCompare(b.moduleId)));
  }
}
