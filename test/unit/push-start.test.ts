/**
 * Push before it sends anything (src/service/alerts/push-start.ts): off, it says why once and starts
 * nothing; on, it starts with the settings; an alert and the card are worded from the session and
 * its agent, and an alert's ask or stop is checked as it goes; the tests' shorter Live Activity
 * delays are read from the environment, anything else refused with one line; titles name an agent
 * by its adapter's label, else by its configured name.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_ADAPTER } from '../../src/agent/contract/adapters.js';
import { DEFAULT_AGENT_NAME } from '../../src/config/schema.js';
import type { Logger } from '../../src/log.js';
import { agentLabel, PushFacts, pushWhenConfigured, type PushOn } from '../../src/service/alerts/push-start.js';
import type { PushStatus } from '../../src/push/settings.js';
import { activityDelaysOf } from '../../src/cli/test-seams.js';

describe('pushWhenConfigured', () => {
  it('with push off, logs why once, starts nothing, and its status says so', async () => {
    const logged: string[] = [];
    const log = { info: (msg: string) => void logged.push(msg) } as unknown as Logger;
    let started = 0;
    const push = await pushWhenConfigured({ enabled: false, reason: 'push is off: no [push] section in the config' }, log, () => {
      started++;
      return Promise.reject(new Error('started with push off'));
    });
    expect(started).toBe(0);
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

  it('with push on, starts it with the settings and answers what it started, logging nothing', async () => {
    const logged: string[] = [];
    const log = { info: (msg: string) => void logged.push(msg) } as unknown as Logger;
    const settings = { enabled: true, teamId: 'T', keyId: 'K', bundleId: 'b' } as unknown as PushOn;
    const status = { configured: true, reason: null, sent: 3, failed: 0, lastError: null } as unknown as PushStatus;
    const given: unknown[] = [];
    const push = await pushWhenConfigured(settings, log, (s) => {
      given.push(s);
      return Promise.resolve({ status: () => status, stop: () => undefined });
    });
    expect(given).toEqual([settings]);
    expect(push.status()).toBe(status);
    expect(logged).toEqual([]);
  });
});

describe('PushFacts', () => {
  const metas: Record<string, { name: string; description?: string; agent: string }> = {
    a: { name: 'api', description: 'the API', agent: 'work' },
    b: { name: 'web', agent: DEFAULT_AGENT_NAME },
    c: { name: 'sh', agent: 'aider' },
  };
  const sessions = { metaIfKnown: (id: string) => Promise.resolve(metas[id] ?? null) };
  const kinds = { kind: (name: string) => ({ work: 'claude', [DEFAULT_AGENT_NAME]: 'other', aider: 'other' })[name] ?? null };
  const agents = {
    asks: (id: string) => (id === 'a' ? 'run Bash: npm test' : null),
    openAsk: (id: string) => (id === 'a' ? { open: { ask: { id: 'ask-1' } } } : null),
    stopOf: (id: string) => (id === 'b' ? { id: 'stop-9' } : null),
  } as unknown as ConstructorParameters<typeof PushFacts>[2];
  const facts = new PushFacts(sessions, kinds, agents);

  it("words an alert with the session's name, description, its agent's label and what it asks", async () => {
    expect(await facts.alert('a')).toEqual({ name: 'api', description: 'the API', agentLabel: 'Claude', asks: 'run Bash: npm test' });
    expect(await facts.alert('b')).toEqual({ name: 'web', agentLabel: DEFAULT_ADAPTER.label });
    expect(await facts.alert('c')).toEqual({ name: 'sh', agentLabel: 'aider' });
    expect(await facts.alert('gone')).toBeNull();
  });

  it("names the card's session and agent, null for a session that is gone", async () => {
    expect(await facts.card('a')).toEqual({ name: 'api', agentLabel: 'Claude' });
    expect(await facts.card('gone')).toBeNull();
  });

  it('tells whether the ask or the stop an alert is about still holds', () => {
    expect(facts.askOpen('a', 'ask-1')).toBe(true);
    expect(facts.askOpen('a', 'ask-0')).toBe(false);
    expect(facts.askOpen('b', 'ask-1')).toBe(false);
    expect(facts.stopHeld('b', 'stop-9')).toBe(true);
    expect(facts.stopHeld('b', 'stop-8')).toBe(false);
    expect(facts.stopHeld('a', 'stop-9')).toBe(false);
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
