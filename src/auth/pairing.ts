/**
 * The pairing exchange (docs/pairing.md): a pairing token, taken once, buys
 * a permanent token named after the device, and the device registration is stored with it.
 *
 * Invariant: the pairing token is taken (and so spent) before anything is created; a pairing
 * that fails afterwards (the store cannot be written) has spent it, and `tether pair` makes a
 * new one: never two permanent tokens for one pairing token.
 */
import type { DeviceFields } from '../machines/device.machine.js';
import type { DeviceRegistry } from './devices.js';
import type { PairingStore } from './pairing-store.js';
import { isDomainError } from '../errors.js';
import { MAX_TOKEN_NAME_CHARS } from './token-file.js';
import type { TokenStore } from './token-store.js';

/** What `POST /pair` carries (`environment` only with `deviceToken`). */
export interface PairRequest {
  readonly pairingToken: string;
  readonly deviceName: string;
  readonly deviceToken?: string;
  readonly environment?: DeviceFields['environment'];
}

export interface PairResult {
  readonly token: string;
  readonly tokenId: string;
  readonly name: string;
}

/** The first of `name`, `name (2)`, `name (3)`... that no token has yet. */
export function freeTokenName(name: string, taken: ReadonlySet<string>): string {
  const base = name.trim();
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) {
    const suffix = ` (${n})`;
    // Cut by code points, so the name keeps at most its limit and never half an emoji.
    const candidate = [...base].slice(0, MAX_TOKEN_NAME_CHARS - suffix.length).join('') + suffix;
    if (!taken.has(candidate)) return candidate;
  }
}

export class PairingService {
  constructor(
    private readonly pairings: PairingStore,
    private readonly tokens: TokenStore,
    private readonly devices: DeviceRegistry,
  ) {}

  /** The exchange; null when the pairing token is wrong, used or expired (a 401). */
  pair(req: PairRequest): PairResult | null {
    if (this.pairings.take(req.pairingToken) !== true) return null;
    for (let attempt = 0; ; attempt++) {
      const name = freeTokenName(req.deviceName, new Set(this.tokens.list().map((r) => r.name)));
      try {
        const { token, record } = this.tokens.create(name, 'device');
        if (req.deviceToken !== undefined && req.environment !== undefined) {
          this.devices.register(record.id, { deviceToken: req.deviceToken, environment: req.environment, deviceName: req.deviceName });
        }
        return { token, tokenId: record.id, name: record.name };
      } catch (err) {
        // Another process took the name between the look and the write: look again.
        if (isDomainError(err, 'token-name-taken') && attempt < 3) continue;
        throw err;
      }
    }
  }

  /** A paired client registers its device (again): at its next launch, or with a new token. */
  registerDevice(tokenId: string, fields: DeviceFields): void {
    this.devices.register(tokenId, fields);
  }

  setLiveActivity(tokenId: string, tokens: { pushToStartToken?: string; updateToken?: string }) {
    return this.devices.setLiveActivity(tokenId, tokens);
  }

  forgetLiveActivity(tokenId: string): void {
    this.devices.forgetLiveActivity(tokenId);
  }
}
