/**
 * Claude Code with an API key (no subscriber's login) meeting a usage limit (docs/agents.md
 * "Stops"): the real Claude Code 2.1.328 against the fake Anthropic server answering the same 429
 * with the `anthropic-ratelimit-unified-*` headers as in stops-claude.test.ts, its retries off.
 * Claude shows no usage limit then: it ends on `API Error: Request rejected (429)`, and the stop
 * is an `error` with those words (no reset), pushed once as an error.
 */
import { describe, expect, test } from 'vitest';
import { isAgentTurn, usageLimitReply } from '../../testkit/fake-anthropic.js';
import { agentWithPushToml, CLAUDE_ASKS } from '../helpers/agent-config.js';
import { useRealAgent } from '../helpers/agent-fixture.js';
import { claudeParts } from '../helpers/agent-parts.js';
import { expectErrorPush, POLL_MS, resetInThreeHours, watchStops } from '../helpers/agent-stops.js';

const TEST_MS = 240_000;

describe('Claude Code with an API key: a usage-limit 429 is an error', () => {
  /** The usage limit's reset the fake announces (epoch seconds, on the minute). */
  const reset = resetInThreeHours();
  const a = useRealAgent({
    prefix: 'tether-stops-claude-key-',
    // claudeHome's API key, no subscriber's login; every turn of the agent's meets the limit.
    start: claudeParts((req) => (isAgentTurn(req) ? usageLimitReply(reset) : { text: 'Title' }), {
      // A refused turn is retried ten times over minutes unless told otherwise.
      env: { CLAUDE_CODE_MAX_RETRIES: '0' },
    }),
    toml: (apns) => agentWithPushToml('claude', CLAUDE_ASKS, apns),
    phone: 'c8'.repeat(32),
    session: { name: 'cc', agent: 'claude', ready: ['Claude Code v2.1.328'] },
    pollMs: POLL_MS,
  });
  const w = watchStops(a, 'cc');

  test(
    'the usage-limit 429: an error stop with its words, one push',
    async () => {
      const before = a.apns.sandbox.requests.length;
      const shownAt = await w.prompt('hello there', ['API Error: Request rejected (429)']);
      const stop = await w.stopSeen('error', shownAt);
      expect(stop).toMatchObject({ agent: 'claude', message: 'API Error: Request rejected (429) · Rate limited' });
      expect(stop.resetsAt).toBeUndefined();
      expectErrorPush(await w.pushedOnce(before, stop.id), 'Claude', 'cc', 'API Error: Request rejected (429)');
    },
    TEST_MS,
  );
});
