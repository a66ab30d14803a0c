/**
 * Model-based test of the device registration machine (docs/contract.md "Device registration"): every
 * simple path through the machine, generated with xstate/graph, is run against the REAL device
 * registry over a real token store in a temp dir (the files the daemon and the CLI share).
 * After each step, what the store holds must be what the machine says: the state, and whether
 * push notifications would go to the device (and to which device token). The registry runs
 * the machine with xstate's pure `transition`, so the transitions it takes are observed on the
 * machine itself (test/helpers/transitions.ts `watch`); it must take every one.
 */
import { describe, expect, it } from 'vitest';
import { getSimplePaths } from 'xstate/graph';
import { DeviceRegistry } from '../../src/auth/devices.js';
import { TokenStore } from '../../src/auth/token-store.js';
import { deviceMachine, type DeviceEvent } from '../../src/machines/device.machine.js';
import { useTempDirs } from '../helpers/temp-dirs.js';
import { describeTransition, TransitionCoverage, transitionCoveringPaths, UNPLANNED, watchCoverageDuring } from '../helpers/transitions.js';

const AT = '2026-01-01T00:00:00.000Z';
const PHONE_A = { deviceToken: 'aa'.repeat(32), environment: 'sandbox' as const, deviceName: 'phone A' };
const PHONE_B = { deviceToken: 'bb'.repeat(32), environment: 'production' as const, deviceName: 'phone B' };
const EVENTS: DeviceEvent[] = [
  { type: 'device.register', ...PHONE_A, at: AT },
  { type: 'device.register', ...PHONE_B, at: AT },
  { type: 'push.unregistered', deviceToken: PHONE_A.deviceToken, at: AT },
  { type: 'push.unregistered', deviceToken: PHONE_B.deviceToken, at: AT },
  { type: 'token.revoked', at: AT },
];

const model = deviceMachine.provide({ actions: { storeDevice: () => undefined, deleteMapping: () => undefined } });
const traversal = {
  events: EVENTS,
  serializeState: (s: { value: unknown; context: { deviceToken: string | null } }) =>
    `${JSON.stringify(s.value)}:${s.context.deviceToken ?? '-'}`,
};
const simple = getSimplePaths(model, traversal as never);
const covering = transitionCoveringPaths<(typeof simple)[number]['state'], DeviceEvent, undefined>(model, traversal, deviceMachine);
const coverage = new TransitionCoverage(deviceMachine);

const label = (e: DeviceEvent | { type: 'xstate.init' }): string =>
  e.type === 'device.register'
    ? `register(${e.deviceName})`
    : e.type === 'push.unregistered'
      ? `410(${e.deviceToken === PHONE_A.deviceToken ? 'A' : 'B'})`
      : e.type === 'token.revoked'
        ? 'revoke'
        : 'start';
const pathKey = (p: { steps: { event: DeviceEvent | { type: 'xstate.init' } }[] }) => p.steps.map((s) => label(s.event)).join(' -> ');

const paths = [...simple, ...covering.paths.filter((c) => !simple.some((p) => pathKey(p) === pathKey(c)))] as typeof simple;

describe('device registration machine, model-based, against the real registry and token store', () => {
  watchCoverageDuring(coverage, deviceMachine);
  const tempDir = useTempDirs('tether-device-');

  it('reaches every state, including the contract row registered --410--> removed; and plans every transition', () => {
    expect(covering.unplanned.map(describeTransition), UNPLANNED).toEqual([]);
    expect(new Set(paths.map((p) => p.state.value))).toEqual(new Set(['unregistered', 'registered', 'removed', 'revoked']));
    expect(paths.some((p) => p.steps.some((s) => s.event.type === 'push.unregistered') && p.state.value === 'removed')).toBe(true);
  });

  for (const path of paths) {
    it(`${path.steps.map((s) => label(s.event)).join(' -> ')} => ${String(path.state.value)}`, async () => {
      const dir = tempDir();
      const tokens = await TokenStore.open(dir);
      const registry = new DeviceRegistry(tokens);
      const { record } = tokens.create('phone', 'device');
      for (const step of path.steps) {
        const e = step.event;
        if (e.type === 'device.register')
          registry.register(record.id, { deviceToken: e.deviceToken, environment: e.environment, deviceName: e.deviceName });
        else if (e.type === 'push.unregistered') registry.remove(e.deviceToken);
        else if (e.type === 'token.revoked') expect(registry.revoke(record.id).id).toBe(record.id); // as `tether auth revoke` does

        // What a reader of the store (the daemon after a restart, `tether auth list`) sees.
        const fresh = new DeviceRegistry(await TokenStore.open(dir));
        expect(fresh.stateOf(record.id)).toBe(step.state.value);
        const pushedTo = fresh.list().map((d) => d.deviceToken);
        if (step.state.value === 'registered') expect(pushedTo).toEqual([step.state.context.deviceToken]);
        else expect(pushedTo).toEqual([]);
      }
      expect(registry.stateOf(record.id)).toBe(path.state.value);
      tokens.close();
    });
  }

  it('the real registry took every transition of the machine', () => {
    console.log(coverage.report());
    expect(coverage.uncovered().map(describeTransition), coverage.report()).toEqual([]);
  });
});
