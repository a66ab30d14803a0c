/**
 * The rules of a continue request that need the clock or the stop (src/service/continue/continue-request.ts):
 * `at: "reset"` against the stop, an ISO time against now and the 7-day bound, the text's limits.
 */
import { describe, expect, it } from 'vitest';
import { MAX_CONTINUE_AHEAD_MS, RESET_MARGIN_MS } from '../../src/protocol/continue.js';
import type { Stop } from '../../src/protocol/stop.js';
import { checkContinueRequest } from '../../src/service/continue/continue-request.js';
import { domainError } from '../helpers/domain-error.js';

const NOW = Date.UTC(2026, 10, 28, 12, 0, 0);
const stop = (over: Partial<Stop> = {}): Stop => ({
  id: 's1',
  kind: 'usage-limit',
  agent: 'claude',
  message: "You've hit your limit",
  stoppedAt: new Date(NOW).toISOString(),
  resetsAt: new Date(NOW + 3600_000).toISOString(),
  ...over,
});

describe('a continue request', () => {
  it('at the reset: the stop\'s resetsAt plus the margin, answering that stop, "continue" by default', () => {
    expect(checkContinueRequest({ at: 'reset' }, stop(), NOW)).toEqual({
      at: NOW + 3600_000 + RESET_MARGIN_MS,
      text: 'continue',
      stopId: 's1',
    });
  });

  it('at a reset already passed: due now', () => {
    expect(checkContinueRequest({ at: 'reset' }, stop({ resetsAt: new Date(NOW - 60_000).toISOString() }), NOW).at).toBe(NOW);
  });

  it('at the reset without a usage limit with a reset: no-usage-limit', () => {
    for (const s of [null, stop({ kind: 'done', resetsAt: undefined }), stop({ kind: 'error' }), stop({ resetsAt: undefined })])
      expect(() => checkContinueRequest({ at: 'reset' }, s, NOW), JSON.stringify(s)).toThrow(domainError('no-usage-limit'));
  });

  it('an ISO time with its offset, in the future, at most 7 days ahead; the stop it answers, if any', () => {
    expect(checkContinueRequest({ at: '2026-11-28T15:00:00+02:00', text: 'go on' }, null, NOW)).toEqual({
      at: NOW + 3600_000,
      text: 'go on',
      stopId: null,
    });
    expect(checkContinueRequest({ at: new Date(NOW + MAX_CONTINUE_AHEAD_MS).toISOString() }, stop(), NOW).stopId).toBe('s1');
    for (const at of [
      new Date(NOW).toISOString(),
      new Date(NOW - 1).toISOString(),
      new Date(NOW + MAX_CONTINUE_AHEAD_MS + 1000).toISOString(),
      '2026-11-29T09:00:00',
      '2026-11-29 09:00Z',
      'tomorrow',
      '2026-13-40T99:00:00Z',
    ])
      expect(() => checkContinueRequest({ at }, null, NOW), at).toThrow(domainError('invalid'));
  });

  it('a text too long, blank, or with a control character: invalid', () => {
    const at = new Date(NOW + 60_000).toISOString();
    expect(checkContinueRequest({ at, text: 'é'.repeat(1000) }, null, NOW).text).toHaveLength(1000);
    for (const text of ['x'.repeat(1001), '  ', 'go\non', 'go\ton', 'go\u001b[A', 'go\u007f', 'go\u0085'])
      expect(() => checkContinueRequest({ at, text }, null, NOW), JSON.stringify(text)).toThrow(domainError('invalid'));
  });
});
