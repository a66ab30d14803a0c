/**
 * Device registration (docs/contract.md "Device registration", with
 * docs/pairing.md "Devices"): whether a paired token has a device that push
 * notifications go to. One per token; the registry (src/auth/devices.ts) keeps the state in the
 * token store and runs this machine's transitions with xstate's pure `transition`.
 *
 * States: `unregistered` (a token without a device token: a CLI token, or a device that sent
 * none), `registered` (pushes go to it), `removed` (the push service answered 410: the mapping
 * is deleted; the client registers again at its next launch) and `revoked` (the token itself is
 * gone, final).
 *
 * Invariants: the machine is pure (no clock: each event carries its `at`, ISO 8601); a 410 for
 * a device token other than the one registered changes nothing (an old reply arriving after a
 * re-registration must not delete the new mapping).
 */
import { assign, setup } from 'xstate';

export type DeviceEnvironment = 'sandbox' | 'production';

/** What a device sends to be reachable by push (docs/contract.md "Device registration"). */
export interface DeviceFields {
  readonly deviceToken: string;
  readonly environment: DeviceEnvironment;
  readonly deviceName: string;
}

export type DeviceEvent =
  /** At pairing with a device token, or later from the client (PUT /device). */
  | ({ type: 'device.register'; at: string } & DeviceFields)
  /** The push service answered 410 Unregistered for `deviceToken`. */
  | { type: 'push.unregistered'; deviceToken: string; at: string }
  /** The token was revoked (`tether auth revoke`). */
  | { type: 'token.revoked'; at: string };

export interface DeviceContext {
  /** The registered device token (also kept in `removed`, to tell an old 410 from a new one). */
  readonly deviceToken: string | null;
}

const notProvided = (what: string) => () => {
  throw new Error(`deviceMachine: ${what} was not provided`);
};

/** `device.register` in a state: the device is (again) the one pushes go to. */
const register = (description: string, reenter = false) => ({
  target: 'registered' as const,
  reenter,
  actions: ['rememberDevice' as const, 'storeDevice' as const],
  description,
  meta: { row: 'tether' },
});
/** `token.revoked` in any state but the last: the token, and its device with it, is gone. */
const revoke = {
  target: 'revoked' as const,
  actions: ['deleteToken' as const],
  description: 'The token was revoked',
  meta: { row: 'tether' },
};

export const deviceMachine = setup({
  types: {
    context: {} as DeviceContext,
    events: {} as DeviceEvent,
  },
  guards: {
    /** The 410 is about the device token registered now. */
    isCurrentDevice: ({ context, event }) => event.type === 'push.unregistered' && event.deviceToken === context.deviceToken,
  },
  actions: {
    /** The machine's own memory of the device token (to match later 410 replies). */
    rememberDevice: assign({ deviceToken: ({ event }) => (event.type === 'device.register' ? event.deviceToken : null) }),
    /** Stores the device fields with the token (the token store, atomically). */
    storeDevice: notProvided('storeDevice'),
    /** Deletes the device mapping: no push goes to it any more. */
    deleteMapping: notProvided('deleteMapping'),
    /** Deletes the token itself (and its device with it): `tether auth revoke`. */
    deleteToken: notProvided('deleteToken'),
  },
}).createMachine({
  id: 'device',
  description: 'docs/contract.md "Device registration": a paired device that push notifications reach',
  context: { deviceToken: null },
  initial: 'unregistered',
  states: {
    unregistered: {
      description: 'A token without a device token: nothing to push to',
      on: {
        'device.register': register('Paired with a device token, or registered later by the client'),
        'token.revoked': revoke,
      },
    },
    registered: {
      description: 'Push notifications go to this device token',
      on: {
        'push.unregistered': {
          guard: 'isCurrentDevice',
          target: 'removed',
          actions: 'deleteMapping',
          description: 'The push service says the device token is dead',
          meta: { row: 'registered --push service reply 410--> removed' },
        },
        'device.register': register('The client registered again (a new device token, or the same one)', true),
        'token.revoked': revoke,
      },
    },
    removed: {
      description: 'The mapping is deleted; the client re-registers at its next launch',
      on: {
        'device.register': register('The client registered again at its next launch'),
        'token.revoked': revoke,
      },
    },
    revoked: {
      description: 'The token is gone, and its device with it',
      type: 'final',
    },
  },
});

export type DeviceStateValue = 'unregistered' | 'registered' | 'removed' | 'revoked';
