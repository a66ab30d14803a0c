import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { importsAgents } from '../sequencer.js';

describe('the test order while the agents are installed', () => {
  const e2e = fileURLToPath(new URL('../e2e/', import.meta.url));
  const needing = readdirSync(e2e)
    .filter((f) => f.endsWith('.test.ts') && importsAgents(`${e2e}${f}`))
    .sort();

  it('knows the files that import the agents, through the helpers too', () => {
    // Directly (agentBin), through the agent fixture, and through a shared helper (the prompt suite).
    expect(needing).toEqual(expect.arrayContaining(['real-agents.test.ts', 'asks-codex.test.ts', 'prompts-gemini.test.ts']));
    expect(needing).not.toContain('stream.test.ts');
    expect(needing).not.toContain('serve.test.ts');
  });
});
