/**
 * What an alert says (docs/push.md "What is sent"): the title says what happened, the body names
 * the session ("<name>: <description>", or the name alone) and, for a session that could not be
 * restored, why; `sessionId` in the payload lets a tap open that session.
 *
 * Invariant: a payload never exceeds APNs' 4 KB: the body is cut at MAX_BODY_CHARS, and where a
 * detail follows the session's label, the label is cut first so the detail stays readable.
 */
import { constants } from 'node:os';
import { MAX_PAYLOAD_BYTES } from './apns.js';

/** The longest body text, so the payload stays well under APNs' 4 KB. */
export const MAX_BODY_CHARS = 180;
/** The shortest the label is cut to, to make room for a detail after it. */
const MIN_LABEL_CHARS = 40;

/** What happened, as the push subsystem knows it. */
export type PushAlert =
  | { readonly kind: 'awaiting-input' }
  | { readonly kind: 'agent-exited'; readonly status: number | null; readonly signal: number | null }
  | { readonly kind: 'unrestorable'; readonly reason: string };

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

function cut(text: string, max: number): string {
  const chars = [...text];
  return chars.length > max ? `${chars.slice(0, Math.max(0, max - 1)).join('')}…` : text;
}

function title(agentName: string, alert: PushAlert): string {
  switch (alert.kind) {
    case 'awaiting-input':
      return `${agentName} is waiting for you`;
    case 'agent-exited':
      if (alert.signal !== null) return `${agentName} crashed: killed by ${signalName(alert.signal)}`;
      return `${agentName} exited with status ${alert.status ?? 'unknown'}`;
    case 'unrestorable':
      return 'A session could not be restored';
  }
}

function body(meta: SessionLabel, alert: PushAlert): string {
  const label = meta.description !== undefined && meta.description !== '' ? `${meta.name}: ${meta.description}` : meta.name;
  if (alert.kind === 'awaiting-input' && meta.asks !== undefined && meta.asks !== '') return cut(`${label}: ${meta.asks}`, MAX_BODY_CHARS);
  if (alert.kind !== 'unrestorable') return cut(label, MAX_BODY_CHARS);
  const detail = cut(alert.reason, MAX_BODY_CHARS - MIN_LABEL_CHARS - 3);
  return `${cut(label, MAX_BODY_CHARS - [...detail].length - 3)} — ${detail}`;
}

/** The alert's payload for one session. */
export function alertPayload(
  agentName: string,
  sessionId: string,
  meta: SessionLabel,
  alert: PushAlert = { kind: 'awaiting-input' },
): Buffer {
  const payload = Buffer.from(
    JSON.stringify({
      aps: { alert: { title: title(agentName, alert), body: body(meta, alert) }, sound: 'default', 'thread-id': `session-${sessionId}` },
      sessionId,
    }),
  );
  if (payload.length > MAX_PAYLOAD_BYTES) throw new Error(`the alert is ${payload.length} bytes, over APNs' ${MAX_PAYLOAD_BYTES}`);
  return payload;
}
