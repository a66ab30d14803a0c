import { describe, expect, it } from 'vitest';
import { createActor, fromCallback, fromPromise, waitFor } from 'xstate';
import { sessionMachine, type SessionEvent } from '../../src/machines/session.machine.js';
import type { LinkInput } from '../../src/machines/session.setup.js';
import { sidecarMachine, type SidecarEvent } from '../../src/machines/sidecar.machine.js';

function harness() {
  const released: string[] = [];
  const killed: string[] = [];
  let discoverySend: ((e: SidecarEvent) => void) | null = null;
  const session = sessionMachine.provide({
    actors: {
      createTmuxSession: fromPromise(({ input }) =>
        input.id === 'taken' ? Promise.reject(new Error('session exists')) : Promise.resolve({ paneId: '%1' }),
      ),
      deleteTmuxSession: fromPromise(({ input }) => {
        killed.push(input.id);
        return Promise.resolve();
      }),
      tmuxLink: fromCallback<SessionEvent, LinkInput>(({ sendBack }) => {
        sendBack({ type: 'link.up', paneId: '%1' });
      }),
    },
  });
  const machine = sidecarMachine.provide({
    actors: {
      session,
      tmuxDiscovery: fromCallback<SidecarEvent>(({ sendBack }) => {
        discoverySend = sendBack;
      }),
    },
    actions: { releaseSession: (_, params) => void released.push(params.id) },
  });
  const actor = createActor(machine).start();
  return {
    actor,
    released,
    killed,
    scan: (ids: string[], serverRunning = true, runningAtStart?: string[]) =>
      discoverySend!({ type: 'tmux.scanned', scan: { serverRunning, sessionIds: ids, ...(runningAtStart ? { runningAtStart } : {}) } }),
  };
}

/** A harness whose first scan found no session, and a session `id` created over the API, once it runs. */
async function harnessWithCreated(id: string) {
  const h = harness();
  h.scan([]);
  h.actor.send({ type: 'session.create', id, origin: 'api' });
  const ref = h.actor.getSnapshot().context.sessions[id]!;
  await waitFor(ref, (s) => s.matches('running'));
  return { h, ref };
}

describe('sidecar machine', () => {
  it('adopts every session a scan reports, once, and links it', async () => {
    const h = harness();
    h.scan(['a', 'b']);
    h.scan(['a', 'b']);
    const ctx = h.actor.getSnapshot().context;
    expect(Object.keys(ctx.sessions).sort()).toEqual(['a', 'b']);
    const a = ctx.sessions.a!;
    await waitFor(a, (s) => s.matches({ running: { link: { attached: 'live' } } }));
    expect(h.actor.getSnapshot().matches({ serving: { tmux: 'up' } })).toBe(true);
  });

  it('a scan that began before a session was created does not end it; a later one that misses it does', async () => {
    const { h, ref } = await harnessWithCreated('new');
    // This scan's answer was taken before tmux had the session: it does not list it.
    h.scan([], true, []);
    expect(ref.getSnapshot().matches('running')).toBe(true);
    expect(Object.keys(h.actor.getSnapshot().context.sessions)).toEqual(['new']);
    // A scan that began while it ran and does not list it: it is gone.
    h.scan([], true, ['new']);
    await waitFor(h.actor, (s) => !s.context.sessions.new);
    expect(h.released).toEqual(['new']);
  });

  it('a session that disappears from tmux ends and is forgotten', async () => {
    const h = harness();
    h.scan(['a', 'b']);
    h.scan(['b']);
    await waitFor(h.actor, (s) => !s.context.sessions.a);
    expect(h.released).toEqual(['a']);
    expect(Object.keys(h.actor.getSnapshot().context.sessions)).toEqual(['b']);
  });

  it('create spawns a session that reaches running; delete kills it and forgets it', async () => {
    const { h } = await harnessWithCreated('n');
    h.actor.send({ type: 'session.delete', id: 'n', keepBuffer: false });
    await waitFor(h.actor, (s) => !s.context.sessions.n);
    expect(h.killed).toEqual(['n']);
    expect(h.released).toEqual(['n']);
  });

  it('a failed create frees the name again', async () => {
    const h = harness();
    h.actor.send({ type: 'session.create', id: 'taken', origin: 'api' });
    await waitFor(h.actor, (s) => !s.context.sessions.taken);
    expect(h.released).toEqual(['taken']);
  });

  it('a scan of a stopped server marks tmux down without ending sessions', () => {
    const h = harness();
    h.scan(['a']);
    h.scan([], false);
    const snap = h.actor.getSnapshot();
    expect(snap.matches({ serving: { tmux: 'down' } })).toBe(true);
    expect(Object.keys(snap.context.sessions)).toEqual(['a']);
    expect(snap.context.tmuxProblem).toMatch(/not running/);
  });
});
