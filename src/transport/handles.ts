/**
 * The narrow interfaces between the transport and the rest of tether: what the routes may ask
 * of the actor system and the token store. Nothing here reaches into a machine.
 */

/** decisions.md "Health". */
export interface HealthReport {
  ok: boolean;
  status: 'ok' | 'degraded';
  version: string;
  /** Seconds since the daemon started. */
  uptime: number;
  sessions: number;
  sessionIds: string[];
  clients: number;
  bufferMb: number;
  diskFreeGb: number;
  watchdog: { state: string; reason: string | null };
  warnings: string[];
}

export interface HealthSource {
  health(): HealthReport | Promise<HealthReport>;
}

/** A verified token: enough to name it in logs and to close its connections on revoke. */
export interface VerifiedToken {
  readonly id: string;
  readonly name: string;
}

export interface TokenVerifier {
  verify(token: string): VerifiedToken | null;
}
