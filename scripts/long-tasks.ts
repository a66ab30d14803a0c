/**
 * The long tasks in CPU profiles of the daemon (the probe writes one a sample window with
 * TETHER_BENCH_PROBE_PROFILE=<dir>, bench/daemon-probe.ts): stretches in which the main thread
 * never went idle, longer than a threshold, each with the functions that took its time. What
 * holds the event loop for 20 ms and more is found here, not guessed.
 *
 *   node --import tsx scripts/long-tasks.ts [--ms=20] [--top=25] window-*.cpuprofile
 *
 * A profile's samples are taken every millisecond or so; a task is a run of samples none of
 * which is `(idle)` (or `(program)` at its edges). Its time is the sum of the samples' deltas.
 */
import { existsSync, readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { fileURLToPath } from 'node:url';

interface Frame {
  readonly functionName: string;
  readonly url: string;
  readonly lineNumber: number;
  readonly columnNumber: number;
}
interface ProfileNode {
  readonly id: number;
  readonly callFrame: Frame;
  readonly parent?: number;
  readonly children?: number[];
}
interface Profile {
  readonly nodes: ProfileNode[];
  readonly samples: number[];
  readonly timeDeltas: number[];
}

const args = process.argv.slice(2);
const option = (name: string, fallback: number): number => {
  const a = args.find((x) => x.startsWith(`--${name}=`));
  return a ? Number(a.slice(name.length + 3)) : fallback;
};
const thresholdMs = option('ms', 20);
const top = option('top', 25);
const files = args.filter((a) => !a.startsWith('--'));

// The daemon runs a minified bundle (scripts/bundle.ts) with source maps beside it: a frame of it is named by its source.
const maps = new Map<string, SourceMap | null>();
const mapOf = (url: string): SourceMap | null => {
  if (!maps.has(url)) {
    const path = url.startsWith('file://') ? fileURLToPath(url) : url;
    maps.set(url, existsSync(`${path}.map`) ? new SourceMap(JSON.parse(readFileSync(`${path}.map`, 'utf8')) as never) : null);
  }
  return maps.get(url) ?? null;
};
const where = (f: Frame): string => {
  const map = f.url.includes('/dist/') ? mapOf(f.url) : null;
  // What node's SourceMap answers for a position it maps (an empty object for one it does not).
  const entry: { originalSource?: string; originalLine?: number; name?: string } | undefined = map?.findEntry(f.lineNumber, f.columnNumber);
  if (entry?.originalSource)
    return `${entry.name ?? f.functionName} ${entry.originalSource.split('/').slice(-2).join('/')}:${(entry.originalLine ?? 0) + 1}`;
  return `${f.functionName || '(anonymous)'} ${f.url.split('/').slice(-2).join('/')}:${f.lineNumber + 1}`;
};
const nameOf = (f: Frame): string => (f.url.includes('/dist/') ? where(f).split(' ')[0]! : f.functionName || '(anonymous)');

interface Task {
  readonly file: string;
  readonly ms: number;
  readonly self: Map<string, number>;
  readonly stacks: Map<string, number>;
}

const tasks: Task[] = [];
let totalMs = 0;
for (const file of files) {
  const p = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  /** The stack of a sample, outermost first, without the root. */
  const stackOf = (id: number): ProfileNode[] => {
    const out: ProfileNode[] = [];
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) out.unshift(byId.get(cur)!);
    return out.slice(1);
  };
  let run: { ms: number; self: Map<string, number>; stacks: Map<string, number> } | null = null;
  const close = (): void => {
    if (run && run.ms >= thresholdMs) tasks.push({ file, ...run });
    run = null;
  };
  for (let i = 0; i < p.samples.length; i++) {
    const node = byId.get(p.samples[i]!)!;
    // A sample's time is the delta to the next one.
    const ms = (p.timeDeltas[i + 1] ?? 0) / 1000;
    totalMs += ms;
    const name = node.callFrame.functionName;
    if (name === '(idle)') {
      close();
      continue;
    }
    run ??= { ms: 0, self: new Map(), stacks: new Map() };
    run.ms += ms;
    const self = where(node.callFrame);
    run.self.set(self, (run.self.get(self) ?? 0) + ms);
    // The outermost frames of tether's own code: which path the task ran.
    const stack = stackOf(node.id)
      .filter((n) => n.callFrame.url.includes('/dist/') || n.callFrame.url.includes('/src/'))
      .slice(0, 4)
      .map((n) => nameOf(n.callFrame))
      .join(' > ');
    run.stacks.set(stack || '(outside tether)', (run.stacks.get(stack || '(outside tether)') ?? 0) + ms);
  }
  close();
}

const sum = tasks.reduce((n, t) => n + t.ms, 0);
process.stdout.write(
  `${files.length} profiles, ${(totalMs / 1000).toFixed(1)} s; ${tasks.length} tasks of ${thresholdMs} ms or more, ${(sum / 1000).toFixed(2)} s in all\n`,
);
// Across every long task: where their time went.
const overall = new Map<string, number>();
const paths = new Map<string, number>();
for (const t of tasks) {
  for (const [k, v] of t.self) overall.set(k, (overall.get(k) ?? 0) + v);
  for (const [k, v] of t.stacks) paths.set(k, (paths.get(k) ?? 0) + v);
}
const list = (m: Map<string, number>, n: number): string =>
  [...m.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([k, v]) => `  ${v.toFixed(0).padStart(7)} ms  ${k}`)
    .join('\n');
process.stdout.write(`\nself time in long tasks:\n${list(overall, top)}\n\ntether's outer frames in long tasks:\n${list(paths, top)}\n`);
process.stdout.write('\nthe longest tasks:\n');
for (const t of [...tasks].sort((a, b) => b.ms - a.ms).slice(0, 10)) {
  process.stdout.write(`${t.ms.toFixed(0)} ms (${t.file.split('/').pop()}):\n${list(t.stacks, 3)}\n${list(t.self, 4)}\n`);
}
