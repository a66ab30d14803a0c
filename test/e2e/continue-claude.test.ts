/**
 * Continue when it resets (docs/api.md "Continue", docs/push.md "Limit reset") with the real
 * Claude Code 2.1.328 logged in as a subscriber (an OAuth token, no API key: only then does it
 * show a usage limit) against the fake Anthropic server answering 429 with the unified rate-limit
 * headers, the built daemon, and a phone paired to the HTTP/2 TLS stand-in for APNs.
 *
 * One daemon and one Claude session: a usage limit whose reset is seconds ahead and nothing
 * scheduled: one push says Claude can go on. Then another usage limit, and `continue` scheduled
 * at its reset: typed once at the reset plus its margin, the agent's next turn reaches the fake
 * model carrying it, the list says typed and the answer log names the device.
 *
 * What was found with this Claude Code against the fake (docs/api.md "Continue"): it did not
 * submit a continue of its own after either reset (its `autoContinueAtUsageLimit`), in two
 * minutes of watching, with its usage-limit notice dismissed or left on screen; the text typed
 * into the notice went through to the model as the next turn's prompt.
 */
import { describe, expect, test } from 'vitest';
import { anthropicText, isAgentTurn, usageLimitReply, type AnthropicRequest } from '../../testkit/fake-anthropic.js';
import { RESET_MARGIN_MS, type ContinueSchedule } from '../../src/protocol/continue.js';
import { TURN_MS, useRealAgent } from '../helpers/agent-fixture.js';
import { CLAUDE_CC, claudeParts } from '../helpers/agent-parts.js';
import { dismissClaudeLimitNotice, POLL_MS } from '../helpers/agent-stops.js';
import { eventually } from '../helpers/tmux.js';
import type { Stop } from '../../src/protocol/frames.js';

const TEST_MS = 300_000;

/** The texts of a request's last user message (Claude sends each prompt as blocks beside its reminders, and may end with a system message). */
const lastUserTexts = (req: AnthropicRequest): string[] => {
  const last = req.messages.findLast((msg) => msg.role === 'user');
  if (!last) return [];
  return typeof last.content === 'string' ? [last.content] : last.content.map((b) => anthropicText([b]).trim());
};

describe('continue at the reset, with the real Claude Code', () => {
  /** The reset the fake announces while it refuses (epoch seconds), or null: it answers. */
  let limitUntil: number | null = null;
  const a = useRealAgent({
    ...CLAUDE_CC,
    prefix: 'tether-continue-claude-',
    start: claudeParts(
      (req) => (!isAgentTurn(req) ? { text: 'Title' } : limitUntil === null ? { text: 'All done.' } : usageLimitReply(limitUntil)),
      { subscriber: true },
    ),
    phone: 'd8'.repeat(32),
    pollMs: POLL_MS,
  });

  const listed = async () =>
    ((await (await a.fx.d.get('/sessions')).json()) as { id: string; stop: Stop | null; continue: ContinueSchedule | null }[]).find(
      (s) => s.id === 'cc',
    );
  const pushes = () => a.pushes<{ aps: { alert: { title: string } }; stopId?: string }>();
  /** Agent turns whose last user message holds `text` as a block of its own. */
  const turnsWith = (text: string) => a.fake.requests.filter((r) => isAgentTurn(r) && lastUserTexts(r).includes(text));

  /** A prompt the fake refuses with a usage limit resetting in `seconds`: resolves with the stop (the notice dismissed, unless not to). */
  const limited = async (text: string, seconds: number, dismiss = true): Promise<Stop> => {
    limitUntil = Math.ceil(Date.now() / 1000) + seconds;
    const before = (await listed())?.stop?.id ?? null;
    await a.type(text);
    await a.explained(a.shows(["You've hit your", 'limit'], TURN_MS, 'the usage limit on screen'));
    const stop = await a.explained(
      eventually(
        async () => {
          const stop = (await listed())?.stop ?? null;
          const resets = new Date(limitUntil! * 1000).toISOString();
          return stop?.kind === 'usage-limit' && stop.id !== before && stop.resetsAt === resets ? stop : null;
        },
        TURN_MS,
        POLL_MS,
        'a new usage-limit stop with its reset',
      ),
    );
    expect(stop!.resetsAt).toBe(new Date(limitUntil * 1000).toISOString());
    if (!dismiss) return stop!;
    await dismissClaudeLimitNotice(a);
    return stop!;
  };

  test(
    'the reset passes with nothing scheduled: one push says Claude can go on',
    async () => {
      const stop = await limited('hello there', 8);
      limitUntil = null;
      const resetPushes = () => pushes().filter((p) => p.stopId === stop.id && p.aps.alert.title.includes('has reset'));
      await a.explained(eventually(() => resetPushes().length > 0, 60_000, POLL_MS, 'the reset push'));
      expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(stop.resetsAt!));
      expect(resetPushes()).toHaveLength(1);
      expect(resetPushes()[0]).toMatchObject({ aps: { alert: { title: "Claude's usage limit has reset: it can go on", body: 'cc' } } });
    },
    TEST_MS,
  );

  test(
    'continue at the reset: typed once at the reset plus its margin, the next turn reaches the model',
    async () => {
      // The notice left on screen, as on a phone away from the terminal: the text goes through it.
      const stop = await limited('one more thing', 10, false);
      // The phone schedules it, with its own token (the lock screen's action).
      const res = await fetch(new URL('/sessions/cc/continue', a.fx.d.base), {
        method: 'POST',
        headers: { authorization: `Bearer ${a.phone.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ at: 'reset' }),
      });
      expect(res.status, await res.clone().text()).toBe(201);
      const made = (await res.json()) as ContinueSchedule;
      expect(made).toMatchObject({
        text: 'continue',
        status: 'waiting',
        stopId: stop.id,
        by: 'phone',
        at: new Date(Date.parse(stop.resetsAt!) + RESET_MARGIN_MS).toISOString(),
      });
      expect((await listed())?.continue).toEqual(made);
      limitUntil = null;
      await a.explained(eventually(() => turnsWith('continue').length > 0, TURN_MS, POLL_MS, 'the continue reaching the model'));
      expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(made.at));
      await a.explained(eventually(async () => (await listed())?.continue?.status === 'typed', 15_000, POLL_MS, 'the list saying typed'));
      const answers = (await (await a.fx.d.get('/ops/answers')).json()) as { answers: { kind: string; ask: string; by: string }[] };
      expect(answers.answers.filter((a) => a.kind === 'continue' && a.ask === made.id)).toEqual([
        expect.objectContaining({ by: 'phone', agent: 'claude' }),
      ]);
      // Nothing scheduled was left unanswered: no reset push for this stop.
      expect(pushes().filter((p) => p.stopId === stop.id && p.aps.alert.title.includes('has reset'))).toEqual([]);
      expect(turnsWith('continue')).toHaveLength(1);
    },
    TEST_MS,
  );
});
