/**
 * Codex stopping for something else than the end of its turn (docs/api.md "Stops",
 * docs/agents.md "Stops"), with the real Codex 0.169 against the fake Responses server answering
 * as the real service does, the built daemon, a phone paired to the HTTP/2 TLS stand-in for APNs
 * (in the background), and a stream client watching the session.
 *
 * One daemon and one Codex session: an API error it gives up on (a 500; its retries are off in
 * the test's config), then a usage limit (a 429 whose body is the service's
 * `usage_limit_reached` error with its `resets_at`, and the `x-codex-primary-*` and
 * `x-codex-secondary-*` headers, answered to the API key of a configured provider), then the
 * agent killed by a signal. Each: the stop on the stream and in the list within 2 s of the agent
 * showing it, and one push. The usage limit comes after the error: once the limit's dialog was
 * closed, the next prompt typed at once was not sent (not yet understood).
 */
import { describe, expect, test } from 'vitest';
import { toolNames, type ResponsesReply } from '../../testkit/fake-responses.js';
import { TURN_MS, useRealAgent } from '../helpers/agent-fixture.js';
import { CODEX_CX, codexParts } from '../helpers/agent-parts.js';
import { API_ERROR_500, POLL_MS, resetInThreeHours, watchStops, type Mode } from '../helpers/agent-stops.js';
import { eventually } from '../helpers/tmux.js';

const TEST_MS = 240_000;

/** The service's answer at a usage limit resetting at `reset`: its error body, and the windows in its headers. */
const usageLimitReply = (reset: number): ResponsesReply => ({
  status: 429,
  headers: {
    'x-codex-primary-used-percent': '100.0',
    'x-codex-primary-window-minutes': '300',
    'x-codex-primary-reset-at': String(reset),
    'x-codex-secondary-used-percent': '40.0',
    'x-codex-secondary-window-minutes': '10080',
    'x-codex-secondary-reset-at': String(reset + 86_400),
  },
  errorBody: {
    error: { type: 'usage_limit_reached', message: 'The usage limit has been reached', plan_type: 'plus', resets_at: reset },
  },
});

describe('Codex stops: an API error, a usage limit, a signal', () => {
  let mode: Mode = 'ok';
  /** The usage limit's reset the fake announces (epoch seconds, on the minute). */
  const reset = resetInThreeHours();
  const reply = (): ResponsesReply => {
    if (mode === 'usage-limit') return usageLimitReply(reset);
    if (mode === 'error') return API_ERROR_500;
    return { text: 'All done.' };
  };
  const a = useRealAgent({
    ...CODEX_CX,
    prefix: 'tether-stops-codex-',
    start: codexParts((req) => (toolNames(req).length > 0 ? reply() : { text: 'Title' })),
    phone: 'd8'.repeat(32),
    pollMs: POLL_MS,
  });
  const w = watchStops(a, 'cx', { kind: 'codex', name: 'Codex' });

  test(
    'an API error it gives up on: the error stop with its words, one push with them',
    async () => {
      mode = 'error';
      const stop = await w.erred('try again', ['experiencing high demand'], 'experiencing high demand');
      expect(stop.message).toBe('We’re currently experiencing high demand, which may cause temporary errors.');
    },
    TEST_MS,
  );

  test(
    'a usage limit: the stop with its reset on the stream and in the list, one time-sensitive push naming the reset',
    async () => {
      mode = 'usage-limit';
      const stop = await w.limited('hello there', ['You’ve hit your usage limit'], reset);
      expect(stop.message).toMatch(/^You’ve hit your usage limit\..* try again at /);
      // Codex then offers a smaller model in a dialog that takes the keys: one Escape closes it (more
      // reach the prompt, where Escape is Codex's key for editing the previous prompt).
      await a.explained(a.shows(['Approaching rate limits'], TURN_MS, 'the rate limit dialog'));
      a.m.stream.sendKey('escape');
      await a.explained(
        eventually(async () => !(await a.m.text()).includes('Approaching rate limits'), 30_000, POLL_MS, 'the rate limit dialog closed'),
      );
      await a.explained(a.shows(['Ask Codex to do anything', '? for shortcuts'], TURN_MS, 'the empty prompt and its footer back'));
    },
    TEST_MS,
  );

  test('killed by a signal: the exited stop names it in the list, one push', () => w.killed(), TEST_MS);
});
