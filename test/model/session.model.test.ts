/**
 * Model-based test of the session lifecycle machine: paths generated from the machine with
 * xstate/graph (shortest paths to every state), each executed against the REAL session actor
 * on a private tmux server. Each event of a path is produced the way it happens for real
 * (an API call, a session killed from a shell, a control client detached, the agent exiting,
 * a pane respawned from a shell or by tether); events the system produces by itself (a finished creation, a link coming
 * up, the retry timer) are waited for. The real actor must pass through the path's states, in
 * order.
 */
import { existsSync, renameSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActor, transition, type SnapshotFrom } from 'xstate';
import { getShortestPaths } from 'xstate/graph';
import { SessionRuntimes } from '../../src/stream/session-runtime.js';
import { createSessionImplementations } from '../../src/actors/session.actor.js';
import { silentLogger } from '../../src/log.js';
import { sessionMachine, type SessionEvent } from '../../src/machines/session.machine.js';
import { createSession } from '../../src/tmux/sessions.js';
import { eventually, privateTmux, type PrivateTmux } from '../helpers/tmux.js';

type Snap = SnapshotFrom<typeof sessionMachine>;
type ModelEvent = SessionEvent | { type: string; [k: string]: unknown };

/** Every event the machine reacts to, including the ones the system raises by itself. */
const MODEL_EVENTS: ModelEvent[] = [
  { type: 'session.create', origin: 'api' },
  { type: 'session.adopt' },
  { type: 'session.delete', keepBuffer: false },
  { type: 'session.gone' },
  { type: 'link.up', paneId: '%0' },
  { type: 'link.down', reason: 'detached' },
  { type: 'pane.exited', status: 0 },
  { type: 'pane.revived' },
  { type: 'pane.respawn' },
  { type: 'xstate.done.actor.create', output: { paneId: '%0' } },
  { type: 'xstate.error.actor.create', error: new Error('duplicate session') },
  { type: 'xstate.done.actor.delete' },
  { type: 'xstate.error.actor.delete', error: new Error('tmux unreachable') },
  { type: 'xstate.after.linkRetry.session.running.link.lost' },
];

/** Events the system raises by itself: nothing to do but wait for their state. */
const AUTOMATIC = new Set([
  'xstate.init',
  'link.up',
  'xstate.done.actor.create',
  'xstate.done.actor.delete',
  'xstate.after.linkRetry.session.running.link.lost',
]);

const valueKey = (s: { value: unknown }) => JSON.stringify(s.value);

// createTestModel refuses machines with invocations and timers; the traversal itself does not
// start actors, so the paths come from getShortestPaths over the real machine.
const paths = getShortestPaths(sessionMachine, {
  events: MODEL_EVENTS as SessionEvent[],
  serializeState: (s) => valueKey(s) as never,
  input: { id: 'model' },
});

/**
 * The ways out of `respawning`, which no shortest path takes (each ends where a shorter path
 * already went): the agent runs again, the new agent exits at once, tmux fails the respawn. Each
 * extends the shortest path to a live link and an exited pane, a step at a time on the machine.
 */
const exitedLive = valueKey({ value: { running: { link: { attached: 'live' }, pane: 'exited' } } });
const toExited = paths.find((p) => valueKey(p.state) === exitedLive)!;
const respawnPaths = [
  [{ type: 'pane.respawn' }, { type: 'pane.revived' }],
  [{ type: 'pane.respawn' }, { type: 'pane.exited', status: 5 }],
  [{ type: 'pane.respawn' }, { type: 'xstate.error.actor.respawn', error: new Error('no server') }],
].map((tail) => {
  const steps = [...toExited.steps];
  let state = toExited.state;
  for (const event of tail as SessionEvent[]) {
    [state] = transition(sessionMachine, state, event);
    steps.push({ event, state });
  }
  return { ...toExited, steps, state };
});

describe('session machine, model-based, against real tmux', () => {
  let tmux: PrivateTmux;
  beforeAll(async () => {
    tmux = await privateTmux();
  });
  afterAll(async () => {
    await tmux.cleanup();
  });

  it('covers every state of the machine', () => {
    const reached = new Set(paths.map((p) => valueKey(p.state)));
    expect(reached).toEqual(
      new Set([
        '"absent"',
        '"creating"',
        '"failed"',
        '"deleting"',
        '"ended"',
        ...['alive', 'exited', 'respawning']
          .flatMap((pane) => [
            JSON.stringify({ link: { attached: 'connecting' }, pane }),
            JSON.stringify({ link: { attached: 'live' }, pane }),
            JSON.stringify({ link: 'lost', pane }),
          ])
          .map((v) => JSON.stringify({ running: JSON.parse(v) as unknown })),
      ]),
    );
  });

  it('the respawn paths leave respawning every way it can be left', () => {
    expect(respawnPaths.map((p) => valueKey(p.state))).toEqual([
      JSON.stringify({ running: { link: { attached: 'live' }, pane: 'alive' } }),
      JSON.stringify({ running: { link: { attached: 'live' }, pane: 'exited' } }),
      JSON.stringify({ running: { link: { attached: 'live' }, pane: 'exited' } }),
    ]);
  });

  [...paths, ...respawnPaths].forEach((path, n) => {
    it(`path ${n}: ${path.steps.map((s) => s.event.type).join(' -> ') || '(initial)'}`, async () => {
      const name = `m${n}`;
      const runtimes = new SessionRuntimes({ ringBytes: 1 << 20, now: Date.now });
      // A respawn is real, but its tmux command waits until the path says how it should go: the
      // state in between (respawning) is held as long as the path needs it.
      let settleRespawn: (go: boolean) => void = () => undefined;
      const respawnHeld = new Promise<boolean>((resolve) => (settleRespawn = resolve));
      const releaseRespawn = () => settleRespawn(true);
      let agentDies = false;
      const cli = new Proxy(tmux.cli, {
        get(target, prop, receiver): unknown {
          if (prop === 'run')
            return async (args: readonly string[], opts?: object) => {
              if (args[0] === 'respawn-pane' && !(await respawnHeld)) throw new Error('the path ended before the respawn');
              return target.run(args, opts);
            };
          const value: unknown = Reflect.get(target, prop, receiver);
          return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
        },
      });
      const impl = createSessionImplementations({
        cli,
        target: tmux.target,
        runtimes,
        agent: () => ({ command: agentDies ? ['/bin/sh', '-c', 'exit 5'] : ['/bin/cat'], env: {}, cwd: tmux.dir }),
        now: Date.now,
        log: silentLogger,
        sessionsChanged: () => undefined,
        deleteBuffer: () => Promise.resolve(),
      });
      const actor = createActor(sessionMachine.provide(impl), { input: { id: name } });
      const visited: Snap[] = [];
      actor.subscribe((s) => visited.push(s));
      actor.start();
      let cursor = 0;
      const reach = async (expected: Snap): Promise<void> => {
        const key = valueKey(expected);
        await eventually(() => {
          const at = visited.findIndex((s, i) => i >= cursor && valueKey(s) === key);
          if (at < 0) return false;
          cursor = at;
          return true;
        }, 15_000);
      };
      const realPane = () => `=${name}:`;
      try {
        await reach(visited[0]!);
        for (let i = 0; i < path.steps.length; i++) {
          const step = path.steps[i]!;
          const next: string | undefined = path.steps[i + 1]?.event.type;
          const type: string = step.event.type;
          const before = i > 0 ? path.steps[i - 1]!.state : visited[0]!;
          if (before.matches({ running: { pane: 'respawning' } })) {
            // A respawn closes the link itself (tmux 3.3a must not respawn a pane a control client
            // follows), and the link comes back once tmux has respawned the pane.
            if (type === 'xstate.error.actor.respawn') renameSync(tmux.socket, `${tmux.socket}.away`);
            if (type !== 'link.down' && !type.startsWith('xstate.after')) releaseRespawn();
            if (type === 'xstate.error.actor.respawn') {
              await eventually(() => actor.getSnapshot().matches({ running: { pane: 'exited' } }), 15_000);
              renameSync(`${tmux.socket}.away`, tmux.socket);
            }
            if (type === 'pane.revived' || type === 'pane.exited') {
              await eventually(
                async () => (await tmux.tmux('display', '-p', '-t', realPane(), '#{pane_dead}')).trim() === (agentDies ? '1' : '0'),
              );
            }
            await reach(step.state);
            continue;
          }
          if (!AUTOMATIC.has(type)) {
            switch (type) {
              case 'session.create':
                // A name already taken in tmux makes the real creation fail.
                if (next === 'xstate.error.actor.create') {
                  await createSession(tmux.cli, { name, command: ['/bin/cat'], createdAt: new Date().toISOString() });
                }
                actor.send({ type: 'session.create', origin: 'api' });
                break;
              case 'session.adopt':
                await createSession(tmux.cli, { name, command: ['/bin/cat'], createdAt: new Date().toISOString() });
                actor.send({ type: 'session.adopt' });
                break;
              case 'session.delete':
                // With the server's socket moved away, tmux cannot be reached to kill it.
                if (next === 'xstate.error.actor.delete') renameSync(tmux.socket, `${tmux.socket}.away`);
                actor.send({ type: 'session.delete', keepBuffer: false });
                break;
              case 'xstate.error.actor.delete':
                await reach(step.state);
                renameSync(`${tmux.socket}.away`, tmux.socket);
                break;
              case 'xstate.error.actor.create':
                break; // produced by the taken name arranged above
              case 'session.gone':
                await tmux.tmux('kill-session', '-t', `=${name}`);
                break;
              case 'link.down':
                await eventually(() => runtimes.get(name)?.linked === true);
                await tmux.tmux('detach-client', '-s', `=${name}`);
                break;
              case 'pane.exited':
                await eventually(() => runtimes.get(name)?.linked === true);
                await tmux.tmux('send-keys', '-t', realPane(), 'C-d');
                break;
              case 'pane.revived':
                await tmux.tmux('respawn-pane', '-t', realPane());
                break;
              case 'pane.respawn':
                // The agent the respawn starts: one that exits at once when the path says so.
                agentDies = next === 'pane.exited';
                actor.send({ type: 'pane.respawn' });
                break;
              default:
                throw new Error(`no way to produce ${type} for real`);
            }
          }
          await reach(step.state);
        }
      } finally {
        settleRespawn(false);
        if (existsSync(`${tmux.socket}.away`)) renameSync(`${tmux.socket}.away`, tmux.socket);
        actor.stop();
        await tmux.tmux('kill-session', '-t', `=${name}`).catch(() => undefined);
        // The server ends with its last session: the next path must not reach it while it goes.
        await eventually(
          () =>
            tmux.tmux('list-sessions').then(
              () => false,
              () => true,
            ),
          15_000,
          25,
          'the tmux server ended',
        ).catch(() => undefined);
      }
    });
  });
});
