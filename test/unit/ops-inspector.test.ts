/**
 * The /ops inspector's bounds: nothing is queued while no one watches, a viewer that is behind
 * gets the latest state once (not every step) and at most OPS_MAX_QUEUED events plus a count of
 * the dropped ones, stopped actors leave the tree, and one that lived between two flushes is
 * still told (its last state, then gone).
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createActor, createMachine } from 'xstate';
import { activeStateIds, OPS_FLUSH_MS, OPS_MAX_QUEUED, OpsInspector, type OpsMessage } from '../../src/ops/inspector.js';

const lamp = createMachine({
  id: 'lamp',
  initial: 'off',
  states: {
    off: { on: { flip: 'on' } },
    on: { on: { flip: 'off' }, initial: 'dim', states: { dim: { on: { brighten: 'bright' } }, bright: {} } },
  },
});

function viewer(): { batches: OpsMessage[][]; behind: boolean; sink: { behind(): boolean; send(b: readonly OpsMessage[]): void } } {
  const v = {
    batches: [] as OpsMessage[][],
    behind: false,
    sink: {
      behind: () => v.behind,
      send: (b: readonly OpsMessage[]) => void v.batches.push([...b]),
    },
  };
  return v;
}

describe('ops inspector', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('names the active state nodes as the charts do', () => {
    expect(activeStateIds('lamp', { on: 'dim' })).toEqual(['lamp.on', 'lamp.on.dim']);
    expect(activeStateIds('session', { running: { link: { attached: 'live' }, pane: 'alive' } })).toEqual([
      'session.running',
      'session.running.link',
      'session.running.link.attached',
      'session.running.link.attached.live',
      'session.running.pane',
      'session.running.pane.alive',
    ]);
  });

  it('keeps no events while no one watches; a new viewer gets the tree with the current states', () => {
    const ops = new OpsInspector(() => 0);
    const actor = createActor(lamp, { inspect: ops.observer({ label: 'lamp' }) }).start();
    for (let i = 0; i < 1001; i++) actor.send({ type: 'flip' });
    const v = viewer();
    ops.watch(v.sink);
    vi.advanceTimersByTime(OPS_FLUSH_MS);
    expect(v.batches).toHaveLength(1);
    expect(v.batches[0]).toEqual([
      {
        type: 'actors',
        actors: [{ id: 'lamp', parent: null, machine: 'lamp', value: { on: 'dim' }, active: ['lamp.on', 'lamp.on.dim'], status: 'active' }],
        recent: [],
      },
    ]);
  });

  it('a viewer that is behind gets the latest state once, the newest events up to the limit, and how many were dropped', () => {
    const ops = new OpsInspector(() => 0);
    const actor = createActor(lamp, { inspect: ops.observer({ label: 'lamp' }) }).start();
    const v = viewer();
    ops.watch(v.sink);
    vi.advanceTimersByTime(OPS_FLUSH_MS);
    v.batches.length = 0;
    v.behind = true;
    const sent = 3 * OPS_MAX_QUEUED;
    for (let i = 0; i < sent; i++) actor.send({ type: i === sent - 1 ? 'brighten' : 'flip' });
    vi.advanceTimersByTime(10 * OPS_FLUSH_MS);
    expect(v.batches).toEqual([]);
    v.behind = false;
    vi.advanceTimersByTime(OPS_FLUSH_MS);
    expect(v.batches).toHaveLength(1);
    const batch = v.batches[0]!;
    const states = batch.filter((m) => m.type === 'state');
    expect(states).toEqual([{ type: 'state', actor: expect.objectContaining({ id: 'lamp', value: { on: 'bright' } }) as unknown }]);
    const events = batch.filter((m) => m.type === 'event');
    expect(events).toHaveLength(OPS_MAX_QUEUED);
    expect(events[events.length - 1]).toMatchObject({ actor: 'lamp', event: 'brighten' });
    expect(batch).toContainEqual({ type: 'dropped', count: sent - OPS_MAX_QUEUED });
  });

  it('places a separate system under its parent, and a stopped actor leaves the tree', () => {
    const ops = new OpsInspector(() => 0);
    const v = viewer();
    ops.watch(v.sink);
    const parent = createActor(lamp, { inspect: ops.observer() }).start();
    const child = createActor(lamp, { id: 'client#1', inspect: ops.observer({ label: 'client#1', parent: 'session:a' }) }).start();
    const other = createActor(lamp, { inspect: ops.observer({ label: 'diskBuffer', parent: 'sidecar' }) }).start();
    vi.advanceTimersByTime(OPS_FLUSH_MS);
    expect(ops.actors().map((a) => [a.id, a.parent])).toEqual([
      ['sidecar', null],
      ['session:a/client#1', 'session:a'],
      ['diskBuffer', 'sidecar'],
    ]);
    child.stop();
    vi.advanceTimersByTime(OPS_FLUSH_MS);
    expect(v.batches.flat()).toContainEqual({ type: 'gone', actor: 'session:a/client#1' });
    expect(ops.actors().map((a) => a.id)).toEqual(['sidecar', 'diskBuffer']);
    parent.stop();
    other.stop();
  });

  it('an actor that starts and stops between two flushes is told all the same: its last state, then gone', () => {
    const ops = new OpsInspector(() => 0);
    const v = viewer();
    ops.watch(v.sink);
    vi.advanceTimersByTime(OPS_FLUSH_MS);
    v.batches.length = 0;
    const brief = createActor(lamp, { inspect: ops.observer({ label: 'resume', parent: 'session:a/client#1' }) }).start();
    brief.send({ type: 'flip' });
    brief.stop();
    vi.advanceTimersByTime(OPS_FLUSH_MS);
    const told = v.batches.flat().filter((m) => m.type === 'state' || m.type === 'gone');
    expect(told).toEqual([
      {
        type: 'state',
        actor: {
          id: 'session:a/client#1/resume',
          parent: 'session:a/client#1',
          machine: 'lamp',
          value: { on: 'dim' },
          active: ['lamp.on', 'lamp.on.dim'],
          status: 'stopped',
        },
      },
      { type: 'gone', actor: 'session:a/client#1/resume' },
    ]);
    expect(ops.actors()).toEqual([]);
  });

  it('stops its timer when the last viewer leaves', () => {
    const ops = new OpsInspector(() => 0);
    const stop = ops.watch(viewer().sink);
    expect(vi.getTimerCount()).toBe(1);
    stop();
    expect(vi.getTimerCount()).toBe(0);
    expect(ops.watching).toBe(0);
  });
});
