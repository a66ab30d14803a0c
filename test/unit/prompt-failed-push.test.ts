/**
 * A prompt that failed, pushed (docs/api.md "Prompts", src/push/alert.ts, src/service/alerts/push-trigger.ts):
 * the alert says which agent did not take it and why, names the session, and carries the prompt's
 * id; the trigger sends one per failed prompt, and none where `[push] events` leaves it out.
 */
import { describe, expect, it } from 'vitest';
import { PUSH_EVENTS, type PushEvent } from '../../src/config/schema.js';
import { PROMPT_FAIL_REASONS, type PromptRecord } from '../../src/protocol/prompt.js';
import { MAX_PAYLOAD_BYTES } from '../../src/push/apns.js';
import { alertPayload, MAX_BODY_CHARS, type PushAlert, type SessionLabel } from '../../src/push/alert.js';
import { startPushTrigger } from '../../src/service/alerts/push-trigger.js';

const failed = (id: string, reason: string): PromptRecord => ({
  id,
  text: 'fix the login page',
  by: 'my iPhone',
  status: 'failed',
  createdAt: '2026-12-04T10:15:03.118Z',
  decidedAt: '2026-12-04T10:15:40.000Z',
  reason,
});

const payload = (alert: PushAlert, meta: SessionLabel = { name: 'webapp' }, agent = 'Claude') =>
  JSON.parse(alertPayload(agent, 'webapp', meta, alert).toString('utf8')) as {
    aps: { alert: { title: string; body: string; subtitle?: string }; sound: string; 'thread-id': string; category?: string };
    sessionId: string;
    promptId?: string;
  };

describe('the prompt-failed alert', () => {
  it('says which agent did not take the prompt, why, and to which session; carries the prompt id', () => {
    const p = payload({ kind: 'prompt-failed', promptId: 'phone-7f3a', reason: PROMPT_FAIL_REASONS.unconfirmed });
    expect(p).toEqual({
      aps: {
        alert: {
          title: 'Claude did not take your prompt',
          body: `your prompt to webapp was not taken: ${PROMPT_FAIL_REASONS.unconfirmed}`,
        },
        sound: 'default',
        'thread-id': 'session-webapp',
      },
      sessionId: 'webapp',
      promptId: 'phone-7f3a',
    });
  });

  it('names the session with its description', () => {
    const p = payload(
      { kind: 'prompt-failed', promptId: 'p1', reason: PROMPT_FAIL_REASONS.exited },
      { name: 'webapp', description: 'login page', agentLabel: 'Codex' },
      'Codex',
    );
    expect(p.aps.alert.title).toBe('Codex did not take your prompt');
    expect(p.aps.alert.body).toBe('your prompt to webapp: login page was not taken: the agent exited');
  });

  it.each(Object.entries(PROMPT_FAIL_REASONS))('says each reason (%s) in its body, cut to the longest body', (_key, reason) => {
    const p = payload({ kind: 'prompt-failed', promptId: 'p1', reason }, { name: 'webapp', description: 'd'.repeat(300) });
    expect([...p.aps.alert.body].length).toBeLessThanOrEqual(MAX_BODY_CHARS);
    expect(p.aps.alert.body.startsWith('your prompt to webapp: ddd')).toBe(true);
    expect(p.promptId).toBe('p1');
  });

  it('keeps a long id and reason under APNs 4 KB', () => {
    const bytes = alertPayload(
      'Claude',
      'webapp',
      { name: 'webapp' },
      { kind: 'prompt-failed', promptId: 'x'.repeat(64), reason: '😀'.repeat(2000) },
    );
    expect(bytes.length).toBeLessThanOrEqual(MAX_PAYLOAD_BYTES);
  });
});

/** The trigger with only its prompt input in the test's hands; `sent` lists what it pushed. */
function harness(events: readonly PushEvent[]) {
  let tell: ((id: string, prompt: PromptRecord) => void) | null = null;
  const sent: { id: string; alert: PushAlert }[] = [];
  const stop = startPushTrigger({
    events,
    subscribeEvery: () => () => undefined,
    onSessionEnded: () => () => undefined,
    onAttention: () => () => undefined,
    onPromptFailed: (l) => ((tell = l), () => (tell = null)),
    send: (id, alert) => sent.push({ id, alert }),
  });
  return { sent, fail: (id: string, prompt: PromptRecord) => tell?.(id, prompt), stop };
}

describe('push trigger: failed prompts', () => {
  it('sends one prompt-failed alert per failed prompt, with its id and reason', () => {
    const h = harness(PUSH_EVENTS);
    h.fail('webapp', failed('p1', PROMPT_FAIL_REASONS.unconfirmed));
    h.fail('webapp', failed('p2', PROMPT_FAIL_REASONS.untyped));
    h.fail('api', failed('p3', PROMPT_FAIL_REASONS.interrupted));
    expect(h.sent).toEqual([
      { id: 'webapp', alert: { kind: 'prompt-failed', promptId: 'p1', reason: PROMPT_FAIL_REASONS.unconfirmed } },
      { id: 'webapp', alert: { kind: 'prompt-failed', promptId: 'p2', reason: PROMPT_FAIL_REASONS.untyped } },
      { id: 'api', alert: { kind: 'prompt-failed', promptId: 'p3', reason: PROMPT_FAIL_REASONS.interrupted } },
    ]);
  });

  it('sends nothing when [push] events leaves prompt-failed out, or once stopped', () => {
    const without = harness(PUSH_EVENTS.filter((e) => e !== 'prompt-failed'));
    without.fail('webapp', failed('p1', PROMPT_FAIL_REASONS.exited));
    expect(without.sent).toEqual([]);
    const none = harness([]);
    none.fail('webapp', failed('p1', PROMPT_FAIL_REASONS.exited));
    expect(none.sent).toEqual([]);
    const only = harness(['prompt-failed']);
    only.stop();
    only.fail('webapp', failed('p1', PROMPT_FAIL_REASONS.exited));
    expect(only.sent).toEqual([]);
  });

  it('pushes a failed prompt alone when prompt-failed is the only event named', () => {
    const h = harness(['prompt-failed']);
    h.fail('webapp', failed('p1', PROMPT_FAIL_REASONS.exited));
    expect(h.sent.map((s) => s.alert.kind)).toEqual(['prompt-failed']);
  });
});
