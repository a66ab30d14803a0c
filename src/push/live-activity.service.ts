/**
 * The Live Activity driver (docs/push.md "Live Activity"): one live-activity machine per device
 * with Live Activity tokens, fed the device's tokens and the summary of every session, and the
 * pushes the machines ask for, sent to APNs on the connection alerts use.
 *
 * Invariants: never throws and never blocks the agent-state path; each device's pushes go one
 * at a time, in order (a retry of an older push is dropped once a newer one waits: each push
 * carries the whole card); timestamps always increase per device; at most
 * MAX_URGENT_PER_HOUR updates an hour go at priority 10; a 410 (or a token APNs says is not for
 * the topic) is told to the device's machine, which forgets that token; a revoked token's phone
 * gets no push.
 */
import { createActor, type ActorOptions, type AnyActorLogic, type Actor } from 'xstate';
import type { Logger } from '../log.js';
import { liveActivityMachine, type ActivityDigest, type LiveActivityEvent } from '../machines/live-activity.machine.js';
import type { ApnsClient, ApnsReply } from './apns.js';
import { ActivityBudget } from './live-activity-budget.js';
import { contentStateOf, urgentIds, type SessionSummary } from './live-activity-content.js';
import { activityPayload, activityTopic, STALE_AFTER_S, type ActivityAttributes, type ActivityPush } from './live-activity-payload.js';
import type { ProviderTokens } from './provider-token.js';
import type { PushSettings } from './settings.js';

/** The waits before each retry of a push APNs could not take (429, 5xx, network), before jitter. */
export const ACTIVITY_RETRY_DELAYS_MS = [1000, 5000, 20_000] as const;

/** A device with Live Activity tokens, as the device store gives it. */
export interface ActivityDevice {
  readonly tokenId: string;
  readonly environment: 'sandbox' | 'production';
  readonly deviceName: string;
  readonly pushToStartToken: string | null;
  readonly updateToken: string | null;
}

/** The device store, as the driver needs it (src/auth/devices.ts is one). */
export interface ActivityDevices {
  liveActivities(): readonly ActivityDevice[];
  storeLiveActivity(tokenId: string, tokens: { pushToStartToken: string | null; updateToken: string | null }): void;
  onLiveActivity(listener: (tokenId: string, tokens: { pushToStartToken?: string; updateToken?: string } | null) => void): () => void;
}

/** The machine's named delays, in ms (tests shorten them). */
export interface ActivityDelays {
  readonly debounce: number;
  readonly idleWhile: number;
  readonly startWait: number;
}

export interface LiveActivityServiceDeps {
  readonly settings: Extract<PushSettings, { enabled: true }>;
  readonly client: ApnsClient;
  readonly tokens: ProviderTokens;
  readonly devices: ActivityDevices;
  /** Read at each start (the daemon's id is known once its port is held). */
  readonly attributes: () => ActivityAttributes;
  readonly delays?: Partial<ActivityDelays> | undefined;
  readonly now: () => number;
  readonly log: Logger;
  /** The machines' clock and inspection (the model test's simulated clock and coverage). */
  readonly actorOptions?: Pick<ActorOptions<AnyActorLogic>, 'clock' | 'inspect'>;
  /** XState inspection of one device's machine (the /ops view), by its token's id. */
  readonly inspectDevice?: (tokenId: string) => ActorOptions<AnyActorLogic>['inspect'];
}

/** What a push did, for the model test and the bench: the event, the token, the priority and the reply. */
export interface ActivitySent {
  readonly tokenId: string;
  readonly event: ActivityPush['event'];
  readonly priority: 5 | 10;
  readonly status: number;
}

interface Device {
  readonly tokenId: string;
  environment: 'sandbox' | 'production';
  readonly actor: Actor<typeof liveActivityMachine>;
  readonly budget: ActivityBudget;
  /** The asks and stops this device's card already alerted for. */
  alerted: Set<string>;
  /** Pushes queued after the one in flight. */
  readonly queue: Job[];
  busy: boolean;
}

interface Job {
  readonly token: string;
  readonly push: ActivityPush;
  readonly priority: 5 | 10;
  readonly payload: Buffer;
}

export class LiveActivityService {
  private readonly devices = new Map<string, Device>();
  private sessions: readonly SessionSummary[] = [];
  private digest: ActivityDigest = { working: 0, key: '' };
  private stopped = false;
  private readonly unsubscribe: () => void;
  /** Every push's outcome, newest last (at most 64 kept). */
  readonly sent: ActivitySent[] = [];

  constructor(private readonly deps: LiveActivityServiceDeps) {
    for (const d of deps.devices.liveActivities()) this.device(d);
    this.unsubscribe = deps.devices.onLiveActivity((tokenId, tokens) => this.tokensChanged(tokenId, tokens));
  }

  /** The sessions changed: every device's machine hears the new summary. */
  setSessions(sessions: readonly SessionSummary[]): void {
    if (this.stopped) return;
    this.sessions = sessions;
    const content = contentStateOf(sessions);
    this.digest = { working: content.working, key: JSON.stringify(content) };
    for (const d of this.devices.values()) this.send(d, { type: 'summary.changed', digest: this.digest });
  }

  /** The machine state of a device's activity (health and tests). */
  stateOf(tokenId: string): unknown {
    return this.devices.get(tokenId)?.actor.getSnapshot().value ?? null;
  }

  stop(): void {
    this.stopped = true;
    this.unsubscribe();
    for (const d of this.devices.values()) d.actor.stop();
    this.devices.clear();
  }

  private tokensChanged(tokenId: string, tokens: { pushToStartToken?: string; updateToken?: string } | null): void {
    if (this.stopped) return;
    let known = this.devices.get(tokenId);
    if (!known) {
      const stored = this.deps.devices.liveActivities().find((x) => x.tokenId === tokenId);
      if (!stored) return;
      known = this.device({ ...stored, pushToStartToken: null, updateToken: null });
    }
    if (tokens === null) return this.send(known, { type: 'tokens.forget' });
    if (tokens.pushToStartToken !== undefined) this.send(known, { type: 'token.start', token: tokens.pushToStartToken });
    if (tokens.updateToken !== undefined) this.send(known, { type: 'token.update', token: tokens.updateToken });
  }

  private send(d: Device, event: LiveActivityEvent): void {
    try {
      d.actor.send(event);
    } catch (err) {
      this.deps.log.warn({ tokenId: d.tokenId, err: String(err) }, 'live activity: an event failed');
    }
  }

  /**
   * The machine of a device, started with the summary as it is now; stored tokens (a restart)
   * are given to it as the phone gives them, so a stored update token resumes updates.
   */
  private device(stored: ActivityDevice): Device {
    const { tokenId } = stored;
    const machine = liveActivityMachine.provide({
      actions: {
        sendStart: ({ context }) => this.startActivity(tokenId, context.startToken),
        sendUpdate: ({ context }) => this.updateActivity(tokenId, context.updateToken),
        sendEnd: ({ context }, params) => this.endActivity(tokenId, context.updateToken, params.now),
        storeTokens: ({ context }) =>
          this.deps.devices.storeLiveActivity(tokenId, { pushToStartToken: context.startToken, updateToken: context.updateToken }),
      },
      delays: { ...this.deps.delays },
    });
    // The summary as it is now is not an agent starting to work: a start waits for the next one.
    const inspect = this.deps.inspectDevice?.(tokenId);
    const actor = createActor(machine, {
      ...this.deps.actorOptions,
      ...(inspect ? { id: `live-activity:${tokenId}`, inspect } : {}),
      input: { digest: this.digest },
    });
    const d: Device = {
      tokenId,
      environment: stored.environment,
      actor,
      budget: new ActivityBudget(this.deps.now),
      alerted: new Set(),
      queue: [],
      busy: false,
    };
    this.devices.set(tokenId, d);
    actor.start();
    if (stored.pushToStartToken !== null) this.send(d, { type: 'token.start', token: stored.pushToStartToken });
    if (stored.updateToken !== null) this.send(d, { type: 'token.update', token: stored.updateToken });
    return d;
  }

  private startActivity(tokenId: string, token: string | null): void {
    const d = this.devices.get(tokenId);
    if (!d || token === null) return;
    d.alerted = new Set(urgentIds(this.sessions));
    this.enqueue(d, token, { event: 'start', attributes: this.deps.attributes() }, 10);
  }

  private updateActivity(tokenId: string, token: string | null): void {
    const d = this.devices.get(tokenId);
    if (!d || token === null) return;
    const ids = urgentIds(this.sessions);
    const fresh = ids.some((id) => !d.alerted.has(id));
    d.alerted = new Set(ids);
    const urgent = fresh && d.budget.takeUrgent();
    if (fresh && !urgent)
      this.deps.log.info({ tokenId }, 'live activity: the hourly priority-10 budget is spent; this change goes at priority 5');
    this.enqueue(d, token, { event: 'update', alert: urgent }, urgent ? 10 : 5);
  }

  /** Ended by the phone's own request (DELETE) the card goes at once; after the idle while it stays a moment. */
  private endActivity(tokenId: string, token: string | null, now: boolean): void {
    const d = this.devices.get(tokenId);
    if (!d || token === null) return;
    this.enqueue(d, token, { event: 'end', now }, 5);
  }

  private enqueue(d: Device, token: string, push: ActivityPush, priority: 5 | 10): void {
    // A revoked token's phone gets nothing more; a device registered again may have moved to the other endpoint.
    const listed = this.deps.devices.liveActivities().find((x) => x.tokenId === d.tokenId);
    if (!listed) return this.deps.log.info({ tokenId: d.tokenId }, 'live activity: the token is revoked; nothing is pushed');
    d.environment = listed.environment;
    const payload = activityPayload(push, this.sessions, d.budget.timestamp());
    d.queue.push({ token, push, priority, payload });
    if (!d.busy) void this.pump(d);
  }

  private async pump(d: Device): Promise<void> {
    d.busy = true;
    try {
      for (let job = d.queue.shift(); job !== undefined && !this.stopped; job = d.queue.shift()) {
        for (let attempt = 0; ; attempt++) {
          const reply = await this.post(d, job);
          this.record(d, job, reply);
          const retry = reply.status === 0 || reply.status === 429 || reply.status >= 500;
          // A newer push carries the whole card: an older one is not retried past it.
          if (!retry || attempt >= ACTIVITY_RETRY_DELAYS_MS.length || d.queue.length > 0 || this.stopped) break;
          const wait = ACTIVITY_RETRY_DELAYS_MS[attempt]! * (0.5 + Math.random());
          await new Promise((resolve) => setTimeout(resolve, wait).unref());
        }
      }
    } catch (err) {
      this.deps.log.warn({ tokenId: d.tokenId, err: String(err) }, 'live activity: a push failed');
    } finally {
      d.busy = false;
    }
  }

  private async post(d: Device, job: Job): Promise<ApnsReply> {
    const s = this.deps.settings;
    const origin = d.environment === 'sandbox' ? s.urls.sandbox : s.urls.production;
    const headers = {
      topic: activityTopic(s.bundleId),
      pushType: 'liveactivity' as const,
      priority: job.priority,
      // APNs stops trying to reach a phone when the card would be stale anyway.
      expiration: Math.floor(this.deps.now() / 1000) + STALE_AFTER_S,
    };
    let jwt = await this.deps.tokens.current();
    let reply = await this.deps.client.send(origin, job.token, jwt, headers, job.payload);
    if (reply.status === 403 && reply.reason === 'ExpiredProviderToken') {
      const renewed = await this.deps.tokens.renewAfterExpired(jwt);
      if (renewed !== null) {
        jwt = renewed;
        reply = await this.deps.client.send(origin, job.token, jwt, headers, job.payload);
      }
    }
    return reply;
  }

  private record(d: Device, job: Job, reply: ApnsReply): void {
    this.sent.push({ tokenId: d.tokenId, event: job.push.event, priority: job.priority, status: reply.status });
    if (this.sent.length > 64) this.sent.shift();
    const log = { tokenId: d.tokenId, event: job.push.event, priority: job.priority, status: reply.status, reason: reply.reason };
    if (reply.status === 200) return this.deps.log.info(log, 'live activity push sent');
    this.deps.log.warn(log, 'live activity push failed');
    this.replied(d.tokenId, job.token, reply);
  }

  /** APNs' reply for `token`: a dead token (410, or not for this topic) is told to the device's machine. */
  replied(tokenId: string, token: string, reply: Pick<ApnsReply, 'status' | 'reason'>): void {
    const d = this.devices.get(tokenId);
    const dead =
      reply.status === 410 || (reply.status === 400 && (reply.reason === 'DeviceTokenNotForTopic' || reply.reason === 'BadDeviceToken'));
    if (d && dead && !this.stopped) this.send(d, { type: 'push.gone', token });
  }
}
