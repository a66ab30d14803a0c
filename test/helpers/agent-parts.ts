/**
 * The `start` of a real-agent fixture (agent-fixture.ts) for each agent: its fake model server
 * answering by the test's script, and its home pointing at it, with the variables the daemon
 * passes the agent.
 */
import { rmSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { claudeHome, type ClaudeHome } from '../../testkit/claude-home.js';
import { codexHome, type CodexHome } from '../../testkit/codex-home.js';
import { geminiHome, type GeminiHome } from '../../testkit/gemini-home.js';
import { opencodeHome, type OpencodeHome } from '../../testkit/opencode-home.js';
import { startFakeAnthropic, type AnthropicScript, type FakeAnthropic } from '../../testkit/fake-anthropic.js';
import { startFakeGemini, type FakeGemini, type GeminiScript } from '../../testkit/fake-gemini.js';
import { startFakeResponses, type FakeResponses, type ResponsesScript } from '../../testkit/fake-responses.js';
import type { ApnsStandIns } from '../../testkit/apns-server.js';
import { agentWithPushToml, CLAUDE_ASKS } from './agent-config.js';
import type { AgentParts } from './agent-fixture.js';
import { startFakeModel, type FakeModel, type FakeScript } from './fake-model.js';

/** The daemon's config and the session of a Claude test: `[agents.claude]` asking for permission, session `cc`. */
export const CLAUDE_CC = {
  toml: (apns: ApnsStandIns) => agentWithPushToml('claude', CLAUDE_ASKS, apns),
  session: { name: 'cc', agent: 'claude', ready: ['Claude Code v2.1.328'] },
} as const;

/** The daemon's config and the session of a Codex test: `[agents.codex]` with its own defaults, session `cx`. */
export const CODEX_CX = {
  toml: (apns: ApnsStandIns) => agentWithPushToml('codex', [], apns),
  session: { name: 'cx', agent: 'codex', ready: ['OpenAI Codex (v0.169.0)', 'Ask Codex to do anything'] },
} as const;

export interface ClaudePartsOptions {
  /** Logged in as a subscriber (an OAuth token, no API key): only then does Claude show a usage limit. */
  readonly subscriber?: boolean;
  /** More variables for Claude. */
  readonly env?: NodeJS.ProcessEnv;
}

/** The real Claude Code against the fake Anthropic server. */
export function claudeParts(script: AnthropicScript, opts: ClaudePartsOptions = {}): () => Promise<AgentParts<FakeAnthropic, ClaudeHome>> {
  return async () => {
    const fake = await startFakeAnthropic(script);
    const home = claudeHome(fake.baseUrl);
    const { ANTHROPIC_API_KEY: key, ...withoutKey } = home.env;
    const login = opts.subscriber
      ? { ...withoutKey, CLAUDE_CODE_OAUTH_TOKEN: 'tether-fake-oauth-token' }
      : { ...withoutKey, ANTHROPIC_API_KEY: key };
    return { fake, home, env: { ...login, ...opts.env } };
  };
}

export interface CodexPartsOptions {
  /** Rewrites the user's config.toml (given its text). */
  readonly config?: (toml: string, home: CodexHome) => string;
}

/** The real Codex against the fake Responses server; tether gives it its notify program. */
export function codexParts(script: ResponsesScript, opts: CodexPartsOptions = {}): () => Promise<AgentParts<FakeResponses, CodexHome>> {
  return async () => {
    const fake = await startFakeResponses(script);
    const home = codexHome(fake.baseUrl);
    // The recording hooks would stop Codex on a trust screen.
    rmSync(join(home.dir, 'hooks.json'));
    if (opts.config) {
      const file = join(home.dir, 'config.toml');
      writeFileSync(file, opts.config(readFileSync(file, 'utf8'), home));
    }
    return { fake, home, env: home.env };
  };
}

/** The real Gemini CLI against the fake Gemini API; `prepare` adds to its home what the test needs. */
export function geminiParts(script: GeminiScript, prepare?: (home: GeminiHome) => void): () => Promise<AgentParts<FakeGemini, GeminiHome>> {
  return async () => {
    const fake = await startFakeGemini(script);
    const home = geminiHome(fake.baseUrl);
    prepare?.(home);
    return { fake, home, env: home.env };
  };
}

/** The real opencode against the fake chat-completions server. */
export function opencodeParts(script: FakeScript): () => Promise<AgentParts<FakeModel, OpencodeHome>> {
  return async () => {
    const fake = await startFakeModel(script);
    const home = opencodeHome(fake.baseUrl);
    return { fake, home, env: home.env };
  };
}
