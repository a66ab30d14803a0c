/**
 * What an alert says (docs/push.md "What is sent"): the title says what happened, the body names
 * the session ("<name>: <description>", or the name alone) and, for a session that could not be
 * restored, why; `sessionId` in the payload lets a tap open that session. An alert for an ask
 * (docs/push.md "Asks") says who asks for what in its title, the session in its subtitle and the
 * command or question in its body, and carries the ask's id, its category (the notification
 * actions a client registered for that kind of ask) and `interruption-level: time-sensitive`.
 * An alert for a stop (docs/push.md "Stops") says what the stop's kind means (stop-meanings.ts:
 * its title, category, urgency and words), with the agent's own words and the stop's id.
 *
 * Invariant: a payload never exceeds APNs' 4 KB: the body is cut at MAX_BODY_CHARS, and where a
 * detail follows the session's label, the label is cut first so the detail stays readable; an
 * ask carries its choices only when its category has actions for them (at most 4), each label cut.
 */
import { constants } from 'node:os';
import type { Ask } from '../protocol/frames.js';
import { cutText } from '../protocol/text.js';
import { MAX_PAYLOAD_BYTES } from './apns.js';
import type { Stop } from '../protocol/stop.js';
import { STOP_MEANINGS } from './stop-meanings.js';

/** The longest body text, so the payload stays well under APNs' 4 KB. */
export const MAX_BODY_CHARS = 180;
/** The shortest the label is cut to, to make room for a detail after it. */
const MIN_LABEL_CHARS = 40;

/** Most choices a notification offers as actions (iOS shows four); more: the app opens. */
export const MAX_ACTION_CHOICES = 4;
/** Longest choice label carried in the payload. */
const MAX_PAYLOAD_LABEL_CHARS = 60;

/**
 * The APNs category of an ask (docs/push.md "Asks"): a client registers each with its actions,
 * whose identifiers are the choices' ids, and answers with `POST /sessions/<sessionId>/answer`
 * `{"ask": <askId>, "choice": <action identifier>}`.
 */
export function askCategory(ask: Pick<Ask, 'kind' | 'choices'>): string {
  const ids = ask.choices.map((c) => c.id).join(',');
  if (ask.kind === 'permission') {
    if (ids === 'yes,no') return 'TETHER_ASK_PERMISSION';
    if (ids === 'yes,always,no') return 'TETHER_ASK_PERMISSION_ALWAYS';
  }
  const n = ask.choices.length;
  const numbered = ask.choices.every((c, i) => c.id === String(i + 1));
  if (ask.kind === 'question' && numbered && n >= 2 && n <= MAX_ACTION_CHOICES) return `TETHER_ASK_QUESTION_${n}`;
  return 'TETHER_ASK_OPEN';
}

/** A stop the push subsystem alerts for (one whose meaning says it is `pushed` as a `stop`). */
export type PushedStop = Pick<Stop, 'id' | 'kind' | 'message' | 'resetsAt' | 'limit'>;

/** What happened, as the push subsystem knows it. */
export type PushAlert =
  | { readonly kind: 'awaiting-input'; readonly ask?: Ask }
  | { readonly kind: 'agent-exited'; readonly status: number | null; readonly signal: number | null }
  /** The agent stopped on a usage limit or an API error (docs/push.md "Stops"). */
  | { readonly kind: 'stopped'; readonly stop: PushedStop }
  /** A usage limit's reset passed with nothing scheduled and the agent still stopped (docs/push.md "Limit reset"). */
  | { readonly kind: 'limit-reset'; readonly stopId: string }
  | { readonly kind: 'unrestorable'; readonly reason: string }
  /** A prompt sent from a phone was not taken by the agent (docs/api.md "Prompts"). */
  | { readonly kind: 'prompt-failed'; readonly promptId: string; readonly reason: string };

/** What the alert's body names: the session's name, and its description when it has one. */
export interface SessionLabel {
  readonly name: string;
  readonly description?: string;
  /** The agent, for the title ("Claude is waiting for you"); the service's agent name when absent. */
  readonly agentLabel?: string;
  /** What the agent asks while it waits (a permission), said in the body. */
  readonly asks?: string;
}

/** A signal's name (`SIGKILL`), or its number when the name is unknown here. */
export function signalName(signal: number): string {
  const name = Object.entries(constants.signals).find(([, n]) => n === signal)?.[0];
  return name ?? `signal ${signal}`;
}

function title(agentName: string, alert: PushAlert): string {
  switch (alert.kind) {
    case 'awaiting-input':
      if (alert.ask?.kind === 'permission') return cutText(`${agentName} asks to use ${alert.ask.tool ?? 'a tool'}`, MAX_BODY_CHARS);
      if (alert.ask?.kind === 'question') return `${agentName} asks you`;
      return STOP_MEANINGS.done.title(agentName, {});
    case 'agent-exited':
      return STOP_MEANINGS.exited.title(agentName, {
        ...(alert.signal !== null ? { signal: signalName(alert.signal) } : {}),
        ...(alert.status !== null ? { exitCode: alert.status } : {}),
      });
    case 'stopped':
      return cutText(STOP_MEANINGS[alert.stop.kind].title(agentName, alert.stop), MAX_BODY_CHARS);
    case 'limit-reset':
      return `${agentName}'s usage limit has reset: it can go on`;
    case 'unrestorable':
      return 'A session could not be restored';
    case 'prompt-failed':
      return `${agentName} did not take your prompt`;
  }
}

function body(meta: SessionLabel, alert: PushAlert): string {
  const label = meta.description !== undefined && meta.description !== '' ? `${meta.name}: ${meta.description}` : meta.name;
  if (alert.kind === 'awaiting-input' && meta.asks !== undefined && meta.asks !== '')
    return cutText(`${label}: ${meta.asks}`, MAX_BODY_CHARS);
  if (alert.kind === 'prompt-failed') return cutText(`your prompt to ${label} was not taken: ${alert.reason}`, MAX_BODY_CHARS);
  if (alert.kind !== 'unrestorable') return cutText(label, MAX_BODY_CHARS);
  const detail = cutText(alert.reason, MAX_BODY_CHARS - MIN_LABEL_CHARS - 3);
  return `${cutText(label, MAX_BODY_CHARS - [...detail].length - 3)} — ${detail}`;
}

/** The session as a subtitle: "<name>: <description>", or the name alone. */
function label(meta: SessionLabel): string {
  return cutText(
    meta.description !== undefined && meta.description !== '' ? `${meta.name}: ${meta.description}` : meta.name,
    MAX_BODY_CHARS,
  );
}

/** The payload of an ask's alert: who asks for what, the session, the command or question; its id, category and choices. */
function askPayload(agentName: string, sessionId: string, meta: SessionLabel, ask: Ask): object {
  const category = askCategory(ask);
  return {
    aps: {
      alert: {
        title: title(agentName, { kind: 'awaiting-input', ask }),
        subtitle: label(meta),
        body: cutText(ask.concern, MAX_BODY_CHARS),
      },
      sound: 'default',
      'thread-id': `session-${sessionId}`,
      category,
      'interruption-level': 'time-sensitive',
      // A notification service extension may show the choices' own labels as the actions' titles.
      ...(ask.kind === 'question' ? { 'mutable-content': 1 } : {}),
    },
    sessionId,
    askId: ask.id,
    ...(category !== 'TETHER_ASK_OPEN'
      ? { choices: ask.choices.map((c) => ({ id: c.id, label: cutText(c.label, MAX_PAYLOAD_LABEL_CHARS) })) }
      : {}),
  };
}

/** The payload of a stop's alert: what stopped the agent (and when a limit resets), the session, the agent's words. */
function stopPayload(agentName: string, sessionId: string, meta: SessionLabel, stop: PushedStop): object {
  const meaning = STOP_MEANINGS[stop.kind];
  const words = stop.message !== '' ? stop.message : meaning.fallbackWords;
  return {
    aps: {
      alert: { title: title(agentName, { kind: 'stopped', stop }), subtitle: label(meta), body: cutText(words, MAX_BODY_CHARS) },
      sound: 'default',
      'thread-id': `session-${sessionId}`,
      ...(meaning.category !== null ? { category: meaning.category } : {}),
      ...(meaning.timeSensitive ? { 'interruption-level': 'time-sensitive' } : {}),
    },
    sessionId,
    // The stop's id and kind (and a limit's reset) let a client act on it: a continue at the reset.
    stopId: stop.id,
    stopKind: stop.kind,
    ...(stop.resetsAt !== undefined ? { resetsAt: stop.resetsAt } : {}),
    ...(stop.limit !== undefined ? { limit: stop.limit } : {}),
  };
}

/** The payload of an alert that is neither an ask nor a stop. */
function plainPayload(agentName: string, sessionId: string, meta: SessionLabel, alert: PushAlert): object {
  return {
    aps: { alert: { title: title(agentName, alert), body: body(meta, alert) }, sound: 'default', 'thread-id': `session-${sessionId}` },
    sessionId,
    ...(alert.kind === 'limit-reset' ? { stopId: alert.stopId } : {}),
    ...(alert.kind === 'prompt-failed' ? { promptId: alert.promptId } : {}),
  };
}

/** The alert's payload for one session. */
export function alertPayload(
  agentName: string,
  sessionId: string,
  meta: SessionLabel,
  alert: PushAlert = { kind: 'awaiting-input' },
): Buffer {
  const payload = Buffer.from(
    JSON.stringify(
      alert.kind === 'awaiting-input' && alert.ask !== undefined
        ? askPayload(agentName, sessionId, meta, alert.ask)
        : alert.kind === 'stopped'
          ? stopPayload(agentName, sessionId, meta, alert.stop)
          : plainPayload(agentName, sessionId, meta, alert),
    ),
  );
  if (payload.length > MAX_PAYLOAD_BYTES) throw new Error(`the alert is ${payload.length} bytes, over APNs' ${MAX_PAYLOAD_BYTES}`);
  return payload;
}
