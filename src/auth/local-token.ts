/**
 * The local token of a daemon's start (docs/pairing.md): read, or made on a first start; one whose
 * plaintext is lost is a refusal that says what to do.
 */
import { DomainError } from '../errors.js';
import type { TokenStore } from './token-store.js';

/** The local token, made on a first start; one whose plaintext is lost is the refusal that says what to do. */
export async function localToken(tokens: TokenStore, authDir: string): Promise<string> {
  const local = await tokens.ensureLocalToken();
  if (local.token) return local.token;
  throw new DomainError(
    'store-corrupt',
    `the local token's plaintext is missing from ${authDir}: run "tether auth revoke local" and start again for a new one`,
  );
}
