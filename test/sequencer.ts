/**
 * The order the test files start in: the longest first, by test/times.json (seconds per file in
 * a full run, written by `npm run test:times`), so that no long file starts last and keeps one
 * worker busy while the others are done. A file the table does not know yet counts as
 * DEFAULT_SECONDS. vitest's own order needs the timings of an earlier run on the same machine,
 * which a fresh clone has not got.
 *
 * While the real agents are still being installed (`npm test` starts the tests beside the
 * install: TETHER_TEST_AGENTS_PENDING, see testkit/agent-bins.ts), the files that import the
 * agents (testkit/agent-bins.ts, through any chain of relative imports) wait at their import
 * until it is done. So they start only after enough of the other files, longest first, to keep
 * every worker busy for the install's usual time (AGENTS_INSTALL_SECONDS); then the rest, longest
 * first again.
 */
import { readFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** What a file the table does not know is taken to take: about a median e2e file. */
export const DEFAULT_SECONDS = 5;

const TIMES = new URL('./times.json', import.meta.url);

/** About how long the agents' install takes on a fresh clone, seconds (npm test's "agents" step). */
export const AGENTS_INSTALL_SECONDS = 50;

const AGENT_BINS = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'testkit', 'agent-bins.ts');

/** Whether `file` imports testkit/agent-bins.ts, directly or through its relative imports. */
export function importsAgents(file: string, seen = new Map<string, boolean>()): boolean {
  if (file === AGENT_BINS) return true;
  const known = seen.get(file);
  if (known !== undefined) return known;
  seen.set(file, false); // an import cycle answers no until the walk is done
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return false;
  }
  const found = [...text.matchAll(/\bfrom\s+'(\.{1,2}\/[^']+)'/g)].some((m) =>
    importsAgents(resolve(dirname(file), m[1]!.replace(/\.js$/, '.ts')), seen),
  );
  seen.set(file, found);
  return found;
}

export class LongestFirst extends BaseSequencer {
  private readonly seconds: Readonly<Record<string, number>> = (
    JSON.parse(readFileSync(TIMES, 'utf8')) as { seconds: Record<string, number> }
  ).seconds;

  override sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const weight = (f: TestSpecification) => this.seconds[relative(root, f.moduleId)] ?? DEFAULT_SECONDS;
    const longest = [...files].sort((a, b) => weight(b) - weight(a) || a.moduleId.localeCompare(b.moduleId));
    if (!process.env.TETHER_TEST_AGENTS_PENDING) return Promise.resolve(longest);
    // The agents are being installed: first the files that do not need them, enough to fill the wait.
    const seen = new Map<string, boolean>();
    const workers = Math.max(1, Number(this.ctx.config.maxWorkers) || 1);
    const first: TestSpecification[] = [];
    let filled = 0;
    for (const f of longest) {
      if (filled >= AGENTS_INSTALL_SECONDS * workers) break;
      if (importsAgents(f.moduleId, seen)) continue;
      first.push(f);
      filled += weight(f);
    }
    return Promise.resolve([...first, ...longest.filter((f) => !first.includes(f))]);
  }
}
