/**
 * The device registry: the device registration machine (src/machines/device.machine.ts) run
 * over the devices stored with their tokens. Each operation reads the token's stored state,
 * asks the machine for the transition (xstate's pure `transition`), and carries out the
 * actions it returns on the token store; an event the machine does not take in that state
 * changes nothing and says so.
 *
 * Invariant: the state lives in the token store only (one file, written atomically), so the
 * daemon, the CLI and a restart all see the same registrations.
 */
import { transition } from 'xstate';
import { deviceMachine, type DeviceEvent, type DeviceFields, type DeviceStateValue } from '../machines/device.machine.js';
import type { PushDevice, PushDevices } from '../push/push.service.js';
import type { StoredDevice, TokenRecord } from './token-file.js';
import type { TokenStore } from './token-store.js';

/** The machine's state for a stored token record. */
export function deviceStateOf(record: TokenRecord | undefined): DeviceStateValue {
  if (!record) return 'revoked';
  return record.device?.state ?? 'unregistered';
}

export class DeviceRegistry implements PushDevices {
  constructor(
    private readonly tokens: TokenStore,
    private readonly now: () => number = Date.now,
  ) {}

  private record(tokenId: string): TokenRecord | undefined {
    return this.tokens.list().find((r) => r.id === tokenId);
  }

  /** The state of the device of this token. */
  stateOf(tokenId: string): DeviceStateValue {
    return deviceStateOf(this.record(tokenId));
  }

  /**
   * Sends `event` to the token's device; true when the machine took it (and the store now
   * holds the new state), false when that state ignores it.
   */
  private send(record: TokenRecord, event: DeviceEvent): boolean {
    const value = deviceStateOf(record);
    const before = deviceMachine.resolveState({ value, context: { deviceToken: record.device?.deviceToken ?? null } });
    const [after, actions] = transition(deviceMachine, before, event);
    const types = actions.map((a) => a.type);
    if (after.value === value && !types.includes('storeDevice')) return false;
    const at = new Date(this.now()).toISOString();
    for (const type of types) {
      if (type === 'storeDevice' && event.type === 'device.register') {
        const stored: StoredDevice = {
          deviceToken: event.deviceToken,
          environment: event.environment,
          deviceName: event.deviceName,
          state: 'registered',
          at,
        };
        this.tokens.setDevice(record.id, stored);
      } else if (type === 'deleteMapping' && record.device) {
        this.tokens.setDevice(record.id, { ...record.device, state: 'removed', at });
      } else if (type === 'deleteToken') {
        this.tokens.revoke(record.id);
      }
    }
    return true;
  }

  /** Registers (or registers again) the device of a token. */
  register(tokenId: string, fields: DeviceFields): void {
    const record = this.record(tokenId);
    if (!record) throw new Error(`no token has the id "${tokenId}"`);
    this.send(record, { type: 'device.register', ...fields, at: new Date(this.now()).toISOString() });
  }

  /**
   * Revokes a token by id or, failing that, by name (`tether auth revoke`): the token and its
   * device with it are gone. Returns the revoked record; an unknown token is the store's error.
   */
  revoke(nameOrId: string): TokenRecord {
    const all = this.tokens.list();
    const record = all.find((r) => r.id === nameOrId) ?? all.find((r) => r.name === nameOrId);
    if (!record) return this.tokens.revoke(nameOrId);
    this.send(record, { type: 'token.revoked', at: new Date(this.now()).toISOString() });
    return record;
  }

  /** The push service answered 410 for this device token: every mapping to it is removed. */
  remove(deviceToken: string): void {
    const at = new Date(this.now()).toISOString();
    for (const record of this.tokens.list()) {
      if (record.device?.deviceToken === deviceToken) this.send(record, { type: 'push.unregistered', deviceToken, at });
    }
  }

  /** Devices that pushes go to now. */
  list(): readonly PushDevice[] {
    const out: PushDevice[] = [];
    for (const r of this.tokens.list()) {
      if (r.device?.state !== 'registered') continue;
      out.push({ tokenId: r.id, deviceToken: r.device.deviceToken, environment: r.device.environment, deviceName: r.device.deviceName });
    }
    return out;
  }
}
