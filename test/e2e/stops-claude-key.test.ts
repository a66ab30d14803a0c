/**
 * Claude Code with an API key (no subscriber's login) meeting a usage limit (docs/agents.md
 * "Stops"): the real Claude Code 2.1.328 against the fake Anthropic server answering the same 429
 * with the `anthropic-ratelimit-unified-*` headers as in stops-claude.test.ts, its retries off.
 * Claude shows no usage limit then: it ends on `API Error: Request rejected (429)`, and the stop
 * is an `error` with those words (no reset), pushed once as an error.
 */
import { describe, expect, test } from 'vitest';
import { isAgentTurn, usageLimitReply } from '../../testkit/fake-anthropic.js';
import { useRealAgent } from '../helpers/agent-fixture.js';
import { CLAUDE_CC, claudeParts } from '../helpers/agent-parts.js';
import { POLL_MS, resetInThreeHours, watchStops } from '../helpers/agent-stops.js';

const TEST_MS = 240_000;

describe('Claude Code with an API key: a usage-limit 429 is an error', () => {
  /** The usage limit's reset the fake announces (epoch seconds, on the minute). */
  const reset = resetInThreeHours();
  const a = useRealAgent({
    ...CLAUDE_CC,
    prefix: 'tether-stops-claude-key-',
    // claudeHome's API key, no subscriber's login; every turn of the agent's meets the limit,
    // and a refused turn is retried ten times over minutes unless told otherwise.
    start: claudeParts((req) => (isAgentTurn(req) ? usageLimitReply(reset) : { text: 'Title' }), { env: { CLAUDE_CODE_MAX_RETRIES: '0' } }),
    phone: 'c8'.repeat(32),
    pollMs: POLL_MS,
  });
  const w = watchStops(a, 'cc', { kind: 'claude', name: 'Claude' });

  test(
    'the usage-limit 429: an error stop with its words, one push',
    async () => {
      const stop = await w.erred('hello there', ['API Error: Request rejected (429)'], 'API Error: Request rejected (429)');
      expect(stop.message).toBe('API Error: Request rejected (429) · Rate limited');
    },
    TEST_MS,
  );
});
