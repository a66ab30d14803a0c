/**
 * The generated statechart docs follow the machines: what is committed is exactly what the
 * machines generate (so `npm run charts -- --check` passes), generating twice gives the same
 * bytes, and a machine changed without regenerating, or a new machine without pages, is caught.
 */
import { createMachine } from 'xstate';
import { describe, expect, it } from 'vitest';
import { loadMachines, OUT, renderCharts, staleCharts } from '../../scripts/charts.js';

describe('docs/statecharts', async () => {
  const machines = await loadMachines();

  it('the committed pages are what the machines generate, byte for byte, every time', async () => {
    const first = await renderCharts(machines);
    expect(staleCharts(first, OUT)).toEqual([]);
    expect(await renderCharts(machines)).toEqual(first);
  });

  it('a machine changed without regenerating is caught: its page and its diagram differ', async () => {
    const changed = machines.map((m) => {
      if (m.machine.id !== 'session') return m;
      const config = (m.machine as unknown as { config: { states: Record<string, unknown> } }).config;
      const edited = createMachine({
        ...(config as object),
        states: { ...config.states, archived: { description: 'a state the docs do not show' } },
      } as never);
      return { ...m, machine: edited as unknown as typeof m.machine };
    });
    expect(staleCharts(await renderCharts(changed), OUT)).toEqual(['session.md', 'session.svg']);
  });

  it('a new machine without pages is caught, and so is a page no machine makes', async () => {
    const added = [
      ...machines,
      {
        machine: createMachine({ id: 'newThing', initial: 'a', states: { a: {} } }) as unknown as (typeof machines)[number]['machine'],
        file: 'src/machines/new-thing.machine.ts',
      },
    ];
    expect(staleCharts(await renderCharts(added), OUT)).toEqual(['newThing.md (missing)', 'newThing.svg (missing)', 'README.md']);
    const without = machines.filter((m) => m.machine.id !== 'resume');
    const stale = staleCharts(await renderCharts(without), OUT);
    expect(stale).toContain('resume.md (no machine makes it)');
    expect(stale).toContain('resume.svg (no machine makes it)');
  });
});
