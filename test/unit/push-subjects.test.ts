/**
 * How push names a session and its agent (src/service/push-subjects.ts, src/agent/contract/kinds.ts
 * `agentLabel`): the alert's subject with what the agent asks, the Live Activity's, nothing for a
 * session that is gone; an agent by its adapter's label, else by its configured name.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_ADAPTER } from '../../src/agent/contract/adapters.js';
import { agentLabel } from '../../src/agent/contract/kinds.js';
import { DEFAULT_AGENT_NAME } from '../../src/config/schema.js';
import { pushSubjects, type SessionMeta } from '../../src/service/push-subjects.js';

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

describe('pushSubjects', () => {
  const metas: Record<string, SessionMeta> = {
    w1: { name: 'w1', description: 'fix it', agent: 'work' },
    w2: { name: 'w2', agent: 'plain' },
  };
  const subjects = pushSubjects({
    describe: (id) => Promise.resolve(metas[id] ?? null),
    label: (agent) => `label of ${agent}`,
    asks: (id) => (id === 'w1' ? 'Allow Bash: ls?' : null),
  });

  it("names an alert's session with its agent's label and what the agent asks, when it asks", async () => {
    expect(await subjects.alert('w1')).toEqual({
      name: 'w1',
      description: 'fix it',
      agent: 'work',
      agentLabel: 'label of work',
      asks: 'Allow Bash: ls?',
    });
    expect(await subjects.alert('w2')).toEqual({ name: 'w2', agent: 'plain', agentLabel: 'label of plain' });
  });

  it("names a Live Activity's session by its name and its agent's label", async () => {
    expect(await subjects.activity('w1')).toEqual({ name: 'w1', agentLabel: 'label of work' });
  });

  it('names a session that is gone by nothing', async () => {
    expect(await subjects.alert('gone')).toBeNull();
    expect(await subjects.activity('gone')).toBeNull();
  });
});
