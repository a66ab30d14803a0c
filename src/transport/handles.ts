/**
 * The narrow interfaces between the transport and the rest of tether: what the routes may ask
 * of the actor system and of the token store. Plain data and methods; nothing here reaches
 * into a machine's context, and nothing here imports fastify.
 */

import type { HealthReport } from '../service/health/health.js';

export type { HealthReport };

/** Whatever can report the daemon's health (the actor system, or a test double). */
export interface HealthSource {
  health(): HealthReport | Promise<HealthReport>;
}

/** A verified token: enough to name it in logs and to close its connections on revoke. */
export interface VerifiedToken {
  readonly id: string;
  readonly name: string;
}

/** Checks bearer tokens; `TokenStore` is one. */
export interface TokenVerifier {
  /** The token's identity, or null when it is not valid. Must not do I/O per call. */
  verify(token: string): VerifiedToken | null;
  /** Notes a use of the token with this id (batched by the implementation); optional. */
  touch?(id: string): void;
}
