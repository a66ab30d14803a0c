/**
 * The Live Activity pushes as APNs takes them (docs/push.md "Live Activity"): `event` start,
 * update or end, the content-state, the stale date, and for a start the attributes and its
 * alert; the headers (`apns-push-type: liveactivity`, the `.push-type.liveactivity` topic).
 *
 * Invariant: a payload never passes APNs' 4 KB: the words of the card and of its alert are cut
 * shorter until it fits.
 */
import { MAX_PAYLOAD_BYTES } from './apns.js';
import { alertOf, contentStateOf, MAX_WORDS_CHARS, mostUrgent, type SessionSummary } from './live-activity-content.js';

/** The Swift type of the attributes (`ActivityAttributes`) the app declares. */
export const ATTRIBUTES_TYPE = 'TetherActivityAttributes';
/** The card counts as stale this long after its last push (the widget may dim it). */
export const STALE_AFTER_S = 30 * 60;
/** An ended card stays on the lock screen this long. */
export const DISMISS_AFTER_S = 5 * 60;

/** The attributes of a started activity: which daemon it shows. */
export interface ActivityAttributes {
  readonly daemonId: string;
  readonly daemonName: string;
}

export type ActivityPush =
  | { readonly event: 'start'; readonly attributes: ActivityAttributes }
  | { readonly event: 'update'; readonly alert: boolean }
  | { readonly event: 'end'; readonly now: boolean };

/** The words' lengths tried, longest first, until a payload fits. */
const WORD_STEPS = [MAX_WORDS_CHARS, 60, 20, 0] as const;

/** The payload of one push, `timestamp` in Unix seconds. */
export function activityPayload(push: ActivityPush, sessions: readonly SessionSummary[], timestamp: number): Buffer {
  const stop = mostUrgent(sessions)?.stop;
  for (const maxWords of WORD_STEPS) {
    const content = contentStateOf(sessions, maxWords);
    const aps: Record<string, unknown> = { timestamp, event: push.event, 'content-state': content };
    if (push.event === 'end') {
      aps['dismissal-date'] = push.now ? timestamp : timestamp + DISMISS_AFTER_S;
    } else {
      aps['stale-date'] = timestamp + STALE_AFTER_S;
    }
    if (push.event === 'start') {
      aps['attributes-type'] = ATTRIBUTES_TYPE;
      aps.attributes = push.attributes;
      aps.alert = alertOf(content, stop, maxWords);
      aps['input-push-token'] = 1;
    } else if (push.event === 'update' && push.alert) {
      aps.alert = { ...alertOf(content, stop, maxWords), sound: 'default' };
    }
    const payload = Buffer.from(JSON.stringify({ aps }));
    if (payload.length <= MAX_PAYLOAD_BYTES) return payload;
  }
  throw new Error(`a Live Activity payload passes APNs' ${MAX_PAYLOAD_BYTES} bytes even without words`);
}

/** The APNs topic of Live Activity pushes for an app. */
export const activityTopic = (bundleId: string): string => `${bundleId}.push-type.liveactivity`;
