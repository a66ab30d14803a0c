/**
 * Codex's usage windows and its "Approaching rate limits" dialog (docs/agents.md "Codex", "Usage";
 * docs/api.md "Usage", "Asks", "Prompts"), with the real Codex 0.169 in a session of the built
 * daemon, against the fake Responses server whose good answers carry the `x-codex-primary-*` and
 * `x-codex-secondary-*` headers as the real service sends them. Codex writes them into its rollout
 * file (each `token_count` record), which tether reads: the session's `usage` within 5 s of the
 * answer. At a weekly 91 % Codex shows its dialog when the turn ends, which takes every key until
 * answered: tether predicts it from the same records and makes it an ask, answered from the phone;
 * a prompt sent meanwhile waits for it, and is typed once after.
 *
 * One daemon and one Codex session; the tests run in order. Then a Codex whose command line turns
 * the dialog off (`-c notice.hide_rate_limit_model_nudge=true`, which only its notify tells
 * tether): no dialog, no ask, and a prompt goes straight through.
 */
import { describe, expect, it } from 'vitest';
import { responsesText, toolNames, type ResponsesReply, type ResponsesRequest } from '../../testkit/fake-responses.js';
import { TURN_MS, useRealAgent } from '../helpers/agent-fixture.js';
import { agentWithPushToml } from '../helpers/agent-config.js';
import { CODEX_CX, codexParts } from '../helpers/agent-parts.js';
import { listedPrompts, TURNS, turnsWith } from '../helpers/prompt-runs.js';
import { stateFrames } from '../helpers/stream.js';
import { eventually } from '../helpers/tmux.js';
import { answerResets, codexUsageHeaders, expectUsageInTime, usageTurns, windowsAt } from '../helpers/usage-turns.js';
import type { Ask } from '../../src/protocol/frames.js';
import type { PromptRecord } from '../../src/protocol/prompt.js';
import type { AgentUsage } from '../../src/protocol/usage.js';

const POLL_MS = 50;
/** How long a prompt sent while the dialog is open is watched staying queued. */
const HELD_MS = 4000;
const DIALOG = 'Approaching rate limits';

/** The resets the answers carry (unix seconds): the 5-hour window in an hour, the weekly one in five days. */
const RESETS = answerResets();

/** The figures the next answers carry, and when the fake last answered the agent's turn (epoch ms). */
let figures = { primary: 57, secondary: 23 };
let answeredAt = 0;

/** The agent's own turns answer with the windows' headers and the prompt's words; its title request gets neither. */
function reply(req: ResponsesRequest): ResponsesReply {
  if (toolNames(req).length === 0) return { text: 'Title' };
  answeredAt = Date.now();
  const last = responsesText([...req.input].reverse().find((i) => i.role === 'user'));
  return {
    text: `answered: ${last.slice(0, 60)}`,
    headers: codexUsageHeaders(figures, RESETS),
  };
}

describe("Codex's usage windows, and its rate-limit dialog as an ask", () => {
  const a = useRealAgent({ ...CODEX_CX, prefix: 'tether-usage-codex-', start: codexParts(reply), phone: 'e5'.repeat(32), pollMs: POLL_MS });
  const session = async () => (await (await a.fx.d.get('/sessions/cx')).json()) as { usage: AgentUsage | null; ask: Ask | null };
  const turns = () => TURNS.codex(a.fake.requests);
  const models = () => a.fake.requests.filter((r) => toolNames(r).length > 0).map((r) => r.model);
  const prompt = async (text: string): Promise<PromptRecord> => {
    const res = await a.fx.json('POST', '/sessions/cx/prompt', { text });
    expect(res.status, await res.clone().text()).toBe(202);
    return (await res.json()) as PromptRecord;
  };
  const status = async (id: string) => (await listedPrompts(a.fx, 'cx')).find((p) => p.id === id)?.status;
  const { turn, onStateFrame } = usageTurns(a, 'cx', () => answeredAt, POLL_MS);

  it(
    'an answer at 57 % / 23 %: both windows with their resets on the session within 5 s, binding the 5-hour one; a state frame carries them',
    { timeout: TURN_MS + 30_000 },
    async () => {
      expect((await session()).usage).toBeNull();
      const { usage, afterAnswerMs } = await turn('how much is left', 'seven_day', 23);
      console.info(`usage-codex: 57/23 on the session ${afterAnswerMs} ms after the answer`);
      expectUsageInTime(usage, afterAnswerMs, {
        agent: 'codex',
        windows: windowsAt(RESETS, 57, 23),
        binding: 'five_hour',
      });
      expect(Date.parse(usage.observedAt)).toBeGreaterThanOrEqual(answeredAt - 1000);
      await onStateFrame(usage);
      // No dialog at 57 %: the turn ends waiting for a prompt, no ask.
      await a.explained(
        eventually(() => stateFrames(a.m).at(-1)?.value === 'awaiting-input', TURN_MS, POLL_MS, 'awaiting-input after the turn'),
      );
      expect((await session()).ask).toBeNull();
    },
  );

  it(
    'weekly at 91 %: binding the weekly window, the dialog an ask; a prompt sent meanwhile stays queued; kept from the phone, the dialog goes and the prompt reaches the model once; the next one too',
    { timeout: 3 * TURN_MS + 60_000 },
    async () => {
      figures = { primary: 57, secondary: 91 };
      const seen = new Set(stateFrames(a.m).flatMap((f) => (f.ask ? [f.ask.id] : [])));
      const { usage } = await turn('one more turn', 'seven_day', 91);
      expect(usage.binding).toBe('seven_day');
      const frame = await a.explained(
        eventually(
          () => stateFrames(a.m).find((f) => f.ask !== undefined && !seen.has(f.ask.id)),
          TURN_MS,
          POLL_MS,
          'the dialog as an ask on the stream',
        ),
      );
      expect(frame!.value).toBe('awaiting-input');
      const ask = frame!.ask!;
      expect(ask).toMatchObject({
        kind: 'question',
        agent: 'codex',
        concern: 'Approaching rate limits: switch to gpt-6-luna for lower credit usage?',
        choices: [
          { id: 'switch', label: 'Switch to gpt-6-luna' },
          { id: 'keep', label: 'Keep current model' },
          { id: 'never', label: 'Keep current model (never show again)' },
        ],
      });
      expect(ask.detail).toMatch(/^weekly limit at 91 % used\./);
      expect((await session()).ask).toEqual(ask);
      await a.explained(a.shows([DIALOG, 'Switch to gpt-6-luna for lower credit usage?'], TURN_MS, "Codex's dialog on the screen"));

      // A prompt sent while the dialog is open waits for it: typed into it, it would be lost and its Enter would switch the model.
      const held = await prompt('sent while the dialog is open');
      expect(held.status).toBe('queued');
      await new Promise((r) => setTimeout(r, HELD_MS));
      expect(await status(held.id)).toBe('queued');
      expect(turnsWith(turns(), 'sent while the dialog is open')).toBe(0);
      expect(await a.m.text()).toContain(DIALOG);

      const res = await a.answer(ask.id, 'keep');
      const body = await res.text();
      expect(res.status, body).toBe(200);
      expect(JSON.parse(body)).toEqual({ ask: ask.id, choice: 'keep', landed: true, by: 'phone' });
      await a.explained(eventually(async () => !(await a.m.text()).includes(DIALOG), 30_000, POLL_MS, 'the dialog gone from the screen'));
      await a.explained(
        eventually(async () => (await status(held.id)) === 'submitted', TURN_MS, POLL_MS, 'the held prompt submitted after the answer'),
      );
      await a.explained(
        eventually(() => turnsWith(turns(), 'sent while the dialog is open') === 1, TURN_MS, POLL_MS, 'the held prompt reaching the model'),
      );

      // The next prompt, sent once the agent waits again: typed once; Codex shows its dialog once, so no ask after it.
      await a.explained(
        eventually(
          () => stateFrames(a.m).at(-1)?.value === 'awaiting-input' && turnsWith(turns(), 'sent while the dialog is open') === 1,
          TURN_MS,
          POLL_MS,
          'awaiting-input after the held prompt',
        ),
      );
      const after = await prompt('sent after the dialog');
      await a.explained(eventually(async () => (await status(after.id)) === 'submitted', TURN_MS, POLL_MS, 'the next prompt submitted'));
      await a.explained(
        eventually(() => turnsWith(turns(), 'sent after the dialog') === 1, TURN_MS, POLL_MS, 'the next prompt reaching the model'),
      );
      await a.explained(eventually(() => stateFrames(a.m).at(-1)?.value === 'awaiting-input', TURN_MS, POLL_MS, 'its turn ended'));
      expect(turnsWith(turns(), 'sent while the dialog is open')).toBe(1);
      expect(turnsWith(turns(), 'sent after the dialog')).toBe(1);
      expect((await session()).ask).toBeNull();
      expect(stateFrames(a.m).filter((f) => f.ask !== undefined && !seen.has(f.ask.id) && f.ask.id !== ask.id)).toEqual([]);
      // Kept: every turn ran on the configured model.
      expect(new Set(models())).toEqual(new Set(['fake-codex']));
    },
  );
});

describe('a Codex whose command line turns its rate-limit dialog off', () => {
  const a = useRealAgent({
    ...CODEX_CX,
    toml: (apns) => agentWithPushToml('codex', ['-c', 'notice.hide_rate_limit_model_nudge=true'], apns),
    prefix: 'tether-usage-codex-off-',
    start: codexParts(reply),
    phone: 'e6'.repeat(32),
    pollMs: POLL_MS,
  });

  it(
    "weekly at 91 %: no dialog and no ask; a prompt sent at the turn's end reaches the model once",
    { timeout: 2 * TURN_MS + 30_000 },
    async () => {
      figures = { primary: 57, secondary: 91 };
      await a.type('a turn at 91');
      await a.explained(
        eventually(
          () => stateFrames(a.m).at(-1)?.value === 'awaiting-input' && TURNS.codex(a.fake.requests).length === 1,
          TURN_MS,
          POLL_MS,
          'the turn ended',
        ),
      );
      const res = await a.fx.json('POST', '/sessions/cx/prompt', { text: 'straight through' });
      expect(res.status, await res.clone().text()).toBe(202);
      await a.explained(
        eventually(
          () => turnsWith(TURNS.codex(a.fake.requests), 'straight through') === 1,
          TURN_MS,
          POLL_MS,
          'the prompt reaching the model',
        ),
      );
      expect(stateFrames(a.m).filter((f) => f.ask !== undefined)).toEqual([]);
      expect(await a.m.text()).not.toContain(DIALOG);
    },
  );
});
