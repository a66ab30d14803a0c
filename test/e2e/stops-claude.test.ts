/**
 * Claude Code stopping for something else than the end of its turn (docs/api.md "Stops",
 * docs/agents.md "Stops"), with the real Claude Code 2.1.328 logged in as a subscriber (an OAuth
 * token, no API key: only then does it show a usage limit) against the fake Anthropic server
 * answering as the real service does, the built daemon, a phone paired to the HTTP/2 TLS stand-in
 * for APNs (in the background), and a stream client watching the session.
 *
 * One daemon and one Claude session: a usage limit (a 429 with the `anthropic-ratelimit-unified-*`
 * headers Claude reads), then an API error it gives up on (a 500, its retries turned off), then
 * the agent killed by a signal. Each: the stop on the stream and in the list within 2 s of the
 * agent showing it, and one push.
 */
import { describe, expect, test } from 'vitest';
import { isAgentTurn, usageLimitReply, type AnthropicReply } from '../../testkit/fake-anthropic.js';
import { useRealAgent } from '../helpers/agent-fixture.js';
import { CLAUDE_CC, claudeParts } from '../helpers/agent-parts.js';
import { API_ERROR_500, dismissClaudeLimitNotice, POLL_MS, resetInThreeHours, watchStops, type Mode } from '../helpers/agent-stops.js';

const TEST_MS = 240_000;

describe('Claude Code stops: a usage limit, an API error, a signal', () => {
  let mode: Mode = 'ok';
  /** The usage limit's reset the fake announces (epoch seconds, on the minute). */
  const reset = resetInThreeHours();
  const reply = (): AnthropicReply => {
    if (mode === 'usage-limit') return usageLimitReply(reset);
    if (mode === 'error') return API_ERROR_500;
    return { text: 'All done.' };
  };
  const a = useRealAgent({
    ...CLAUDE_CC,
    prefix: 'tether-stops-claude-',
    start: claudeParts((req) => (isAgentTurn(req) ? reply() : { text: 'Title' }), {
      subscriber: true,
      // A 500 is retried ten times over minutes unless told otherwise.
      env: { CLAUDE_CODE_MAX_RETRIES: '0' },
    }),
    phone: 'c7'.repeat(32),
    pollMs: POLL_MS,
  });
  const w = watchStops(a, 'cc', { kind: 'claude', name: 'Claude' });

  test(
    'a usage limit: the stop with its reset on the stream and in the list, one time-sensitive push naming the reset',
    async () => {
      mode = 'usage-limit';
      const stop = await w.limited('hello there', ["You've hit your", 'limit'], reset);
      expect(stop.message).toMatch(/You've hit your .*limit/);
      await dismissClaudeLimitNotice(a);
      // The stop stays until the agent starts a new turn.
      expect((await w.listedStop())?.id).toBe(stop.id);
    },
    TEST_MS,
  );

  test(
    'an API error it gives up on: the error stop with its words, one push with them',
    async () => {
      mode = 'error';
      const stop = await w.erred('try again', ['API Error'], 'API Error');
      expect(stop.message).toContain('API Error');
    },
    TEST_MS,
  );

  test('killed by a signal: the exited stop names it in the list, one push', () => w.killed(), TEST_MS);
});
