/**
 * pi's usage windows (docs/agents.md "Usage", docs/api.md "Usage"): the real pi with the tether
 * extension in a session of the built daemon, against the fake chat-completions server, whose
 * answers carry Codex's `x-codex-*` headers as the real service sends them. pi hands every answer's
 * headers to the extension (`after_provider_response`), which reports the windows over the agent
 * socket: the session's `usage` in `GET /sessions/<id>` and on a `state` frame within 5 s of the
 * answer; a later answer's figures replace them.
 */
import { describe, expect, it } from 'vitest';
import { TURN_MS, useRealAgent } from '../helpers/agent-fixture.js';
import { piWithPushToml } from '../helpers/agent-config.js';
import type { FakeReply } from '../helpers/fake-model.js';
import { piParts } from '../helpers/prompt-suite.js';
import { answerResets, codexUsageHeaders, expectUsageInTime, usageTurns, windowsAt } from '../helpers/usage-turns.js';

const SESSION = 'usage-pi';
const POLL_MS = 50;

/** The resets the answers carry (unix seconds): the 5-hour window in an hour, the weekly one in five days. */
const RESETS = answerResets();

/** The figures the next answers carry, and when the fake last answered with them (epoch ms). */
let figures = { primary: 57, secondary: 23 };
let answeredAt = 0;

describe("pi's usage windows, read from its model API's answers", () => {
  const a = useRealAgent({
    prefix: 'tether-usage-pi-',
    start: piParts((): FakeReply => {
      answeredAt = Date.now();
      return { text: 'ok', headers: codexUsageHeaders(figures, RESETS) };
    }),
    toml: piWithPushToml,
    phone: 'e4'.repeat(32),
    session: { name: SESSION, agent: 'pi', ready: ['fake-agent'] },
    pollMs: POLL_MS,
  });
  const { usage, turn, onStateFrame } = usageTurns(a, SESSION, () => answeredAt, POLL_MS);

  it('none before an answer has carried them', { timeout: 30_000 }, async () => {
    expect(await usage()).toBeNull();
  });

  it(
    'an answer at 57 % / 23 %: both windows with their resets on the session within 5 s, binding the 5-hour one; a state frame carries them',
    { timeout: TURN_MS + 30_000 },
    async () => {
      const started = Date.now();
      const { usage: u, afterAnswerMs } = await turn('how much is left', 'five_hour', 57);
      console.info(`usage-pi: 57/23 on the session ${afterAnswerMs} ms after the answer (turn typed ${Date.now() - started} ms ago)`);
      expectUsageInTime(u, afterAnswerMs, {
        agent: 'pi',
        windows: windowsAt(RESETS, 57, 23),
        binding: 'five_hour',
      });
      const observed = Date.parse(u.observedAt);
      expect(observed).toBeGreaterThanOrEqual(answeredAt - 1000);
      expect(observed).toBeLessThanOrEqual(Date.now());
      await onStateFrame(u);
    },
  );

  it('a later answer at 60 % / 91 %: its figures replace them, binding the weekly window', { timeout: TURN_MS + 30_000 }, async () => {
    figures = { primary: 60, secondary: 91 };
    const { usage: u, afterAnswerMs } = await turn('and now', 'five_hour', 60);
    console.info(`usage-pi: 60/91 on the session ${afterAnswerMs} ms after the answer`);
    expectUsageInTime(u, afterAnswerMs, {
      agent: 'pi',
      windows: windowsAt(RESETS, 60, 91),
      binding: 'seven_day',
    });
  });
});
