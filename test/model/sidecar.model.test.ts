/**
 * Model-based test of the root machine (the sidecar): the shortest path to every state, then
 * every transition out of it, generated with xstate/graph, each run against the REAL
 * `SidecarSystem` on a private tmux server with real session actors.
 *
 * The model's state is the machine's value plus the sessions it holds an actor for. Its events
 * are what can happen to a real sidecar, each the machine's own events in the order the real
 * system sees them: the first scan of an empty tmux; a tether session made from a shell and
 * adopted by a scan; `POST /sessions` (the actor creates it, and the scan that follows lists
 * it); `DELETE` (the actor ends; when it was the last session, tmux exits and the next scan
 * finds no server); a session killed from a shell while another keeps the server running; the
 * sidecar stopping; tmux that cannot be run at all; a session brought back at start-up from the
 * record that outlived its tmux server. The paths are the shortest path to every
 * state and every transition out of it, plus a path for every transition of the machine
 * (test/helpers/transitions.ts). The real system must pass through the path's states in order,
 * and must have taken every transition of the machine.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ActorLogic, AnyActorScope, SnapshotFrom } from 'xstate';
import { getAdjacencyMap, getShortestPaths, type AdjacencyValue } from 'xstate/graph';
import { SidecarSystem } from '../../src/actors/system.js';
import { silentLogger } from '../../src/log.js';
import { sessionActorId, sidecarMachine, type SidecarEvent } from '../../src/machines/sidecar.machine.js';
import { TmuxCli } from '../../src/tmux/exec.js';
import { createSession } from '../../src/tmux/sessions/session-create.js';
import { recreateSession } from '../../src/restore/recreate.js';
import { SessionRecords } from '../../src/restore/records.js';
import { usePrivateTmux } from '../helpers/tmux-fixture.js';
import { eventually } from '../helpers/tmux.js';
import { describeTransition, TransitionCoverage, transitionCoveringPaths, UNPLANNED } from '../helpers/transitions.js';

type Snap = SnapshotFrom<typeof sidecarMachine>;
const ADOPTED = 'adopted';
const MADE = 'made';
/** A session whose record outlived its tmux server, brought back at start-up. */
const RESTORED = 'restored';

type ModelEvent =
  | { type: 'model.first-scan' }
  | { type: 'model.unreachable' }
  | { type: 'model.adopt' }
  | { type: 'model.create' }
  | { type: 'model.restore' }
  | { type: 'model.delete'; id: string }
  | { type: 'model.kill'; id: string }
  | { type: 'sidecar.stop' };

const idsOf = (s: Snap): string[] => Object.keys(s.context.sessions).sort();
const key = (s: Snap): string => `${JSON.stringify(s.value)} ${idsOf(s).join(',')}`.trimEnd();

const machine = sidecarMachine.provide({ actions: { releaseSession: () => undefined } });

/** The machine's own events that a model event stands for, given what the sidecar holds. */
function expand(s: Snap, e: ModelEvent): SidecarEvent[] {
  const ids = idsOf(s);
  const done = (id: string) =>
    ({ type: `xstate.done.actor.${sessionActorId(id)}`, actorId: sessionActorId(id) }) as unknown as SidecarEvent;
  const scan = (sessionIds: string[]): SidecarEvent => ({
    type: 'tmux.scanned',
    scan: { serverRunning: sessionIds.length > 0, sessionIds },
  });
  switch (e.type) {
    case 'model.first-scan':
      return [scan([])];
    case 'model.unreachable':
      return [{ type: 'tmux.unreachable', reason: 'tmux could not be run' }];
    case 'model.adopt':
      return [scan([...ids, ADOPTED])];
    case 'model.create':
      return [{ type: 'session.create', id: MADE, origin: 'api' }, scan([...ids, MADE])];
    case 'model.restore':
      return [{ type: 'session.restore', id: RESTORED }, scan([...ids, RESTORED])];
    case 'model.delete': {
      const rest = ids.filter((x) => x !== e.id);
      return [{ type: 'session.delete', id: e.id, keepBuffer: false }, done(e.id), scan(rest)];
    }
    case 'model.kill': {
      const rest = ids.filter((x) => x !== e.id);
      return [scan(rest), done(e.id)];
    }
    case 'sidecar.stop':
      return [e];
  }
}

/** The sidecar machine, stepped by model events (each expanded into the machine's own). */
const modelLogic: ActorLogic<Snap, ModelEvent, undefined> = {
  config: machine.config,
  transition: (s: Snap, e: ModelEvent, scope: AnyActorScope) =>
    expand(s, e).reduce((acc, ev) => machine.transition(acc, ev, scope as never), s),
  getInitialSnapshot: (scope: AnyActorScope, input: unknown) => machine.getInitialSnapshot(scope as never, input),
  getPersistedSnapshot: (s: Snap) => s,
};

/** The events that can happen for real in a state (a first scan is the first thing that happens). */
function eventsFor(s: Snap): ModelEvent[] {
  if (s.status !== 'active') return [];
  // The first scan finds no server, a session to adopt, or no tmux program to run at all.
  if (s.matches({ serving: { tmux: 'unknown' } }))
    return [{ type: 'model.first-scan' }, { type: 'model.adopt' }, { type: 'model.unreachable' }];
  const ids = idsOf(s);
  // A restore happens at start-up, before anything else: with no session yet, or only the one restored.
  if (ids.includes(RESTORED)) return [{ type: 'model.delete', id: RESTORED }, { type: 'sidecar.stop' }];
  return [
    ...(ids.length === 0 ? [{ type: 'model.restore' } as const] : []),
    ...(ids.includes(ADOPTED) ? [] : [{ type: 'model.adopt' } as const]),
    ...(ids.includes(MADE) ? [] : [{ type: 'model.create' } as const]),
    ...ids.map((id) => ({ type: 'model.delete', id }) as const),
    // Killing the last session from a shell ends the tmux server; the machine then keeps its
    // actors retrying their links (a server that comes back), so only a kill that leaves the
    // server running is one the machine ends the actor for.
    ...(ids.length > 1 ? ids.map((id) => ({ type: 'model.kill', id }) as const) : []),
    { type: 'sidecar.stop' },
  ];
}

const traversal = { events: eventsFor as unknown as (s: never) => never[], serializeState: (s: Snap) => key(s) as never };
const toStates = getShortestPaths(modelLogic as never, traversal) as unknown as {
  steps: { state: Snap; event: ModelEvent }[];
  state: Snap;
}[];
const adjacency = getAdjacencyMap(modelLogic as never, traversal) as unknown as Record<string, AdjacencyValue<Snap, ModelEvent>>;
const seen = new Set<string>();
const coverage = new TransitionCoverage(sidecarMachine);
const label = (steps: { event: ModelEvent }[]) => steps.map((s) => s.event.type + ('id' in s.event ? `(${s.event.id})` : '')).join(' -> ');
const covering = transitionCoveringPaths<Snap, ModelEvent, undefined>(modelLogic as never, traversal as never, sidecarMachine);
const paths = [
  ...toStates.flatMap((p) => [
    p,
    ...Object.values(adjacency[key(p.state)]?.transitions ?? {})
      .filter((t) => key(t.state) !== key(p.state))
      .map((t) => ({ steps: [...p.steps, { state: t.state, event: t.event }], state: t.state })),
  ]),
  ...(covering.paths as { steps: { state: Snap; event: ModelEvent }[]; state: Snap }[]),
].filter((p) => !seen.has(label(p.steps)) && Boolean(seen.add(label(p.steps))));

describe('sidecar machine, model-based, against the real actor system on real tmux', () => {
  const tmux = usePrivateTmux({ each: true });

  it('covers every state: no server, sessions adopted and created, both, and stopped; and plans every transition', () => {
    expect(covering.unplanned.map(describeTransition), UNPLANNED).toEqual([]);
    const states = new Set(toStates.map((p) => key(p.state)));
    expect(states).toEqual(
      new Set([
        '{"serving":{"tmux":"unknown"}}',
        '{"serving":{"tmux":"down"}}',
        `{"serving":{"tmux":"up"}} ${ADOPTED}`,
        `{"serving":{"tmux":"up"}} ${MADE}`,
        `{"serving":{"tmux":"up"}} ${ADOPTED},${MADE}`,
        `{"serving":{"tmux":"up"}} ${RESTORED}`,
        `"stopped" ${RESTORED}`,
        '"stopped"',
        `"stopped" ${ADOPTED}`,
        `"stopped" ${MADE}`,
        `"stopped" ${ADOPTED},${MADE}`,
      ]),
    );
  });

  paths.forEach((path, n) => {
    it(`path ${n}: ${label(path.steps.slice(1)) || '(initial)'} => ${key(path.state)}`, { timeout: 60_000 }, async () => {
      // The first step after init is the first scan: what tmux holds decides it.
      const first = path.steps[1]?.event;
      // No tmux program where the system looks for it: every tmux command fails to start.
      const target =
        first?.type === 'model.unreachable' ? { bin: join(tmux.dir, 'no-tmux'), socketArgs: tmux.target.socketArgs } : tmux.target;
      const records = new SessionRecords(join(tmux.dir, `data-${n}`));
      const system = new SidecarSystem({
        cli: target === tmux.target ? tmux.cli : new TmuxCli(target),
        target,
        inspect: coverage.inspect,
        ringBytes: 1 << 20,
        agent: () => ({ command: ['/bin/cat'], env: {}, cwd: tmux.dir }),
        now: Date.now,
        log: silentLogger,
        restore: (id) =>
          recreateSession(
            { cli: tmux.cli, records, agent: () => ({ command: ['/bin/cat'], env: {}, cwd: tmux.dir }), now: Date.now, log: silentLogger },
            id,
          ),
      });
      const visited: string[] = [key(system.actor.getSnapshot())];
      system.actor.subscribe({ next: (s) => visited.push(key(s)), error: () => undefined });
      let cursor = 0;
      const reach = (expected: Snap) =>
        eventually(() => {
          const at = visited.findIndex((v, i) => i >= cursor && v === key(expected));
          if (at < 0) return false;
          cursor = at;
          return true;
        }, 15_000).catch(() => {
          throw new Error(
            `the sidecar never reached ${key(expected)}; it went through: ${[...new Set(visited.slice(cursor))].join(' | ')}`,
          );
        });
      const adopt = () => createSession(tmux.cli, { name: ADOPTED, command: ['/bin/cat'], createdAt: new Date().toISOString() });
      try {
        if (first?.type === 'model.adopt') await adopt();
        system.start();
        await reach(path.steps[0]?.state ?? path.state);
        for (const step of path.steps.slice(1)) {
          const e = step.event;
          switch (e.type) {
            case 'model.first-scan':
            case 'model.unreachable':
              break; // the first scan, at start
            case 'model.adopt':
              if (step !== path.steps[1]) {
                await adopt();
                system.requestRescan();
              }
              break;
            case 'model.create':
              await system.createSession(MADE, 'api');
              break;
            case 'model.restore':
              // Its record, as the daemon kept it before the server was lost.
              records.write({
                v: 1,
                name: RESTORED,
                description: 'brought back',
                cwd: tmux.dir,
                command: ['/bin/cat'],
                sessionFile: null,
                createdAt: new Date().toISOString(),
                reservedSeq: 1 << 20,
                server: null,
                ended: null,
              });
              await system.restoreSession(RESTORED);
              system.requestRescan();
              break;
            case 'model.delete':
              expect(await system.deleteSession(e.id, false)).toBe(true);
              break;
            case 'model.kill':
              await tmux.tmux('kill-session', '-t', `=${e.id}`);
              system.requestRescan();
              break;
            case 'sidecar.stop':
              await system.stop();
              break;
          }
          await reach(step.state);
        }
        // What the sidecar reports is what the model holds.
        if (path.state.status === 'active') {
          expect(system.sessionIds()).toEqual(idsOf(path.state));
          if (first?.type === 'model.unreachable') expect(system.status().tmuxProblem).toMatch(/tmux could not be run/);
          else
            expect(system.status().tmuxProblem).toBe(
              path.state.matches({ serving: { tmux: 'down' } }) ? 'the tmux server is not running' : null,
            );
          const listed = (await tmux.tmux('list-sessions', '-F', '#{session_name}').catch(() => '')).split('\n').filter(Boolean).sort();
          expect(listed).toEqual(idsOf(path.state));
        }
      } finally {
        await system.stop();
      }
    });
  });

  it('the real system took every transition of the machine', () => {
    console.log(coverage.report());
    expect(coverage.uncovered().map(describeTransition), coverage.report()).toEqual([]);
  });
});
