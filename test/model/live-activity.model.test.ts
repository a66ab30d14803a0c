/**
 * Model-based test of the Live Activity machine (docs/contract.md "Live Activity"): paths
 * planned with xstate/graph to take every transition, each run against the REAL driver (the
 * Live Activity service) over a real device registry and token store in a temp dir, pushing over
 * a real HTTP/2 TLS stand-in for APNs that checks each provider token. The machines' delays run
 * on a simulated clock the test moves. Each event is produced the way it comes for real: the
 * phone's tokens and their removal through the registry (what `PUT` / `DELETE
 * /device/live-activity` call), the summary through the driver's entry, a timer by moving the
 * clock, a dead token by APNs' reply. After each step the driver's machine is in the model's
 * state, the store holds the model's tokens (what a restart starts from), and the stand-in got
 * exactly the pushes the transition asks for (start, update, end; to which token).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SimulatedClock, transition, type SnapshotFrom } from 'xstate';
import { DeviceRegistry } from '../../src/auth/devices.js';
import { TokenStore } from '../../src/auth/token-store.js';
import { silentLogger } from '../../src/log.js';
import { liveActivityMachine, type ActivityDigest, type LiveActivityEvent } from '../../src/machines/live-activity.machine.js';
import { ApnsClient } from '../../src/push/apns.js';
import { contentStateOf, type SessionSummary } from '../../src/push/live-activity-content.js';
import { LiveActivityService } from '../../src/push/live-activity.service.js';
import { ProviderTokens } from '../../src/push/provider-token.js';
import { loadPushKey } from '../../src/push/provider-token.js';
import { startApnsStandIns, TEST_KEY_ID, TEST_TEAM_ID, type ApnsStandIns } from '../../testkit/apns-server.js';
import { useTempDirs } from '../helpers/temp-dirs.js';
import { eventually } from '../helpers/tmux.js';
import { describeTransition, TransitionCoverage, transitionCoveringPaths, UNPLANNED } from '../helpers/transitions.js';

type Snap = SnapshotFrom<typeof liveActivityMachine>;

const START = 'a1'.repeat(40);
const UPDATE = 'b2'.repeat(40);
const DELAYS = { debounce: 2000, idleWhile: 600_000, startWait: 60_000 };
const session = (state: SessionSummary['state'], changedAt: number): SessionSummary[] => [
  { sessionId: 's1', name: 'webapp', agent: 'Claude', state, changedAt },
];
const WORK = session('thinking', 1);
const QUIET = session('awaiting-input', 2);
const digestOf = (sessions: readonly SessionSummary[]): ActivityDigest => {
  const content = contentStateOf(sessions);
  return { working: content.working, key: JSON.stringify(content) };
};
const SUMMARIES = new Map([
  [digestOf(WORK).key, WORK],
  [digestOf(QUIET).key, QUIET],
]);
const after = (delay: string, node: string) => ({ type: `xstate.after.${delay}.liveActivity.${node}` }) as unknown as LiveActivityEvent;
const DEBOUNCED = after('debounce', 'running.content.debouncing');
const IDLE = after('idleWhile', 'running.work.quiet');
const START_WAIT = after('startWait', 'starting');

const model = liveActivityMachine.provide({
  actions: { sendStart: () => undefined, sendUpdate: () => undefined, sendEnd: () => undefined, storeTokens: () => undefined },
});
const inState = (s: Snap, path: string) => s.matches(path as never);
/** The events the model offers in a state: a timer only where it runs, alone (the clock moves one at a time). */
const eventsOf = (s: Snap): LiveActivityEvent[] => [
  { type: 'token.start', token: START },
  { type: 'token.update', token: UPDATE },
  { type: 'tokens.forget' },
  { type: 'summary.changed', digest: digestOf(WORK) },
  { type: 'summary.changed', digest: digestOf(QUIET) },
  { type: 'push.gone', token: START },
  { type: 'push.gone', token: UPDATE },
  ...(inState(s, 'running.content.debouncing') ? [DEBOUNCED] : []),
  ...(inState(s, 'running.work.quiet') && inState(s, 'running.content.settled') ? [IDLE] : []),
  ...(inState(s, 'starting') ? [START_WAIT] : []),
];
const traversal = {
  events: eventsOf,
  input: { digest: { working: 0, key: '' } },
  serializeState: (s: Snap) => JSON.stringify([s.value, s.context]),
};
const planned = transitionCoveringPaths<Snap, LiveActivityEvent, object>(model, traversal, liveActivityMachine);
const coverage = new TransitionCoverage(liveActivityMachine);

const label = (e: LiveActivityEvent | { type: string }): string => {
  if (e.type === 'summary.changed') return (e as { digest: ActivityDigest }).digest.working > 0 ? 'work' : 'quiet';
  if (e.type === 'push.gone') return `410(${(e as { token: string }).token === START ? 'start' : 'update'})`;
  if (e.type.startsWith('xstate.after.')) return `after ${e.type.split('.')[2]}`;
  return e.type;
};
/** The pushes a step makes the machine ask for, as `event:token`. */
const pushesOf = (before: Snap, event: LiveActivityEvent): string[] => {
  const [, actions] = transition(model, before, event);
  const before_ = before.context;
  return actions.flatMap((a) =>
    a.type === 'sendStart'
      ? [`start:${before_.startToken ?? START}`]
      : a.type === 'sendUpdate'
        ? [`update:${before_.updateToken ?? UPDATE}`]
        : a.type === 'sendEnd'
          ? [`end:${before_.updateToken ?? UPDATE}`]
          : [],
  );
};

describe('Live Activity machine, model-based, against the real driver, token store and an APNs stand-in', () => {
  const tempDir = useTempDirs('tether-activity-');
  let apns: ApnsStandIns;
  let dir: string;
  // The stand-in and its key outlive each test (the temp dirs of useTempDirs do not).
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tether-activity-apns-'));
    apns = await startApnsStandIns(dir);
  });
  afterAll(async () => {
    await apns?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('plans a path for every transition of the machine', () => {
    expect(planned.unplanned.map(describeTransition), UNPLANNED).toEqual([]);
  });

  for (const path of planned.paths) {
    it(`${path.steps.map((s) => label(s.event)).join(' -> ')} => ${JSON.stringify(path.state.value)}`, async () => {
      const tokens = await TokenStore.open(tempDir());
      const registry = new DeviceRegistry(tokens);
      const { record } = tokens.create('phone', 'device');
      registry.register(record.id, { deviceToken: 'cc'.repeat(32), environment: 'sandbox', deviceName: 'phone' });
      const clock = new SimulatedClock();
      const client = new ApnsClient({ ca: apns.sandbox.certPem });
      const key = await loadPushKey(apns.keyPath);
      const settings = {
        enabled: true as const,
        key,
        teamId: TEST_TEAM_ID,
        keyId: TEST_KEY_ID,
        bundleId: 'dev.tether.app',
        urls: { sandbox: apns.sandbox.url, production: apns.production.url },
      };
      const service = new LiveActivityService({
        settings,
        client,
        tokens: new ProviderTokens({ key, teamId: TEST_TEAM_ID, keyId: TEST_KEY_ID, now: Date.now }),
        devices: registry,
        attributes: () => ({ daemonId: 'd1', daemonName: 'devbox' }),
        delays: DELAYS,
        now: Date.now,
        log: silentLogger,
        actorOptions: { clock, inspect: coverage.inspect },
      });
      const seen = () => apns.sandbox.requests.filter((r) => r.deviceToken === START || r.deviceToken === UPDATE);
      const base = seen().length;
      const expected: string[] = [];
      let before = model.resolveState({
        value: 'none',
        context: { startToken: null, updateToken: null, digest: { working: 0, key: '' }, sentKey: null },
      });
      try {
        for (const step of path.steps) {
          const e = step.event;
          if ((e.type as string) === 'xstate.init') continue;
          expected.push(...pushesOf(before, e));
          if (e.type === 'token.start') registry.setLiveActivity(record.id, { pushToStartToken: e.token });
          else if (e.type === 'token.update') registry.setLiveActivity(record.id, { updateToken: e.token });
          else if (e.type === 'tokens.forget') registry.forgetLiveActivity(record.id);
          else if (e.type === 'summary.changed') service.setSessions(SUMMARIES.get(e.digest.key)!);
          else if (e.type === 'push.gone') service.replied(record.id, e.token, { status: 410, reason: 'Unregistered' });
          else if (e === DEBOUNCED) clock.increment(DELAYS.debounce);
          else if (e === IDLE) clock.increment(DELAYS.idleWhile);
          else if (e === START_WAIT) clock.increment(DELAYS.startWait);
          else throw new Error(`no way to produce ${(e as { type: string }).type}`);

          // The driver's machine is where the model is, whatever state its actor is in.
          expect(service.stateOf(record.id) ?? 'none', label(e)).toEqual(step.state.value);
          // What a restart starts from: the tokens the model holds.
          const held = new DeviceRegistry(await TokenStore.open(tokens.dir)).liveActivities()[0]!;
          expect({ start: held.pushToStartToken, update: held.updateToken }).toEqual({
            start: step.state.context.startToken,
            update: step.state.context.updateToken,
          });
          // The pushes APNs got: exactly those the transitions asked for, in order.
          const got = () =>
            seen()
              .slice(base)
              .map((r) => `${(r.payload as { aps: { event: string } }).aps.event}:${r.deviceToken}`);
          await eventually(() => got().length >= expected.length, 10_000);
          expect(got()).toEqual(expected);
          for (const r of seen().slice(base)) {
            expect(r.headers['apns-push-type']).toBe('liveactivity');
            expect(r.headers['apns-topic']).toBe('dev.tether.app.push-type.liveactivity');
            expect(r.jwtError).toBeNull();
          }
          before = step.state;
        }
      } finally {
        service.stop();
        client.close();
        tokens.close();
      }
    });
  }

  it('the real driver took every transition of the machine', () => {
    console.log(coverage.report());
    expect(coverage.uncovered().map(describeTransition), coverage.report()).toEqual([]);
  });
});
