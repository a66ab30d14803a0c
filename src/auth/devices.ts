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
import { DomainError } from '../errors.js';
import type { StoredDevice, StoredLiveActivity, TokenRecord } from './token-file.js';
import type { TokenStore } from './token-store.js';

/** The machine's state for a stored token record. */
export function deviceStateOf(record: TokenRecord | undefined): DeviceStateValue {
  if (!record) return 'revoked';
  return record.device?.state ?? 'unregistered';
}

/** A device's Live Activity tokens as the driver needs them (docs/push.md "Live Activity"). */
export interface LiveActivityDevice {
  readonly tokenId: string;
  readonly environment: 'sandbox' | 'production';
  readonly deviceName: string;
  readonly pushToStartToken: string | null;
  readonly updateToken: string | null;
}

/** What a client sent (either or both tokens), or null: forget them (DELETE /device/live-activity). */
export type LiveActivityTokens = { readonly pushToStartToken?: string; readonly updateToken?: string } | null;

export class DeviceRegistry implements PushDevices {
  private readonly liveActivityListeners = new Set<(tokenId: string, tokens: LiveActivityTokens) => void>();

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

  /**
   * The client's Live Activity tokens (PUT /device/live-activity): each one given replaces the
   * stored one of its kind, the other stays; the driver hears of them at once. A token whose
   * device never registered has no APNs environment: `device-not-registered`.
   */
  setLiveActivity(tokenId: string, tokens: NonNullable<LiveActivityTokens>): StoredLiveActivity {
    const record = this.record(tokenId);
    if (!record) throw new Error(`no token has the id "${tokenId}"`);
    if (!record.device)
      throw new DomainError('device-not-registered', 'register the device first (PUT /device): its environment says where pushes go');
    const before = record.liveActivity;
    const stored: StoredLiveActivity = {
      pushToStartToken: tokens.pushToStartToken?.toLowerCase() ?? before?.pushToStartToken ?? null,
      updateToken: tokens.updateToken?.toLowerCase() ?? before?.updateToken ?? null,
      at: new Date(this.now()).toISOString(),
    };
    this.tokens.setLiveActivity(tokenId, stored);
    const told = {
      ...(tokens.pushToStartToken !== undefined ? { pushToStartToken: stored.pushToStartToken! } : {}),
      ...(tokens.updateToken !== undefined ? { updateToken: stored.updateToken! } : {}),
    };
    for (const listener of this.liveActivityListeners) listener(tokenId, told);
    return stored;
  }

  /** DELETE /device/live-activity: both tokens are forgotten; the driver ends a running activity. */
  forgetLiveActivity(tokenId: string): void {
    if (!this.record(tokenId)) throw new Error(`no token has the id "${tokenId}"`);
    this.tokens.setLiveActivity(tokenId, null);
    for (const listener of this.liveActivityListeners) listener(tokenId, null);
  }

  /** The driver's own view of the tokens (a 410, an ended activity): written only when it differs. */
  storeLiveActivity(tokenId: string, tokens: { pushToStartToken: string | null; updateToken: string | null }): void {
    const record = this.record(tokenId);
    if (!record) return;
    const held = record.liveActivity ?? { pushToStartToken: null, updateToken: null };
    if (held.pushToStartToken === tokens.pushToStartToken && held.updateToken === tokens.updateToken) return;
    const none = tokens.pushToStartToken === null && tokens.updateToken === null;
    this.tokens.setLiveActivity(tokenId, none ? null : { ...tokens, at: new Date(this.now()).toISOString() });
  }

  /** Every device that registered (a Live Activity needs its environment), with its Live Activity tokens or nulls. */
  liveActivities(): readonly LiveActivityDevice[] {
    const out: LiveActivityDevice[] = [];
    for (const r of this.tokens.list()) {
      if (!r.device) continue;
      const { pushToStartToken = null, updateToken = null } = r.liveActivity ?? {};
      out.push({ tokenId: r.id, environment: r.device.environment, deviceName: r.device.deviceName, pushToStartToken, updateToken });
    }
    return out;
  }

  /** Tells `listener` of every token a client sends or forgets; returns the function that stops it. */
  onLiveActivity(listener: (tokenId: string, tokens: LiveActivityTokens) => void): () => void {
    this.liveActivityListeners.add(listener);
    return () => this.liveActivityListeners.delete(listener);
  }
}
