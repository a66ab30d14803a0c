/**
 * The machines mirror the transition tables of docs/contract.md row by row: every row of a table
 * has a transition that names it, and every transition names a row or says it is tether's own.
 * The rows are read from the document itself, so the page and the machines cannot drift apart.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadMachines, transitionsOf } from '../../scripts/charts.js';
import { ROOT } from '../helpers/daemon.js';

/** Which machine mirrors which table of docs/contract.md "Transition tables". */
const TABLE_OF_MACHINE: Record<string, string> = {
  session: 'Session lifecycle',
  resume: 'Resume',
  agentState: 'Agent state',
  device: 'Device registration',
  diskBuffer: 'Disk-buffer writing',
};

/**
 * The rows of each table under "## Transition tables", as `from --event [condition]--> to`
 * (the condition in brackets only when there is one).
 */
function contractTables(markdown: string): Map<string, string[]> {
  const section = markdown.split(/^## Transition tables$/m)[1]?.split(/^## /m)[0];
  if (section === undefined) throw new Error('docs/contract.md has no "## Transition tables" section');
  const tables = new Map<string, string[]>();
  let current: string[] | null = null;
  for (const line of section.split('\n')) {
    const heading = /^### (.+)$/.exec(line);
    if (heading) tables.set(heading[1]!, (current = []));
    if (!current || !line.startsWith('|') || /^\|\s*(From|---)/.test(line)) continue;
    const [from, event, condition, to] = line
      .split('|')
      .slice(1)
      .map((c) => c.trim());
    current.push(`${from} --${event}${condition ? ` [${condition}]` : ''}--> ${to}`);
  }
  return tables;
}

const CONTRACT = readFileSync(join(ROOT, 'docs/contract.md'), 'utf8');
const TABLES = contractTables(CONTRACT);
const ROWS: Record<string, string[]> = Object.fromEntries(
  Object.entries(TABLE_OF_MACHINE).map(([id, table]) => [id, TABLES.get(table) ?? []]),
);

/** Machines that mirror no table of their own: every transition is tether's own or names another table's row. */
const NO_TABLE = new Set(['streamClient', 'sidecar']);

describe('docs/contract.md transition tables and the machines', async () => {
  const machines = await loadMachines();

  it('every file in src/machines is loaded (charted and checked here without being listed anywhere)', () => {
    const files = readdirSync(join(ROOT, 'src/machines')).filter((f) => f.endsWith('.machine.ts'));
    expect(new Set(machines.map((m) => m.file))).toEqual(new Set(files.map((f) => `src/machines/${f}`)));
  });

  it('the page has every table a machine mirrors, each with rows', () => {
    for (const [id, table] of Object.entries(TABLE_OF_MACHINE))
      expect(TABLES.get(table)?.length ?? 0, `${id}: table "${table}"`).toBeGreaterThan(0);
    expect([...TABLES.keys()].sort()).toEqual(Object.values(TABLE_OF_MACHINE).sort());
  });

  it('every machine mirrors a table or is declared as having none', () => {
    for (const { machine } of machines)
      expect(
        machine.id in ROWS || NO_TABLE.has(machine.id),
        `machine ${machine.id}: add its table to TABLE_OF_MACHINE or its id to NO_TABLE`,
      ).toBe(true);
  });

  for (const [id, rows] of Object.entries(ROWS)) {
    it(`${id}: every row of its table has a transition`, () => {
      const m = machines.find((x) => x.machine.id === id);
      expect(m, `machine ${id}`).toBeDefined();
      const named = new Set(transitionsOf(m!.machine).flatMap((t) => t.rows));
      for (const row of rows) expect(named, row).toContain(row);
    });
  }

  it("every transition of every machine names a contract row or is marked as tether's own", () => {
    for (const { machine } of machines) {
      for (const t of transitionsOf(machine)) {
        expect(t.rows.length > 0 || t.tethersOwn, `${machine.id}: ${t.from} --${t.event}--> ${t.to}`).toBe(true);
      }
    }
  });

  it('every named row is one of the rows of docs/contract.md (no typos)', () => {
    const known = new Set(Object.values(ROWS).flat());
    for (const { machine } of machines) {
      for (const t of transitionsOf(machine)) for (const s of t.rows) expect(known, `${machine.id}: ${s}`).toContain(s);
    }
  });
});
