/**
 * The warnings before Claude Code's usage limit (docs/push.md "Usage") with the real Claude Code
 * 2.1.328 logged in as a subscriber, against the fake Anthropic server whose answers carry the
 * service's `anthropic-ratelimit-unified-*` headers, a phone paired in the background with a real
 * HTTP/2 TLS stand-in for APNs. Each turn is a prompt from the phone; what the phone is pushed of
 * the usage windows: at 83 % one push naming 80 % and the 5-hour window; at 86 % none; at 96 % one,
 * time-sensitive; in the window's next period (it resets five hours later), 81 % one again. Bad
 * headers after that leave the daemon serving, with nothing that is not a number in a window. Bad
 * headers after that leave the daemon serving, with nothing that is not a number in a window.
 */
import { describe, expect, it } from 'vitest';
import type { AnthropicReply } from '../../testkit/fake-anthropic.js';
import { isAgentTurn } from '../../testkit/fake-anthropic.js';
import type { AgentUsage } from '../../src/protocol/usage.js';
import { TURN_MS, useRealAgent } from '../helpers/agent-fixture.js';
import { CLAUDE_CC, claudeParts } from '../helpers/agent-parts.js';
import { promptDecided } from '../helpers/prompt-runs.js';
import { eventually } from '../helpers/tmux.js';

const POLL_MS = 50;
const HOUR_S = 3600;

interface UsagePush {
  title: string;
  timeSensitive: boolean;
  usage: { window: string; threshold: number; usedPercent: number };
}

describe('usage warnings with the real Claude Code', () => {
  const start = Math.floor(Date.now() / 1000);
  const figures = { five: 0.42 as number | string, reset: start + HOUR_S, seven: '0.17' };
  const headers = () => ({
    'anthropic-ratelimit-unified-5h-utilization': String(figures.five),
    'anthropic-ratelimit-unified-5h-reset': String(figures.reset),
    'anthropic-ratelimit-unified-7d-utilization': figures.seven,
    'anthropic-ratelimit-unified-7d-reset': String(start + 100 * HOUR_S),
  });
  const a = useRealAgent({
    ...CLAUDE_CC,
    prefix: 'tether-usage-claude-warnings-',
    start: claudeParts((req): AnthropicReply => (isAgentTurn(req) ? { text: 'ok', headers: headers() } : { text: 'Title' }), {
      subscriber: true,
    }),
    phone: 'c9'.repeat(32),
    pollMs: POLL_MS,
  });
  const pushes = () =>
    a
      .pushes<{ aps: { alert: { title: string }; 'interruption-level'?: string }; usage?: UsagePush['usage'] }>()
      .flatMap((p) =>
        p.usage === undefined
          ? []
          : [{ title: p.aps.alert.title, timeSensitive: p.aps['interruption-level'] === 'time-sensitive', usage: p.usage }],
      );
  const fiveHour = async () =>
    ((await (await a.fx.d.get('/sessions/cc')).json()) as { usage: AgentUsage | null }).usage?.windows.find((w) => w.name === 'five_hour');
  /** One turn whose answer carries `five` of the 5-hour window (reset at `reset`); resolves once the session shows it. */
  const turnAt = async (five: number, reset = figures.reset) => {
    figures.five = five;
    figures.reset = reset;
    await a.explained(promptDecided(a.fx, 'cc', { text: `a turn at ${five}` }, TURN_MS));
    await a.explained(
      eventually(async () => (await fiveHour())?.usedPercent === Math.round(five * 1000) / 10, TURN_MS, POLL_MS, `the session at ${five}`),
    );
  };

  it(
    '83 %: one push at 80 %; 86 %: none; 96 %: one, time-sensitive; the next period at 81 %: one again',
    { timeout: 6 * TURN_MS },
    async () => {
      await turnAt(0.83);
      await a.explained(eventually(() => pushes().length === 1, TURN_MS, POLL_MS, 'the 80 % push'));
      expect(pushes()[0]).toMatchObject({ timeSensitive: false, usage: { window: 'five_hour', threshold: 80, usedPercent: 83 } });
      expect(pushes()[0]!.title).toMatch(/^Claude · 80 % of the 5-hour limit used · resets /);
      await turnAt(0.86);
      await turnAt(0.96);
      // The 86 % turn pushed nothing: the next push is the 95 % one, right behind the first.
      await a.explained(eventually(() => pushes().length === 2, TURN_MS, POLL_MS, 'the 95 % push'));
      expect(pushes()[1]).toMatchObject({ timeSensitive: true, usage: { window: 'five_hour', threshold: 95, usedPercent: 96 } });
      await turnAt(0.81, figures.reset + 5 * HOUR_S);
      await a.explained(eventually(() => pushes().length === 3, TURN_MS, POLL_MS, 'the 80 % push of the next period'));
      expect(pushes()[2]).toMatchObject({ usage: { window: 'five_hour', threshold: 80, usedPercent: 81 } });
      expect(pushes()).toHaveLength(3);
    },
  );

  it(
    'bad headers (a percent "abc", 7.5 as a fraction of 1): the daemon serves on, no NaN or null in a window',
    { timeout: 2 * TURN_MS },
    async () => {
      figures.five = 'abc';
      figures.seven = '7.5';
      await a.explained(promptDecided(a.fx, 'cc', { text: 'a turn with bad figures' }, TURN_MS));
      const seven = async () =>
        ((await (await a.fx.d.get('/sessions/cc')).json()) as { usage: AgentUsage | null }).usage?.windows.find(
          (w) => w.name === 'seven_day',
        );
      // Claude caps 7.5 at 100 % and leaves the "abc" window out; the 5-hour window keeps its last figure.
      await a.explained(eventually(async () => (await seven())?.usedPercent === 100, TURN_MS, POLL_MS, 'the weekly window at 100 %'));
      expect((await fiveHour())?.usedPercent).toBe(81);
      const listed = await (await a.fx.d.get('/sessions')).text();
      expect(listed).not.toMatch(/NaN|"usedPercent":null|"resetsAt":null/);
      expect(await (await a.fx.d.get('/usage')).text()).not.toMatch(/NaN|"usedPercent":null|"resetsAt":null/);
      expect((await a.fx.d.get('/health')).status).toBe(200);
    },
  );
});
