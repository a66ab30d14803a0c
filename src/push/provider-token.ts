/**
 * The APNs provider token: an ES256 JWT `{alg, kid}` / `{iss: team_id, iat}` signed with the
 * `.p8` key (docs/push.md).
 *
 * Invariant: one token is reused for every push until it is REUSE_MS old; a new one is never
 * made sooner than MIN_RENEW_MS after the last (APNs answers `TooManyProviderTokenUpdates`
 * to a provider that renews more often), not even when APNs calls the token expired.
 * Concurrent callers share one signing: N pushes at the same moment carry one token.
 */
import { createPrivateKey, type KeyObject } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { DomainError } from '../errors.js';

/** APNs accepts a token for an hour: renew it a little before. */
export const REUSE_MS = 55 * 60_000;
/** APNs refuses renewals more often than this. */
export const MIN_RENEW_MS = 20 * 60_000;

/** The `.p8` key could not be used (`push-config-invalid`); the message is one line for the person starting tether. */
const keyUnusable = (message: string): DomainError => new DomainError('push-config-invalid', message);

/**
 * Reads and checks the push auth key: a PKCS#8 PEM holding an EC P-256 private key, as Apple
 * issues them. Every failure is `push-config-invalid`, naming the file and what is wrong.
 */
export async function loadPushKey(path: string): Promise<KeyObject> {
  let pem: string;
  try {
    pem = await readFile(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT'
        ? 'does not exist'
        : code === 'EACCES'
          ? 'cannot be read (permission denied)'
          : code === 'EISDIR'
            ? 'is a directory'
            : `cannot be read (${code ?? String(err)})`;
    throw keyUnusable(`[push] key_path ${path} ${why}`);
  }
  let key: KeyObject;
  try {
    key = createPrivateKey({ key: pem, format: 'pem' });
  } catch {
    throw keyUnusable(`[push] key_path ${path} is not a PEM private key (expected the .p8 file from Apple)`);
  }
  const curve = key.asymmetricKeyDetails?.namedCurve;
  if (key.asymmetricKeyType !== 'ec' || (curve !== 'prime256v1' && curve !== 'P-256')) {
    const found =
      key.asymmetricKeyType === 'ec'
        ? `an EC key on ${curve ?? 'an unknown curve'}`
        : `an ${(key.asymmetricKeyType ?? 'unknown').toUpperCase()} key`;
    throw keyUnusable(`[push] key_path ${path} holds ${found}; APNs needs an EC P-256 key (ES256)`);
  }
  return key;
}

export interface ProviderTokenOptions {
  readonly key: KeyObject;
  readonly teamId: string;
  readonly keyId: string;
  readonly now: () => number;
}

/** Makes and caches the provider token. */
export class ProviderTokens {
  private token: string | null = null;
  private issuedAt = 0;
  /** The signing under way, which every caller meanwhile waits for. */
  private making: Promise<string> | null = null;
  /** How many tokens were made; health and tests read it. */
  issued = 0;

  constructor(private readonly opts: ProviderTokenOptions) {}

  /** The token to send now: the cached one while it is younger than REUSE_MS. */
  async current(): Promise<string> {
    if (this.token !== null && this.opts.now() - this.issuedAt < REUSE_MS) return this.token;
    return this.make();
  }

  /**
   * APNs said the token is expired: make a new one if the rules allow (it is at least
   * MIN_RENEW_MS old). Returns the new token, or null when it may not be renewed yet.
   */
  async renewAfterExpired(rejected: string): Promise<string | null> {
    if (this.token !== rejected) return this.current();
    if (this.opts.now() - this.issuedAt < MIN_RENEW_MS) return null;
    return this.make();
  }

  private make(): Promise<string> {
    this.making ??= this.sign().finally(() => (this.making = null));
    return this.making;
  }

  private async sign(): Promise<string> {
    const now = this.opts.now();
    // Loaded on the first push only: a daemon without push never pays for the library.
    const { SignJWT } = await import('jose');
    const token = await new SignJWT({})
      .setProtectedHeader({ alg: 'ES256', kid: this.opts.keyId })
      .setIssuer(this.opts.teamId)
      .setIssuedAt(Math.floor(now / 1000))
      .sign(this.opts.key);
    this.token = token;
    this.issuedAt = now;
    this.issued++;
    return token;
  }
}
