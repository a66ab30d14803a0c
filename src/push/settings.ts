/**
 * The `[push]` settings, checked at start, and what health shows of push: apart from the
 * service, so a daemon without push configured never loads the APNs client (docs/benchmarks.md
 * "Memory").
 */
import type { KeyObject } from 'node:crypto';
import { DomainError } from '../errors.js';
import { loadPushKey } from './provider-token.js';

/** The `[push]` config section, as in the file. */
export interface PushConfig {
  readonly team_id: string;
  readonly key_id: string;
  readonly key_path: string;
  readonly bundle_id: string;
  readonly sandbox_url: string;
  readonly production_url: string;
}

/** Push settings ready to use, or why push is off. */
export type PushSettings =
  | { readonly enabled: false; readonly reason: string }
  | {
      readonly enabled: true;
      readonly key: KeyObject;
      readonly teamId: string;
      readonly keyId: string;
      readonly bundleId: string;
      readonly urls: { readonly sandbox: string; readonly production: string };
    };

/** A `[push]` section that cannot work (`push-config-invalid`); the message is one line naming the key. */
export const pushConfigInvalid = (message: string): DomainError => new DomainError('push-config-invalid', message);

const REQUIRED = ['team_id', 'key_id', 'key_path', 'bundle_id'] as const;

/**
 * Checks `[push]` at start: all four keys empty is "off" (a warning in health); some set and
 * some not, or a key file that cannot be used, is an error naming what to fix.
 */
export async function preparePush(config: PushConfig, configFile: string): Promise<PushSettings> {
  const missing = REQUIRED.filter((k) => config[k] === '');
  if (missing.length === REQUIRED.length) {
    return { enabled: false, reason: 'push is not configured: set team_id, key_id, key_path and bundle_id in [push]' };
  }
  if (missing.length > 0) {
    throw pushConfigInvalid(
      `[push] in ${configFile}: ${missing.join(', ')} must be set too (push needs team_id, key_id, key_path and bundle_id)`,
    );
  }
  for (const k of ['sandbox_url', 'production_url'] as const) {
    if (config[k] === '') throw pushConfigInvalid(`[push] in ${configFile}: ${k} must not be empty while push is configured`);
  }
  let key: KeyObject;
  try {
    key = await loadPushKey(config.key_path);
  } catch (err) {
    throw pushConfigInvalid(`${(err as Error).message} (in ${configFile})`);
  }
  return {
    enabled: true,
    key,
    teamId: config.team_id,
    keyId: config.key_id,
    bundleId: config.bundle_id,
    urls: { sandbox: config.sandbox_url, production: config.production_url },
  };
}

/** What health shows of push. */
export interface PushStatus {
  readonly configured: boolean;
  /** Why push is off, when it is. */
  readonly reason: string | null;
  readonly sent: number;
  readonly failed: number;
  readonly lastError: { readonly at: string; readonly status: number; readonly reason: string; readonly device: string } | null;
}
