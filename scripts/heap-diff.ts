/**
 * What grew between two heap snapshots of the daemon (the days soak writes them with
 * TETHER_BENCH_DAYS_SNAPSHOTS=3,9, docs/benchmarks.md): the objects counted by kind and
 * constructor, their count and their own size in each, the kinds that grew most first.
 *
 *   node --import tsx scripts/heap-diff.ts before.heapsnapshot after.heapsnapshot [rows]
 *
 * Own sizes, not retained ones: what leaks shows as more of something, and its holder is then
 * found by reading the code that makes it (or by opening the snapshot in a browser's tools).
 */
import { readFileSync } from 'node:fs';

interface Snapshot {
  readonly snapshot: { readonly meta: { readonly node_fields: string[]; readonly node_types: [string[], ...unknown[]] } };
  readonly nodes: number[];
  readonly strings: string[];
}

type Tally = Map<string, { count: number; bytes: number }>;

/** Objects by `kind:name` (a constructor's name for objects, the kind alone for strings, code, arrays). */
function tally(path: string): Tally {
  const snap = JSON.parse(readFileSync(path, 'utf8')) as Snapshot;
  const fields = snap.snapshot.meta.node_fields;
  const kinds = snap.snapshot.meta.node_types[0];
  const width = fields.length;
  const typeAt = fields.indexOf('type');
  const nameAt = fields.indexOf('name');
  const sizeAt = fields.indexOf('self_size');
  const out: Tally = new Map();
  for (let i = 0; i < snap.nodes.length; i += width) {
    const kind = kinds[snap.nodes[i + typeAt]!] ?? '?';
    const named = kind === 'object' || kind === 'closure' || kind === 'native';
    const key = named ? `${kind}:${snap.strings[snap.nodes[i + nameAt]!]!.slice(0, 60)}` : kind;
    const t = out.get(key) ?? { count: 0, bytes: 0 };
    t.count++;
    t.bytes += snap.nodes[i + sizeAt]!;
    out.set(key, t);
  }
  return out;
}

const [beforePath, afterPath, rowsArg] = process.argv.slice(2);
if (!beforePath || !afterPath) {
  process.stderr.write('usage: heap-diff.ts before.heapsnapshot after.heapsnapshot [rows]\n');
  process.exit(2);
}
const before = tally(beforePath);
const after = tally(afterPath);
const keys = new Set([...before.keys(), ...after.keys()]);
const rows = [...keys]
  .map((key) => {
    const a = before.get(key) ?? { count: 0, bytes: 0 };
    const b = after.get(key) ?? { count: 0, bytes: 0 };
    return { key, count: b.count - a.count, bytes: b.bytes - a.bytes, now: b };
  })
  .sort((x, y) => y.bytes - x.bytes);
const total = (t: Tally): number => [...t.values()].reduce((n, v) => n + v.bytes, 0);
process.stdout.write(`own sizes: ${(total(before) / 2 ** 20).toFixed(2)} MB -> ${(total(after) / 2 ** 20).toFixed(2)} MB\n`);
for (const r of rows.slice(0, Number(rowsArg ?? 30))) {
  process.stdout.write(
    `${(r.bytes / 1024).toFixed(0).padStart(8)} KB ${String(r.count).padStart(8)} objects  ${r.key} (now ${r.now.count}, ${(r.now.bytes / 1024).toFixed(0)} KB)\n`,
  );
}
