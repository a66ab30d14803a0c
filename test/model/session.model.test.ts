/**
 * Model-based test of the session lifecycle machine: paths generated from the machine with
 * xstate/graph (the shortest path to every state, and a path for every transition of the
 * machine), each executed against the REAL session actor on a private tmux server. Each event
 * of a path is produced the way it happens for real (an API call, a DELETE while the session is
 * still being created, a session killed from a shell, a control client detached, the agent
 * exiting, a program that closes its terminal before it exits, a pane respawned from a shell or by
 * tether (held until the path says whether it works, fails or dies at once), the tmux server
 * SIGKILLed, a record to restore at start-up, one whose directory is gone); events the
 * system produces by itself (a finished creation, a link coming up, the retry timer) are
 * waited for. The real actor must pass through the path's states, in order, and must have
 * taken every transition of the machine (test/helpers/transitions.ts).
 */
import { existsSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createActor, type SnapshotFrom } from 'xstate';
import { getShortestPaths } from 'xstate/graph';
import { LivePanes } from '../../src/stream/live-pane.js';
import { createSessionImplementations } from '../../src/actors/session.actor.js';
import { silentLogger } from '../../src/log.js';
import { sessionMachine, type SessionEvent } from '../../src/machines/session.machine.js';
import { TmuxCli } from '../../src/tmux/exec.js';
import { createSession } from '../../src/tmux/sessions/session-create.js';
import { recreateSession } from '../../src/restore/recreate.js';
import { SessionRecords } from '../../src/restore/records.js';
import { processExists } from '../../src/process.js';
import { usePrivateTmux } from '../helpers/tmux-fixture.js';
import { eventually } from '../helpers/tmux.js';
import { describeTransition, TransitionCoverage, transitionCoveringPaths, UNPLANNED } from '../helpers/transitions.js';

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
  { type: 'xstate.error.actor.respawn', error: new Error('no server') },
  { type: 'xstate.done.actor.create', output: { paneId: '%0' } },
  { type: 'xstate.error.actor.create', error: new Error('duplicate session') },
  { type: 'xstate.done.actor.delete' },
  { type: 'xstate.error.actor.delete', error: new Error('tmux unreachable') },
  { type: 'xstate.after.linkRetry.session.running.link.lost' },
  { type: 'session.restore' },
  { type: 'server.lost', reason: 'tmux: server exited unexpectedly' },
  { type: 'xstate.done.actor.restore', output: { paneId: '%0' } },
  { type: 'xstate.error.actor.restore', error: new Error('its directory is gone') },
];

/** Events the system raises by itself: nothing to do but wait for their state. */
const AUTOMATIC = new Set([
  'xstate.init',
  'link.up',
  'xstate.done.actor.create',
  'xstate.done.actor.delete',
  'xstate.after.linkRetry.session.running.link.lost',
  'xstate.done.actor.restore',
]);

/** The state: the machine's value, and in `creating` or `restoring` whether a DELETE is waiting (it decides where they lead). */
const valueKey = (s: Snap): string =>
  JSON.stringify(s.value) + ((s.matches('creating') || s.matches('restoring')) && s.context.deleteRequested !== null ? ' +delete' : '');

/** The machine as the daemon runs it by default: sessions lost with their tmux server are restored. */
const restoring = sessionMachine.provide({ guards: { isRestoreEnabled: () => true } });

// createTestModel refuses machines with invocations and timers; the traversal itself does not
// start actors, so the paths come from xstate/graph over the real machine.
const traversal = { events: MODEL_EVENTS as SessionEvent[], serializeState: valueKey, input: { id: 'model' } };
const toStates = getShortestPaths(restoring, traversal as never) as unknown as {
  steps: { state: Snap; event: ModelEvent }[];
  state: Snap;
}[];
const covering = transitionCoveringPaths<Snap, SessionEvent, { id: string }>(restoring, traversal, sessionMachine);
const label = (p: { steps: { event: ModelEvent }[] }) => p.steps.map((s) => s.event.type).join(' -> ');
/** Every path to a state and every transition-covering path, less those another path starts with. */
const paths = [...toStates, ...covering.paths].filter(
  (p, i, all) =>
    !all.some((q, j) => (j < i && label(q) === label(p)) || (q.steps.length > p.steps.length && label(q).startsWith(`${label(p)} -> `))),
);

const coverage = new TransitionCoverage(sessionMachine);

/** A session of the private server's own, not the model's. */
const KEEPER = 'keeper';
/** Whether a process runs (one that exited and waits to be reaped does not). */
const processAlive = processExists;

/** The tmux program on the PATH, as the tests run it. */
const TMUX_BIN = (process.env.PATH ?? '')
  .split(delimiter)
  .map((dir) => join(dir, 'tmux'))
  .find((p) => existsSync(p));

describe('session machine, model-based, against real tmux', () => {
  const tmux = usePrivateTmux();

  it('covers every state of the machine, and plans a path for every transition', () => {
    const reached = new Set(toStates.map((p) => valueKey(p.state)));
    expect(covering.unplanned.map(describeTransition), UNPLANNED).toEqual([]);
    expect(reached).toEqual(
      new Set([
        '"absent"',
        '"creating"',
        '"creating" +delete',
        '"failed"',
        '"deleting"',
        '"ended"',
        '"restoring"',
        '"restoring" +delete',
        '"unrestorable"',
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

  paths.forEach((path, n) => {
    it(`path ${n}: ${path.steps.map((s) => s.event.type).join(' -> ') || '(initial)'}`, async () => {
      const name = `m${n}`;
      // The server outlives the path, as a user's server does with sessions of their own (a path
      // that needs the server gone kills this one too, and waits for the server to exit): a
      // session killed at the end of a path must not race the next path's new one with the server's exit.
      await tmux.tmux('has-session', '-t', `=${KEEPER}`).catch(() => tmux.tmux('new-session', '-d', '-s', KEEPER, '--', '/bin/cat'));
      const panes = new LivePanes({ ringBytes: 1 << 20, now: Date.now });
      // A pane whose death is reported before its exit status is known: the program closes its
      // terminal (the pane is dead), and exits with 3 only once the test releases it.
      const release = join(tmux.dir, `release-${name}`);
      const paneExitedOf = (s: Snap | undefined) => s?.matches({ running: { pane: 'exited' } }) === true;
      const lateStatus = path.steps.some((s, i) => s.event.type === 'pane.exited' && paneExitedOf(path.steps[i - 1]?.state));
      const command = lateStatus
        ? [
            '/bin/sh',
            '-c',
            'trap "" HUP; read line; exec </dev/null >/dev/null 2>&1; while [ ! -e "$0" ]; do sleep 0.05; done; exit 3',
            release,
          ]
        : ['/bin/cat'];
      // Where the path needs a kill to fail, the actor runs its tmux commands through a link to
      // the tmux program that the test removes (tmux uninstalled under a running daemon).
      const tmuxLink = join(tmux.dir, `tmux-${name}`);
      const killFails = path.steps.some((s) => s.event.type === 'xstate.error.actor.delete');
      if (killFails) symlinkSync(TMUX_BIN!, tmuxLink);
      // The session's record, as the daemon keeps it; a restore that must fail finds its directory gone.
      const restoreFails = path.steps.some((s) => s.event.type === 'xstate.error.actor.restore');
      const records = new SessionRecords(join(tmux.dir, `data-${name}`));
      const writeRecord = () =>
        records.write({
          v: 1,
          name,
          description: `model ${name}`,
          cwd: restoreFails ? join(tmux.dir, `gone-${name}`) : tmux.dir,
          command,
          sessionFile: null,
          createdAt: new Date().toISOString(),
          reservedSeq: 1 << 20,
          server: null,
          ended: null,
        });
      // A respawn is real, but its tmux command waits until the path says how it should go: the
      // state in between (respawning) is held as long as the path needs it.
      let settleRespawn: (go: boolean) => void = () => undefined;
      const respawnHeld = new Promise<boolean>((resolve) => (settleRespawn = resolve));
      const releaseRespawn = () => settleRespawn(true);
      let agentDies = false;
      const baseCli = killFails ? new TmuxCli({ bin: tmuxLink, socketArgs: tmux.target.socketArgs }) : tmux.cli;
      const cli = new Proxy(baseCli, {
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
        panes,
        agent: () => ({ command: agentDies ? ['/bin/sh', '-c', 'exit 5'] : command, env: {}, cwd: tmux.dir }),
        now: Date.now,
        log: silentLogger,
        sessionsChanged: () => undefined,
        deleteBuffer: () => Promise.resolve(),
        restore: (id) =>
          recreateSession(
            { cli: tmux.cli, records, agent: () => ({ command, env: {}, cwd: tmux.dir }), now: Date.now, log: silentLogger },
            id,
          ),
      });
      const actor = createActor(sessionMachine.provide(impl), { input: { id: name }, inspect: coverage.inspect });
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
        }, 15_000).catch(() => {
          const seen = [...new Set(visited.slice(cursor).map(valueKey))].join(' | ');
          throw new Error(`the session actor never reached ${key}; it went through: ${seen}`);
        });
      };
      const realPane = () => `=${name}:`;
      try {
        await reach(visited[0]!);
        for (let i = 0; i < path.steps.length; i++) {
          const step = path.steps[i]!;
          const from: Snap | undefined = path.steps[i - 1]?.state;
          const next: string | undefined = path.steps[i + 1]?.event.type;
          const type: string = step.event.type;
          if (from?.matches({ running: { pane: 'respawning' } })) {
            // A respawn closes the link itself (tmux 3.3a must not respawn a pane a control client
            // follows), and the link comes back once tmux has respawned the pane.
            if (type === 'xstate.error.actor.respawn') renameSync(tmux.socket, `${tmux.socket}.away`);
            if (type !== 'link.down' && !type.startsWith('xstate.after')) releaseRespawn();
            if (type === 'xstate.error.actor.respawn') {
              await eventually(() => actor.getSnapshot().matches({ running: { pane: 'exited' } }), 15_000, 25, 'the failed respawn');
              renameSync(`${tmux.socket}.away`, tmux.socket);
            }
            if (type === 'pane.revived' || type === 'pane.exited') {
              await eventually(
                async () => (await tmux.tmux('display', '-p', '-t', realPane(), '#{pane_dead}')).trim() === (agentDies ? '1' : '0'),
                15_000,
                25,
                'the respawned pane alive, or dead at once',
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
                // A DELETE while the session is being created: sent before the creation can finish.
                if (next === 'session.delete' && valueKey(path.steps[i + 1]!.state).endsWith('+delete'))
                  actor.send({ type: 'session.delete', keepBuffer: false });
                break;
              case 'session.adopt':
                await createSession(tmux.cli, { name, command, createdAt: new Date().toISOString() });
                actor.send({ type: 'session.adopt' });
                break;
              case 'session.delete':
                if (from?.matches('creating') || from?.matches('restoring')) break; // sent right after the create or restore, above
                // Without the tmux program the kill cannot run.
                if (next === 'xstate.error.actor.delete') rmSync(tmuxLink);
                actor.send({ type: 'session.delete', keepBuffer: false });
                break;
              case 'xstate.error.actor.delete':
                await reach(step.state);
                symlinkSync(TMUX_BIN!, tmuxLink);
                break;
              case 'xstate.error.actor.create':
                break; // produced by the taken name arranged above
              case 'session.gone': {
                // Its server's last session killed from a shell: the tmux server exits with it.
                const server = Number((await tmux.tmux('display-message', '-p', '#{pid}')).trim());
                await tmux.tmux('kill-session', '-t', `=${KEEPER}`);
                await tmux.tmux('kill-session', '-t', `=${name}`);
                await eventually(() => !processAlive(server), 15_000, 25, 'the tmux server gone with its last session');
                break;
              }
              case 'link.down':
                await eventually(() => panes.get(name)?.link.linked === true);
                await tmux.tmux('detach-client', '-s', `=${name}`);
                break;
              case 'pane.exited':
                if (paneExitedOf(from)) {
                  // Reported dead without a status; the program now exits, and its status is reported.
                  await eventually(
                    () => actor.getSnapshot().context.exitStatus === null,
                    15_000,
                    25,
                    'the death reported without a status',
                  );
                  writeFileSync(release, '');
                  await eventually(() => actor.getSnapshot().context.exitStatus === 3, 15_000, 25, 'the exit status 3 reported');
                  break;
                }
                await eventually(() => panes.get(name)?.link.linked === true);
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
              case 'session.restore':
                // At start-up: a record whose tmux server is gone.
                writeRecord();
                actor.send({ type: 'session.restore' });
                // A DELETE while it is being restored: sent before the restore can finish.
                if (next === 'session.delete' && valueKey(path.steps[i + 1]!.state).endsWith('+delete'))
                  actor.send({ type: 'session.delete', keepBuffer: false });
                break;
              case 'xstate.error.actor.restore':
                break; // the record's directory is gone (arranged above)
              case 'server.lost': {
                // The tmux server crashes (SIGKILL) under the live link: its control client hears
                // "server exited unexpectedly".
                writeRecord();
                await eventually(() => panes.get(name)?.link.linked === true);
                const server = Number((await tmux.tmux('display-message', '-p', '#{pid}')).trim());
                process.kill(server, 'SIGKILL');
                await eventually(() => !processAlive(server), 15_000, 25, 'the tmux server gone');
                break;
              }
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
      }
    });
  });

  it('the real actors took every transition of the machine', () => {
    console.log(coverage.report());
    expect(coverage.uncovered().map(describeTransition), coverage.report()).toEqual([]);
  });
});
