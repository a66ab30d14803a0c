/**
 * `npm run charts`: one page per machine in docs/statecharts, generated from the machine
 * definitions in src/machines: a Mermaid diagram (renders on a code host), an SVG rendered
 * offline by WebAssembly Graphviz, and the transition table with the contract row (docs/contract.md) each transition
 * implements. `npm run charts -- --check` fails when the committed pages differ from the code.
 */
import { readdirSync, readFileSync, writeFileSync, mkdirSync, existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { instance } from '@viz-js/viz';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/** Where the pages are committed. */
export const OUT = join(ROOT, 'docs/statecharts');

interface Node {
  id: string;
  key: string;
  type: string;
  initial?: { target: readonly { id: string }[] };
  description?: string;
  states: Record<string, Node>;
  transitions: ReadonlyMap<string, readonly Transition[]>;
  always?: readonly Transition[];
}
interface Transition {
  eventType: string;
  target?: readonly { id: string }[];
  guard?: string | { type: string } | ((...args: unknown[]) => unknown);
  description?: string;
  meta?: { row?: string | string[] };
  source: { id: string };
}
interface Machine {
  id: string;
  root: Node;
  config: { description?: string };
}

export interface Row {
  /** Identifies the transition: its source state node's id, its event descriptor and its place among that event's alternatives. */
  key: string;
  /** The full id of the source state node (`session.running.pane.alive`). */
  source: string;
  /** The event descriptor as the machine holds it (`xstate.done.actor.create`; '' for `always`). */
  eventType: string;
  /** The place of this transition among the alternatives for its event (guarded ones first). */
  index: number;
  /** The full ids of its targets; empty when it stays (no target). */
  targets: string[];
  from: string;
  event: string;
  guard: string;
  to: string;
  /** The rows of docs/contract.md's tables this transition implements. */
  rows: string[];
  tethersOwn: boolean;
  description: string;
}

const short = (machine: Machine, id: string): string => (id === machine.id ? '(root)' : id.slice(machine.id.length + 1));
const guardName = (g: Transition['guard']): string => {
  if (g === undefined) return '';
  if (typeof g === 'string') return g;
  if (typeof g === 'function') return g.name && g.name !== 'guard' ? g.name : 'inline guard';
  return g.type;
};
/** Event names as people read them: the generated ones shortened. */
export function eventLabel(ev: string): string {
  if (ev === '') return 'always';
  if (ev.startsWith('xstate.done.actor.')) return `done: ${ev.slice('xstate.done.actor.'.length)}`;
  if (ev.startsWith('xstate.error.actor.')) return `error: ${ev.slice('xstate.error.actor.'.length)}`;
  if (ev.startsWith('xstate.after.')) return `after ${ev.slice('xstate.after.'.length).split('.')[0]}`;
  return ev;
}

/** A state node's transitions by event: `on`, `after`, invoke `onDone`/`onError`, then `always` (event ''). */
function transitionGroups(node: Node): [string, readonly Transition[]][] {
  const groups: [string, readonly Transition[]][] = [...node.transitions];
  if (node.always && node.always.length > 0) groups.push(['', node.always]);
  return groups;
}

/** The key of a transition (`Row.key`): unique within its machine, and the same in every `provide()` copy. */
export const transitionKey = (sourceId: string, eventType: string, index: number): string => `${sourceId} ${eventType} #${index}`;

/**
 * Every transition of a machine, in definition order: each state node's `on`, `after` and
 * invoke `onDone`/`onError` (xstate gathers them in the node's `transitions`), then its
 * `always`; each guarded alternative is one transition of its own.
 */
export function transitionsOf(machine: Machine): Row[] {
  const rows: Row[] = [];
  const walk = (node: Node): void => {
    for (const [ev, list] of transitionGroups(node)) {
      for (const [index, t] of list.entries()) {
        const row = t.meta?.row;
        rows.push({
          key: transitionKey(node.id, ev, index),
          source: node.id,
          eventType: ev,
          index,
          targets: (t.target ?? []).map((x) => x.id),
          from: short(machine, node.id),
          event: eventLabel(ev),
          guard: guardName(t.guard),
          to: t.target && t.target.length > 0 ? t.target.map((x) => short(machine, x.id)).join(', ') : '(stays)',
          rows: row === undefined || row === 'tether' ? [] : Array.isArray(row) ? row : [row],
          tethersOwn: row === 'tether',
          description: t.description ?? '',
        });
      }
    }
    for (const child of Object.values(node.states)) walk(child);
  };
  walk(machine.root);
  return rows;
}

function mermaid(machine: Machine): string {
  const lines: string[] = ['stateDiagram-v2'];
  const ident = (id: string) => id.replace(/[^A-Za-z0-9_]/g, '_');
  const emit = (node: Node, depth: number): void => {
    const pad = '  '.repeat(depth);
    const children = Object.values(node.states);
    children.forEach((child, i) => {
      if (node.type === 'parallel' && i > 0) lines.push(`${pad}--`);
      const cid = ident(child.id);
      if (Object.keys(child.states).length > 0) {
        lines.push(`${pad}state "${child.key}" as ${cid} {`);
        emit(child, depth + 1);
        lines.push(`${pad}}`);
      } else {
        lines.push(`${pad}state "${child.key}" as ${cid}`);
        if (child.type === 'final') lines.push(`${pad}${cid} --> [*]`);
      }
    });
    const init = node.initial?.target[0];
    if (init && node.type !== 'parallel') lines.push(`${pad}[*] --> ${ident(init.id)}`);
  };
  emit(machine.root, 1);
  const walk = (node: Node): void => {
    for (const [ev, list] of transitionGroups(node)) {
      for (const t of list) {
        for (const target of t.target ?? []) {
          const g = guardName(t.guard);
          lines.push(`  ${ident(node.id)} --> ${ident(target.id)}: ${eventLabel(ev)}${g ? ` [${g}]` : ''}`);
        }
      }
    }
    for (const child of Object.values(node.states)) walk(child);
  };
  walk(machine.root);
  return lines.join('\n');
}

function dot(machine: Machine): string {
  const q = (s: string) => JSON.stringify(s);
  const lines = [
    'digraph G {',
    '  compound=true; rankdir=LR; fontname="Helvetica"; node [shape=box, style=rounded, fontname="Helvetica", fontsize=11]; edge [fontname="Helvetica", fontsize=9];',
  ];
  const anchor = (node: Node) => (Object.keys(node.states).length > 0 ? `${node.id}::anchor` : node.id);
  const emit = (node: Node, depth: number): void => {
    for (const child of Object.values(node.states)) {
      const pad = '  '.repeat(depth + 1);
      if (Object.keys(child.states).length > 0) {
        lines.push(
          `${pad}subgraph ${q(`cluster_${child.id}`)} {`,
          `${pad}  label=${q(child.key + (child.type === 'parallel' ? ' (parallel)' : ''))}; style=rounded;`,
        );
        lines.push(`${pad}  ${q(anchor(child))} [shape=point, style=invis];`);
        emit(child, depth + 1);
        lines.push(`${pad}}`);
      } else {
        lines.push(`${pad}${q(child.id)} [label=${q(child.key)}${child.type === 'final' ? ', peripheries=2' : ''}];`);
      }
    }
  };
  emit(machine.root, 0);
  const walk = (node: Node): void => {
    for (const [ev, list] of transitionGroups(node)) {
      for (const t of list) {
        for (const target of t.target ?? []) {
          const g = guardName(t.guard);
          const attrs = [`label=${q(eventLabel(ev) + (g ? ` [${g}]` : ''))}`];
          if (Object.keys(node.states).length > 0) attrs.push(`ltail=${q(`cluster_${node.id}`)}`);
          const tn = findNode(machine.root, target.id);
          if (tn && Object.keys(tn.states).length > 0) attrs.push(`lhead=${q(`cluster_${target.id}`)}`);
          const from = node.id === machine.root.id ? null : anchor(node);
          if (from && tn) lines.push(`  ${q(from)} -> ${q(anchor(tn))} [${attrs.join(', ')}];`);
        }
      }
    }
    for (const child of Object.values(node.states)) walk(child);
  };
  walk(machine.root);
  lines.push('}');
  return lines.join('\n');
}

function findNode(node: Node, id: string): Node | undefined {
  if (node.id === id) return node;
  for (const c of Object.values(node.states)) {
    const f = findNode(c, id);
    if (f) return f;
  }
  return undefined;
}

const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');

function page(machine: Machine, file: string): string {
  const rows = transitionsOf(machine);
  const table = [
    '| from | event | guard | to | contract row | notes |',
    '| --- | --- | --- | --- | --- | --- |',
    ...rows.map(
      (r) =>
        `| ${cell(r.from)} | ${cell(r.event)} | ${cell(r.guard)} | ${cell(r.to)} | ${r.rows.length > 0 ? r.rows.map((s) => `\`${cell(s)}\``).join('<br>') : r.tethersOwn ? "tether's own" : '**unmarked**'} | ${cell(r.description)} |`,
    ),
  ].join('\n');
  return [
    `<!-- Generated by \`npm run charts\` from ${file}. Do not edit: change the machine and regenerate. -->`,
    `# ${machine.id} machine`,
    '',
    machine.config.description ?? '',
    '',
    `![${machine.id} statechart](${machine.id}.svg)`,
    '',
    '```mermaid',
    mermaid(machine),
    '```',
    '',
    '## Transitions',
    '',
    table,
    '',
  ].join('\n');
}

/** Every machine exported by src/machines/*.machine.ts, with its file. */
export async function loadMachines(): Promise<{ machine: Machine; file: string }[]> {
  const dir = join(ROOT, 'src/machines');
  const out: { machine: Machine; file: string }[] = [];
  for (const name of readdirSync(dir)
    .filter((f) => f.endsWith('.machine.ts'))
    .sort()) {
    const mod = (await import(pathToFileURL(join(dir, name)).href)) as Record<string, unknown>;
    for (const value of Object.values(mod)) {
      if (value && typeof value === 'object' && 'root' in value && 'config' in value && 'id' in value) {
        out.push({ machine: value as Machine, file: `src/machines/${name}` });
      }
    }
  }
  return out;
}

/** Every file of docs/statecharts for these machines: name -> content (deterministic). */
export async function renderCharts(machines: readonly { machine: Machine; file: string }[]): Promise<Map<string, string>> {
  const viz = await instance();
  const files = new Map<string, string>();
  const index: string[] = [
    '<!-- Generated by `npm run charts` (scripts/charts.ts). Do not edit: change the generator and regenerate. -->',
    '# Statecharts',
    '',
    "The XState machines in `src/machines` are the source of truth for tether's behaviour; these pages are",
    'generated from them. Each page has the diagram as SVG (rendered offline by WebAssembly Graphviz from the',
    'machine definition), the same diagram as Mermaid text (rendered by code hosts), and the transition table.',
    "The table's **contract row** column names the row of a transition table in docs/contract.md",
    "(`state --event [condition]--> next`) that the transition implements, or says `tether's own` for a",
    'transition no row lists.',
    '',
    'How it is kept true:',
    '',
    '- `npm run charts` regenerates every page; `npm run charts -- --check` (part of `npm test`, so of CI)',
    '  fails when a committed page differs from what the machines generate. A new `*.machine.ts` file is',
    '  picked up without being listed anywhere.',
    '- `test/unit/contract-rows.test.ts`: every row of every table in docs/contract.md has a transition that',
    "  names it, with the row's source, event, condition and target; every transition names a row or is marked",
    "  as tether's own, and every machine file is loaded.",
    '- `test/model/*.model.test.ts`: paths generated with `xstate/graph` from each machine, run against the',
    '  real actors (real tmux, the real client actor, the real actor system), which must take every transition',
    '  of the machine (docs/testing.md "Transition coverage").',
    "- The running daemon serves these SVGs on `/ops` with each actor's current state highlighted, live",
    '  (docs/operations.md); `tether status` prints the same states in a terminal.',
    '',
    'One page per machine:',
    '',
  ];
  for (const { machine, file } of machines) {
    files.set(`${machine.id}.md`, page(machine, file));
    files.set(`${machine.id}.svg`, viz.renderString(dot(machine), { format: 'svg' }));
    index.push(`- [${machine.id}](${machine.id}.md) (${file})`);
  }
  files.set('README.md', index.join('\n') + '\n');
  return files;
}

/** The files of `dir` that differ from `files`, are missing, or that no machine makes. */
export function staleCharts(files: ReadonlyMap<string, string>, dir: string): string[] {
  const stale: string[] = [];
  for (const [name, content] of files) {
    const path = join(dir, name);
    const current = existsSync(path) ? readFileSync(path, 'utf8') : null;
    if (current !== content) stale.push(current === null ? `${name} (missing)` : name);
  }
  for (const name of existsSync(dir) ? readdirSync(dir) : []) if (!files.has(name)) stale.push(`${name} (no machine makes it)`);
  return stale;
}

async function main(): Promise<void> {
  const check = process.argv.includes('--check');
  const files = await renderCharts(await loadMachines());
  if (check) {
    const stale = staleCharts(files, OUT);
    if (stale.length > 0) {
      process.stderr.write(`docs/statecharts differs from the machines: ${stale.join(', ')}. Run "npm run charts" and commit.\n`);
      process.exit(1);
    }
    return;
  }
  mkdirSync(OUT, { recursive: true });
  for (const [name, content] of files) {
    const path = join(OUT, name);
    if (!existsSync(path) || readFileSync(path, 'utf8') !== content) writeFileSync(path, content);
  }
  const extra = staleCharts(files, OUT);
  if (extra.length > 0) process.stderr.write(`docs/statecharts has files no machine makes (remove them): ${extra.join(', ')}\n`);
  process.stdout.write(`docs/statecharts: ${files.size} files\n`);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
