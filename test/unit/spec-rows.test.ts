/**
 * The machines mirror the spec's transition tables row by row: every row of a table has a
 * transition that names it, and every transition names a spec row or says it is tether's own.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadMachines, transitionsOf } from '../../scripts/charts.js';
import { ROOT } from '../helpers/daemon.js';

/** The rows of spec.md's tables, as the machines name them. */
const SPEC_TABLES: Record<string, string[]> = {
  session: [
    'absent --POST /sessions--> running',
    'absent --attach CLI--> running',
    'running --DELETE /sessions/:id--> absent',
    'running --sidecar restart--> running',
  ],
  resume: [
    'connected --resume message [lastSeq within the ring]--> streaming',
    'connected --resume message [lastSeq outside the ring]--> streaming',
  ],
  agentState: ['any --agent_end event [the agent context reports idle]--> awaiting-input'],
  device: ['registered --push service reply 410--> removed'],
  diskBuffer: [
    'writing --output written [per-session file reaches its cap]--> stopped for that session',
    'writing --output written [total across sessions exceeds the global cap]--> off globally',
    'writing --watchdog check [free disk below the minimum]--> off globally',
    'any --startup [session inactive for more than 30 days]--> buffer file deleted',
  ],
};

/** Machines that mirror no spec table of their own: every transition is tether's own or names another table's row. */
const NO_SPEC_TABLE = new Set(['streamClient', 'sidecar']);

describe('spec tables and machines', async () => {
  const machines = await loadMachines();

  it('every file in src/machines is loaded (charted and checked here without being listed anywhere)', () => {
    const files = readdirSync(join(ROOT, 'src/machines')).filter((f) => f.endsWith('.machine.ts'));
    expect(new Set(machines.map((m) => m.file))).toEqual(new Set(files.map((f) => `src/machines/${f}`)));
  });

  it('every machine mirrors a spec table or is declared as having none', () => {
    for (const { machine } of machines)
      expect(
        machine.id in SPEC_TABLES || NO_SPEC_TABLE.has(machine.id),
        `machine ${machine.id}: add its spec table to SPEC_TABLES or its id to NO_SPEC_TABLE`,
      ).toBe(true);
  });

  for (const [id, rows] of Object.entries(SPEC_TABLES)) {
    it(`${id}: every spec row has a transition`, () => {
      const m = machines.find((x) => x.machine.id === id);
      expect(m, `machine ${id}`).toBeDefined();
      const named = new Set(transitionsOf(m!.machine).flatMap((t) => t.spec));
      for (const row of rows) expect(named, row).toContain(row);
    });
  }

  it("every transition of every machine names a spec row or is marked as tether's own", () => {
    for (const { machine } of machines) {
      for (const t of transitionsOf(machine)) {
        expect(t.spec.length > 0 || t.tethersOwn, `${machine.id}: ${t.from} --${t.event}--> ${t.to}`).toBe(true);
      }
    }
  });

  it("every named spec row is one of the spec's rows (no typos)", () => {
    const known = new Set(Object.values(SPEC_TABLES).flat());
    for (const { machine } of machines) {
      for (const t of transitionsOf(machine)) for (const s of t.spec) expect(known, `${machine.id}: ${s}`).toContain(s);
    }
  });
});
