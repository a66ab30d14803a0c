/**
 * Claude Code's usage windows (docs/agents.md "Usage", docs/api.md "Usage"): the real Claude Code
 * 2.1.328 logged in as a subscriber, in a session of the built daemon, against the fake Anthropic
 * server, whose answers carry the `anthropic-ratelimit-unified-5h-*` / `-7d-*` headers as the real
 * service sends them. Claude hands them to its statusLine; tether's statusLine program reports
 * them and runs the user's own statusLine in its place.
 *
 * Two users, each with a daemon and a Claude of their own: one with a statusLine of their own
 * (their line on Claude's screen, made from the same input, `rate_limits` included), one without
 * (no status line row: the rows under the prompt box as a Claude started without tether shows
 * them, but for the "? for shortcuts" hint Claude hides whenever any statusLine is set). For
 * both: the session's `usage` with both windows and their resets within 5 s of the answer.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AGENT_ENV_CLEARED, agentBin } from '../../testkit/agent-bins.js';
import type { ClaudeHome } from '../../testkit/claude-home.js';
import type { AnthropicReply, FakeAnthropic } from '../../testkit/fake-anthropic.js';
import type { AgentUsage } from '../../src/protocol/usage.js';
import { AGENT_START_MS, TURN_MS, useRealAgent, type AgentParts } from '../helpers/agent-fixture.js';
import { CLAUDE_ASKS } from '../helpers/agent-config.js';
import { CLAUDE_CC, claudeParts } from '../helpers/agent-parts.js';
import { eventually, privateTmux, type PrivateTmux } from '../helpers/tmux.js';
import { answerResets, expectUsageInTime, usageTurns, windowsAt, type UsageTurns } from '../helpers/usage-turns.js';

const POLL_MS = 50;
const ANSWER = 'All done here.';
/** The footer hint Claude Code 2.1.328 shows in manual mode with an empty prompt, and hides whenever a statusLine is set. */
const SHORTCUTS_HINT = ' · ? for shortcuts';

/** The resets the answers carry (unix seconds): the 5-hour window in an hour, the weekly one in five days. */
const RESETS = answerResets();

/** The service's subscription headers at 42 % of the 5-hour window and 17 % of the weekly one, on every answer. */
const HEADERS = {
  'anthropic-ratelimit-unified-5h-utilization': '0.42',
  'anthropic-ratelimit-unified-5h-reset': String(RESETS.fiveHour),
  'anthropic-ratelimit-unified-7d-utilization': '0.17',
  'anthropic-ratelimit-unified-7d-reset': String(RESETS.weekly),
};

/** The user's own statusLine: it keeps each input it gets and shows the model and the 5-hour window from it. */
const USER_LINE = `#!/bin/sh
input=$(cat)
printf '%s\\n' "$input" >> "$HOME/statusline-inputs.jsonl"
model=$(printf '%s' "$input" | sed -n 's/.*"display_name": *"\\([^"]*\\)".*/\\1/p')
used=$(printf '%s' "$input" | sed -n 's/.*"five_hour": *{ *"used_percentage": *\\([0-9.]*\\).*/\\1/p')
printf 'my line · %s · 5h %s%%' "$model" "\${used:-none}"
`;

/** A Claude session's agent whose every answer carries HEADERS, and its usage; `prepare` sets up the user's home first. */
function useClaude(prefix: string, phone: string, prepare: (home: ClaudeHome) => void) {
  const state = { answeredAt: 0, env: {} as NodeJS.ProcessEnv };
  const parts = claudeParts(
    (): AnthropicReply => {
      state.answeredAt = Date.now();
      return { text: ANSWER, headers: HEADERS };
    },
    { subscriber: true },
  );
  const a = useRealAgent({
    ...CLAUDE_CC,
    prefix,
    start: async (): Promise<AgentParts<FakeAnthropic, ClaudeHome>> => {
      const p = await parts();
      prepare(p.home);
      state.env = p.env;
      return p;
    },
    phone,
    pollMs: POLL_MS,
  });
  return { a, state, usage: usageTurns(a, 'cc', () => state.answeredAt, POLL_MS) };
}

/** Types a prompt; resolves with the session's usage once it shows 42 %, and how long after the answer. */
async function turn(usage: UsageTurns): Promise<{ usage: AgentUsage; afterAnswerMs: number }> {
  expect(await usage.usage()).toBeNull();
  return usage.turn('how much is left', 'five_hour', 42);
}

/** Checks the usage a turn showed: both windows as Claude reported them, within 5 s of the answer, and on a state frame. */
async function expectWindows(
  usage: UsageTurns,
  state: { answeredAt: number },
  seen: { usage: AgentUsage; afterAnswerMs: number },
  who: string,
) {
  console.info(`usage-claude (${who}): 42/17 on the session ${seen.afterAnswerMs} ms after the answer`);
  expectUsageInTime(seen.usage, seen.afterAnswerMs, {
    agent: 'claude',
    windows: windowsAt(RESETS, 42, 17),
    binding: 'five_hour',
  });
  const observed = Date.parse(seen.usage.observedAt);
  expect(observed).toBeGreaterThanOrEqual(state.answeredAt);
  expect(observed).toBeLessThanOrEqual(Date.now());
  await usage.onStateFrame(seen.usage);
}

/** The rows under the prompt box (after its bottom rule), trailing blank rows dropped. */
function underPromptBox(rows: readonly string[]): string[] {
  const prompt = rows.findLastIndex((r) => r.startsWith('❯'));
  if (prompt < 0 || !/^─+$/.test(rows[prompt + 1] ?? '')) throw new Error(`no prompt box on the screen:\n${rows.join('\n')}`);
  const under = rows.slice(prompt + 2);
  while (under.length > 0 && under.at(-1)!.trim() === '') under.pop();
  return under;
}

describe('Claude Code with a statusLine of the user: their line on its screen, the windows on the session', () => {
  const { a, state, usage } = useClaude('tether-usage-claude-', 'c4'.repeat(32), (home) => {
    const script = join(home.home, 'statusline.sh');
    writeFileSync(script, USER_LINE);
    writeFileSync(
      join(home.home, '.claude', 'settings.json'),
      JSON.stringify({ statusLine: { type: 'command', command: `sh '${script}'` } }),
    );
  });

  it(
    "an answer at 42 % / 17 %: the user's line made from that input on Claude's screen, both windows on the session within 5 s",
    { timeout: TURN_MS + 60_000 },
    async () => {
      // Their line from the start-up run, before any answer carried the windows.
      await a.explained(a.shows(['my line · Sonnet 5.5 · 5h none%'], AGENT_START_MS, "the user's line at start-up"));
      const seen = await turn(usage);
      await a.explained(a.shows([ANSWER, 'my line · Sonnet 5.5 · 5h 42%'], TURN_MS, "the answer, and the user's line with its 42 %"));
      await expectWindows(usage, state, seen, 'a statusLine of their own');
      // Their command got Claude's input itself: the windows as Claude hands them over.
      const inputs = readFileSync(join(a.home.home, 'statusline-inputs.jsonl'), 'utf8').trim().split('\n');
      const last = JSON.parse(inputs.at(-1)!) as { rate_limits?: unknown; session_id?: string };
      expect(last.rate_limits).toEqual({
        five_hour: { used_percentage: 42, resets_at: RESETS.fiveHour },
        seven_day: { used_percentage: 17, resets_at: RESETS.weekly },
      });
      expect(JSON.parse(inputs[0]!)).not.toHaveProperty('rate_limits');
      // Their line sits right under the prompt box, as without tether.
      expect(underPromptBox((await a.m.screen()).text)[0]).toBe('  my line · Sonnet 5.5 · 5h 42%');
    },
  );
});

describe('Claude Code without a statusLine of the user: no status line, the windows on the session', () => {
  const { a, state, usage } = useClaude('tether-usage-claude-none-', 'c5'.repeat(32), () => undefined);
  let plain: PrivateTmux | null = null;
  afterAll(async () => plain?.cleanup(), 30_000);

  it(
    'an answer at 42 % / 17 %: both windows on the session within 5 s; under the prompt box the rows of a Claude without tether',
    { timeout: TURN_MS + AGENT_START_MS + 60_000 },
    async () => {
      const seen = await turn(usage);
      await a.explained(a.shows([ANSWER], TURN_MS, 'the answer'));
      await expectWindows(usage, state, seen, 'no statusLine');

      // The same Claude in the same home, started by hand without tether (no --settings), same size and mode (CLAUDE_CC's).
      plain = await privateTmux();
      const vars = Object.entries(state.env).flatMap(([k, v]) => (v === undefined ? [] : [`${k}=${v}`]));
      const clear = AGENT_ENV_CLEARED.flatMap((v) => ['-u', v]);
      const argv = [agentBin('claude'), ...CLAUDE_ASKS];
      await plain.tmux('new-session', '-d', '-s', 'plain', '-x', '120', '-y', '40', '-c', a.home.cwd, 'env', ...clear, ...vars, ...argv);
      const without = await eventually(
        async () => {
          const rows = underPromptBox((await plain!.capture('plain')).split('\n'));
          if (!rows.some((r) => r.includes(SHORTCUTS_HINT))) throw new Error(`under the prompt box:\n${rows.join('\n')}`);
          return rows;
        },
        AGENT_START_MS,
        POLL_MS,
        'the footer of Claude without tether, its hint shown',
      );
      // No status line row: Claude's own footer follows the prompt box at once, as without tether;
      // the one difference is the hint Claude hides whenever any statusLine is set (measured).
      const expected = without.map((r) => r.replace(SHORTCUTS_HINT, ''));
      const withTether = await eventually(
        async () => {
          const rows = underPromptBox((await a.m.screen()).text);
          if (JSON.stringify(rows) !== JSON.stringify(expected)) throw new Error(`under the prompt box:\n${rows.join('\n')}`);
          return rows;
        },
        10_000,
        POLL_MS,
        `the rows under the prompt box as without tether (${JSON.stringify(expected)})`,
      );
      expect(withTether[0]).toMatch(/^ {2}\S/);
    },
  );
});
