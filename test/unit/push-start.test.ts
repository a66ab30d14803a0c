/**
 * Push before it sends anything (src/service/alerts/push-start.ts): off, it says why once and starts
 * nothing; the tests' shorter Live Activity delays are read from the environment, anything else
 * refused with one line; titles name an agent by its adapter's label, else by its configured name.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_ADAPTER } from '../../src/agent/contract/adapters.js';
import { DEFAULT_AGENT_NAME } from '../../src/config/schema.js';
import type { Logger } from '../../src/log.js';
import { agentLabel, startPush, type DaemonPushDeps } from '../../src/service/alerts/push-start.js';
import { activityDelaysOf } from '../../src/cli/test-seams.js';

describe('startPush with push off', () => {
  it('logs why push is off, reaches nothing of the agents or devices, and its status says so', async () => {
    const logged: string[] = [];
    const log = { info: (msg: string) => void logged.push(msg) } as unknown as Logger;
    const untouchable = new Proxy(
      {},
      {
        get: (_t, key) => {
          throw new Error(`push off reached ${String(key)}`);
        },
      },
    );
    const push = await startPush({
      ...untouchable,
      settings: { enabled: false, reason: 'push is off: no [push] section in the config' },
      log,
      agents: untouchable,
      devices: untouchable,
    } as unknown as DaemonPushDeps);
    expect(logged).toEqual(['push is off: no [push] section in the config']);
    expect(push.status()).toEqual({
      configured: false,
      reason: 'push is off: no [push] section in the config',
      sent: 0,
      failed: 0,
      lastError: null,
    });
    expect(() => push.stop()).not.toThrow();
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

describe('agentLabel', () => {
  it("names an agent tether integrates with by its adapter's label, whatever it is called in the config", () => {
    expect(agentLabel('claude', 'work')).toBe('Claude');
    expect(agentLabel('codex', DEFAULT_AGENT_NAME)).toBe('Codex');
  });

  it('names another agent by its configured name, the default one by the default adapter', () => {
    expect(agentLabel('other', 'aider')).toBe('aider');
    expect(agentLabel(null, 'aider')).toBe('aider');
    expect(agentLabel('other', DEFAULT_AGENT_NAME)).toBe(DEFAULT_ADAPTER.label);
  });
});
