/**
 * The push subsystem: when a session needs its human (its agent waits, exited or crashed, or the
 * session could not be restored), one visible alert to every registered device that is in the
 * background (docs/push.md: no live `/stream` connection), through APNs.
 *
 * Invariants: `notify` never blocks and never throws (the agent-state path and the stream go
 * on whatever APNs does); at most MAX_PENDING pushes wait, one per device and session (a newer
 * state replaces an older one, as the collapse id does on the lock screen); a failed push is
 * retried only for 429, 5xx and network errors, at most RETRY_DELAYS_MS.length times.
 */
import type { Logger } from '../log.js';
import { alertPayload, type PushAlert, type SessionLabel } from './alert.js';
import { ApnsClient, type ApnsReply } from './apns.js';
import { ProviderTokens } from './provider-token.js';
import { usageCollapseId, usagePayload, type PushedUsage } from './usage-alert.js';
import type { PushSettings, PushStatus } from './settings.js';

/** Pushes waiting to be sent or retried, all devices together. */
export const MAX_PENDING = 256;
/** Pushes in flight at once. */
export const MAX_IN_FLIGHT = 4;
/** The waits before each retry of a push APNs could not take (429, 5xx, network). */
export const RETRY_DELAYS_MS = [1000, 5000, 20_000] as const;
/** How long APNs keeps trying to deliver an alert the phone could not get at once. */
export const EXPIRATION_S = 24 * 3600;

/** A device that asked for pushes (its registration, from pairing). */
export interface PushDevice {
  readonly tokenId: string;
  readonly deviceToken: string;
  readonly environment: 'sandbox' | 'production';
  readonly deviceName: string;
}

/** Where the registered devices live (the device store). */
export interface PushDevices {
  list(): readonly PushDevice[];
  /** APNs said the device token is dead (410): forget the mapping. */
  remove(deviceToken: string): void | Promise<void>;
}

export type { PushAlert, SessionLabel } from './alert.js';
export { MAX_BODY_CHARS } from './alert.js';

export { preparePush, type PushConfig, type PushSettings, type PushStatus } from './settings.js';

export interface PushServiceDeps {
  readonly settings: PushSettings;
  readonly devices: PushDevices;
  /** Whether the token has a live `/stream` connection (its phone is in the foreground). */
  readonly inForeground: (tokenId: string) => boolean;
  /** The session's name and description, or null when it is gone (read from tmux: may be async). */
  readonly describe: (sessionId: string) => SessionLabel | null | Promise<SessionLabel | null>;
  /** The agent's name, for the title ("pi is waiting"). */
  readonly agentName: string;
  /** Whether the session's ask `askId` is still open: an alert for one answered meanwhile is not sent. */
  readonly askOpen?: (sessionId: string, askId: string) => boolean;
  /** Whether the session's agent is still in stop `stopId`: an alert for one it went on from meanwhile is not sent. */
  readonly stopHeld?: (sessionId: string, stopId: string) => boolean;
  readonly now: () => number;
  readonly log: Logger;
  /** Extra CA to trust for the APNs endpoints (PEM). */
  readonly ca?: string;
  /** The APNs connection and provider tokens, when shared with the Live Activity driver (one connection per endpoint). */
  readonly shared?: { readonly client: ApnsClient; readonly tokens: ProviderTokens };
}

interface Job {
  readonly device: PushDevice;
  sessionId: string;
  /** Alerts of the same collapse id replace each other on the lock screen. */
  collapseId: string;
  payload: Buffer;
  /** The ask the alert is about, or null. */
  askId: string | null;
  /** The stop the alert is about, or null. */
  stopId: string | null;
  attempt: number;
  timer: NodeJS.Timeout | null;
  running: boolean;
  /** A newer state arrived while this one was in flight: send again after. */
  again: boolean;
}

export class PushService {
  private readonly client: ApnsClient;
  private readonly tokens: ProviderTokens | null;
  private readonly jobs = new Map<string, Job>();
  private inFlight = 0;
  private stopped = false;
  private sent = 0;
  private failed = 0;
  private lastError: PushStatus['lastError'] = null;

  constructor(private readonly deps: PushServiceDeps) {
    const s = deps.settings;
    this.client = deps.shared?.client ?? new ApnsClient(deps.ca !== undefined ? { ca: deps.ca } : {});
    this.tokens =
      deps.shared?.tokens ?? (s.enabled ? new ProviderTokens({ key: s.key, teamId: s.teamId, keyId: s.keyId, now: deps.now }) : null);
  }

  /** Provider tokens made so far (one per ~55 minutes of pushing). */
  get providerTokensIssued(): number {
    return this.tokens?.issued ?? 0;
  }

  status(): PushStatus {
    const s = this.deps.settings;
    return { configured: s.enabled, reason: s.enabled ? null : s.reason, sent: this.sent, failed: this.failed, lastError: this.lastError };
  }

  /** The session's agent is waiting for its human: alert every device in the background. */
  awaitingInput(sessionId: string): void {
    this.alert(sessionId, { kind: 'awaiting-input' });
  }

  /**
   * Alerts every device in the background that `alert` happened to the session; `label` names
   * it when tmux cannot (a session that could not be restored has no tmux session).
   */
  alert(sessionId: string, alert: PushAlert, label?: SessionLabel): void {
    if (this.stopped || !this.deps.settings.enabled) return;
    const fail = (err: unknown) => this.deps.log.warn({ session: sessionId, err: String(err) }, 'push: could not queue the alert');
    try {
      // The devices are chosen now (who is in the background at the moment of the change);
      // only the label may take a moment to read.
      const devices = this.deps.devices.list().filter((d) => !this.deps.inForeground(d.tokenId));
      if (devices.length === 0) return;
      void Promise.resolve(label ?? this.deps.describe(sessionId))
        .then((meta) => {
          if (!meta || this.stopped) return;
          const payload = alertPayload(meta.agentLabel ?? this.deps.agentName, sessionId, meta, alert);
          const askId = alert.kind === 'awaiting-input' ? (alert.ask?.id ?? null) : null;
          const stopId = alert.kind === 'stopped' ? alert.stop.id : null;
          for (const device of devices) this.enqueue(device, sessionId, payload, askId, stopId);
        })
        .catch(fail);
    } catch (err) {
      fail(err);
    }
  }

  /** A usage window crossed a threshold (docs/push.md "Usage"): every device in the background is warned, once. */
  usageWarning(agentLabel: string, warning: PushedUsage): void {
    if (this.stopped || !this.deps.settings.enabled) return;
    const devices = this.deps.devices.list().filter((d) => !this.deps.inForeground(d.tokenId));
    const payload = usagePayload(agentLabel, warning);
    const collapseId = usageCollapseId(warning);
    for (const device of devices) this.enqueue(device, collapseId, payload, null, null, collapseId);
  }

  /** Drops what waits and closes the connections. */
  stop(): void {
    this.stopped = true;
    for (const job of this.jobs.values()) if (job.timer) clearTimeout(job.timer);
    this.jobs.clear();
    this.client.close();
  }

  private enqueue(
    device: PushDevice,
    sessionId: string,
    payload: Buffer,
    askId: string | null,
    stopId: string | null,
    collapseId = `session-${sessionId}`,
  ): void {
    const key = `${device.deviceToken}\u0000${collapseId}`;
    const existing = this.jobs.get(key);
    if (existing) {
      existing.payload = payload;
      existing.askId = askId;
      existing.stopId = stopId;
      existing.attempt = 0;
      if (existing.running) existing.again = true;
      return;
    }
    if (this.jobs.size >= MAX_PENDING) {
      this.deps.log.warn({ session: sessionId, pending: this.jobs.size }, 'push: too many alerts waiting; this one is dropped');
      return;
    }
    this.jobs.set(key, { device, sessionId, collapseId, payload, askId, stopId, attempt: 0, timer: null, running: false, again: false });
    this.pump();
  }

  /** Starts waiting jobs while fewer than MAX_IN_FLIGHT run. */
  private pump(): void {
    for (const [key, job] of this.jobs) {
      if (this.inFlight >= MAX_IN_FLIGHT || this.stopped) return;
      if (job.running || job.timer) continue;
      void this.run(key, job);
    }
  }

  private async run(key: string, job: Job): Promise<void> {
    job.running = true;
    this.inFlight++;
    let retry = false;
    try {
      retry = await this.attempt(job);
    } catch (err) {
      this.fail(job, 0, String(err));
    } finally {
      this.inFlight--;
      job.running = false;
    }
    if (this.stopped || this.jobs.get(key) !== job) return;
    if (job.again) {
      job.again = false;
    } else if (retry && job.attempt < RETRY_DELAYS_MS.length) {
      const delay = RETRY_DELAYS_MS[job.attempt++]!;
      job.timer = setTimeout(() => {
        job.timer = null;
        this.pump();
      }, delay);
      job.timer.unref();
    } else {
      this.jobs.delete(key);
    }
    this.pump();
  }

  /** One send; true when it is worth retrying. */
  private async attempt(job: Job): Promise<boolean> {
    const s = this.deps.settings;
    if (!s.enabled || !this.tokens) return false;
    // An ask answered (or left) before its alert went out: the alert would be stale.
    if (job.askId !== null && this.deps.askOpen && !this.deps.askOpen(job.sessionId, job.askId)) {
      this.deps.log.info({ session: job.sessionId, ask: job.askId }, 'push: the ask was answered before its alert was sent; not sent');
      return false;
    }
    // A stop the agent went on from (it started again) before its alert went out: stale too.
    if (job.stopId !== null && this.deps.stopHeld && !this.deps.stopHeld(job.sessionId, job.stopId)) {
      this.deps.log.info({ session: job.sessionId, stop: job.stopId }, 'push: the agent went on before its stop was sent; not sent');
      return false;
    }
    const origin = job.device.environment === 'sandbox' ? s.urls.sandbox : s.urls.production;
    const headers = {
      topic: s.bundleId,
      collapseId: job.collapseId,
      expiration: Math.floor(this.deps.now() / 1000) + EXPIRATION_S,
    };
    let jwt = await this.tokens.current();
    let reply = await this.client.send(origin, job.device.deviceToken, jwt, headers, job.payload);
    if (reply.status === 403 && reply.reason === 'ExpiredProviderToken') {
      const renewed = await this.tokens.renewAfterExpired(jwt);
      if (renewed !== null) {
        jwt = renewed;
        reply = await this.client.send(origin, job.device.deviceToken, jwt, headers, job.payload);
      }
    }
    return this.settle(job, reply);
  }

  private settle(job: Job, reply: ApnsReply): boolean {
    const device = job.device.deviceName;
    if (reply.status === 200) {
      this.sent++;
      this.deps.log.info({ session: job.sessionId, device, environment: job.device.environment }, 'push sent');
      return false;
    }
    if (reply.status === 410) {
      this.deps.log.info(
        { device, reason: reply.reason },
        'push: APNs says the device token is no longer valid; its registration is removed',
      );
      void Promise.resolve(this.deps.devices.remove(job.device.deviceToken)).catch((err: unknown) =>
        this.deps.log.warn({ device, err: String(err) }, 'push: the registration could not be removed'),
      );
      return false;
    }
    const retry = reply.status === 0 || reply.status === 429 || reply.status >= 500;
    this.fail(job, reply.status, reply.reason ?? `status ${reply.status}`);
    return retry;
  }

  private fail(job: Job, status: number, reason: string): void {
    this.failed++;
    this.lastError = { at: new Date(this.deps.now()).toISOString(), status, reason, device: job.device.deviceName };
    this.deps.log.warn({ session: job.sessionId, device: job.device.deviceName, status, reason }, 'push failed');
  }
}
