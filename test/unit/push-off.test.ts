/**
 * Push before it sends anything (src/push/settings.ts `pushWhenConfigured`,
 * src/push/activity-delays.ts): off says why, once, and starts nothing; the tests' shorter Live
 * Activity delays are read from the environment, anything else refused with one line.
 */
import { describe, expect, it } from 'vitest';
import { activityDelaysOf } from '../../src/push/activity-delays.js';
import { pushWhenConfigured, type PushSettings, type RunningPush } from '../../src/push/settings.js';

describe('pushWhenConfigured', () => {
  it('logs why push is off, starts nothing, and its status says so', async () => {
    const logged: string[] = [];
    let started = 0;
    const push = await pushWhenConfigured(
      { enabled: false, reason: 'push is off: no [push] section' },
      { info: (msg: string) => void logged.push(msg) } as never,
      () => (started++, Promise.reject(new Error('not to be started'))),
    );
    expect(started).toBe(0);
    expect(logged).toEqual(['push is off: no [push] section']);
    expect(push.status()).toEqual({ configured: false, reason: 'push is off: no [push] section', sent: 0, failed: 0, lastError: null });
    expect(() => push.stop()).not.toThrow();
  });

  it('starts push with the settings when it is configured, and logs nothing', async () => {
    const logged: string[] = [];
    const settings = { enabled: true, teamId: 'T', keyId: 'K' } as unknown as PushSettings;
    const running: RunningPush = {
      status: () => ({ configured: true, reason: null, sent: 1, failed: 0, lastError: null }),
      stop: () => undefined,
    };
    let given: unknown = null;
    const push = await pushWhenConfigured(settings, { info: (msg: string) => void logged.push(msg) } as never, (s) => {
      given = s;
      return Promise.resolve(running);
    });
    expect(push).toBe(running);
    expect(given).toBe(settings);
    expect(logged).toEqual([]);
  });
});

describe('activityDelaysOf', () => {
  it('sets nothing when the variables are unset or empty', () => {
    expect(activityDelaysOf({})).toEqual({});
    expect(activityDelaysOf({ TETHER_TEST_ACTIVITY_DEBOUNCE_MS: '', TETHER_TEST_ACTIVITY_IDLE_MS: '' })).toEqual({});
  });

  it('reads the debounce and the idle while in ms, each on its own', () => {
    expect(activityDelaysOf({ TETHER_TEST_ACTIVITY_DEBOUNCE_MS: '10', TETHER_TEST_ACTIVITY_IDLE_MS: '3600000' })).toEqual({
      debounce: 10,
      idleWhile: 3_600_000,
    });
    expect(activityDelaysOf({ TETHER_TEST_ACTIVITY_IDLE_MS: '500' })).toEqual({ idleWhile: 500 });
  });

  it('refuses anything but a whole number from 10 to 3600000, naming the variable', () => {
    for (const bad of ['9', '3600001', '1.5', 'soon', '-20'])
      expect(() => activityDelaysOf({ TETHER_TEST_ACTIVITY_DEBOUNCE_MS: bad })).toThrow(
        `TETHER_TEST_ACTIVITY_DEBOUNCE_MS: must be a whole number of ms from 10 to 3600000, got ${JSON.stringify(bad)}`,
      );
  });
});
