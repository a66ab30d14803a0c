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
import { stateFrames } from '../helpers/stream.js';
import { eventually } from '../helpers/tmux.js';
import type { AgentUsage } from '../../src/protocol/usage.js';

const SESSION = 'usage-pi';
const POLL_MS = 50;
/** The bound of the issue: the windows on the session within 5 s of the answer carrying them. */
const USAGE_SEEN_MS = 5000;

/** The resets the answers carry (unix seconds): the 5-hour window in an hour, the weekly one in five days. */
const now = Math.floor(Date.now() / 1000);
const RESET_5H = now + 3600;
const RESET_7D = now + 432_000;
const iso = (seconds: number) => new Date(seconds * 1000).toISOString();

/** Codex's headers for an answer at `primary` % of the 5-hour window and `secondary` % of the weekly one. */
const codexHeaders = (primary: number, secondary: number): Record<string, string> => ({
  'x-codex-primary-used-percent': String(primary),
  'x-codex-primary-window-minutes': '300',
  'x-codex-primary-reset-at': String(RESET_5H),
  'x-codex-secondary-used-percent': String(secondary),
  'x-codex-secondary-window-minutes': '10080',
  'x-codex-secondary-reset-at': String(RESET_7D),
});

/** The figures the next answers carry, and when the fake last answered with them (epoch ms). */
let figures = { primary: 57, secondary: 23 };
let answeredAt = 0;

describe("pi's usage windows, read from its model API's answers", () => {
  const a = useRealAgent({
    prefix: 'tether-usage-pi-',
    start: piParts((): FakeReply => {
      answeredAt = Date.now();
      return { text: 'ok', headers: codexHeaders(figures.primary, figures.secondary) };
    }),
    toml: piWithPushToml,
    phone: 'e4'.repeat(32),
    session: { name: SESSION, agent: 'pi', ready: ['fake-agent'] },
    pollMs: POLL_MS,
  });
  const usage = async () => ((await (await a.fx.d.get(`/sessions/${SESSION}`)).json()) as { usage: AgentUsage | null }).usage;
  /** Types `text`; resolves with the session's usage once it shows `used` for the 5-hour window, and how long after the answer. */
  const turn = async (text: string, primary: number) => {
    await a.type(text);
    const seen = await a.explained(
      eventually(
        async () => {
          const u = await usage();
          return u?.windows.find((w) => w.name === 'five_hour')?.usedPercent === primary ? u : null;
        },
        TURN_MS,
        POLL_MS,
        `the session's usage at ${primary} %`,
      ),
    );
    return { usage: seen!, afterAnswerMs: Date.now() - answeredAt };
  };

  it('none before an answer has carried them', { timeout: 30_000 }, async () => {
    expect(await usage()).toBeNull();
  });

  it(
    'an answer at 57 % / 23 %: both windows with their resets on the session within 5 s, binding the 5-hour one; a state frame carries them',
    { timeout: TURN_MS + 30_000 },
    async () => {
      const started = Date.now();
      const { usage: u, afterAnswerMs } = await turn('how much is left', 57);
      console.info(`usage-pi: 57/23 on the session ${afterAnswerMs} ms after the answer (turn typed ${Date.now() - started} ms ago)`);
      expect(afterAnswerMs, 'on the session within 5 s of the answer').toBeLessThan(USAGE_SEEN_MS);
      expect(u).toEqual({
        agent: 'pi',
        windows: [
          { name: 'five_hour', usedPercent: 57, resetsAt: iso(RESET_5H) },
          { name: 'seven_day', usedPercent: 23, resetsAt: iso(RESET_7D) },
        ],
        binding: 'five_hour',
        observedAt: expect.any(String) as string,
      });
      const observed = Date.parse(u.observedAt);
      expect(observed).toBeGreaterThanOrEqual(answeredAt - 1000);
      expect(observed).toBeLessThanOrEqual(Date.now());
      await a.explained(
        eventually(
          () => stateFrames(a.m).some((f) => JSON.stringify(f.usage) === JSON.stringify(u)),
          USAGE_SEEN_MS,
          POLL_MS,
          'a state frame with the usage',
        ),
      );
    },
  );

  it('a later answer at 60 % / 91 %: its figures replace them, binding the weekly window', { timeout: TURN_MS + 30_000 }, async () => {
    figures = { primary: 60, secondary: 91 };
    const { usage: u, afterAnswerMs } = await turn('and now', 60);
    console.info(`usage-pi: 60/91 on the session ${afterAnswerMs} ms after the answer`);
    expect(afterAnswerMs).toBeLessThan(USAGE_SEEN_MS);
    expect(u).toMatchObject({
      agent: 'pi',
      windows: [
        { name: 'five_hour', usedPercent: 60, resetsAt: iso(RESET_5H) },
        { name: 'seven_day', usedPercent: 91, resetsAt: iso(RESET_7D) },
      ],
      binding: 'seven_day',
    });
  });
});
