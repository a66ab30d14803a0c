/**
 * The one list of the agents tether integrates with: an adapter each, in its own folder
 * (docs/agents.md "Adding an agent"). Nothing else in tether's core names an agent
 * (test/unit/adapters.test.ts holds it to that): the core reads every agent through this list.
 *
 * The first adapter is tether's own default agent: what a session of an agent tether does not
 * integrate with (`kind = "other"`) lists as its slash commands, and the prefix of the names of
 * sessions created without one (`pi-1`, `pi-2`, ...).
 */
import type { AgentAdapter } from './adapter.js';
import { claudeAdapter } from './claude/adapter.js';
import { codexAdapter } from './codex/adapter.js';
import { geminiAdapter } from './gemini/adapter.js';
import { opencodeAdapter } from './opencode/adapter.js';
import { piAdapter } from './pi/adapter.js';

export const AGENT_ADAPTERS: readonly AgentAdapter[] = [piAdapter, claudeAdapter, codexAdapter, geminiAdapter, opencodeAdapter];

/** Names of sessions created without one: `<prefix>-<n>`. */
export const UNNAMED_SESSION_PREFIX = 'pi';
