/**
 * The one list of the agents tether integrates with: an adapter each, in its own folder
 * (docs/agents.md "Adding an agent"). Nothing else in tether's core names an agent
 * (test/unit/adapters.test.ts holds it to that): the core reads every agent through this list.
 *
 * DEFAULT_ADAPTER is tether's own default agent's (src/config/default-agent.ts): what a session
 * of an agent tether does not integrate with (`kind = "other"`) lists as its slash commands, and
 * whose kind prefixes the names of sessions created without one.
 */
import type { AgentAdapter } from './adapter.js';
import { claudeAdapter } from '../claude/adapter.js';
import { codexAdapter } from '../codex/adapter.js';
import { geminiAdapter } from '../gemini/adapter.js';
import { opencodeAdapter } from '../opencode/adapter.js';
import { piAdapter } from '../pi/adapter.js';
import { DEFAULT_AGENT_KIND } from '../../config/default-agent.js';

export const AGENT_ADAPTERS: readonly AgentAdapter[] = [piAdapter, claudeAdapter, codexAdapter, geminiAdapter, opencodeAdapter];

/** The default agent's adapter. */
export const DEFAULT_ADAPTER: AgentAdapter = defaultAdapter();

/** Names of sessions created without one: `<prefix>-<n>`. */
export const UNNAMED_SESSION_PREFIX = DEFAULT_AGENT_KIND;

function defaultAdapter(): AgentAdapter {
  const found = AGENT_ADAPTERS.find((a) => a.kind === DEFAULT_AGENT_KIND);
  if (found === undefined) throw new Error(`the default agent ${DEFAULT_AGENT_KIND} has no adapter`);
  return found;
}
