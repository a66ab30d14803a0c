/**
 * What "reached the model" means per agent: the last user message of each of the agent's own
 * turns (requests that offer its tools, not its side calls: titles, routing, summaries), as each
 * fake model server recorded them. The benchmarks' copy of the tests' readers
 * (test/helpers/prompt-runs.ts `TURNS`): bench/ may not import test/.
 */
import { anthropicText, isAgentTurn as isClaudeTurn, type AnthropicRequest } from './fake-anthropic.js';
import { lastOfRole, messageText, offersTools, type ChatRequest } from './fake-chat.js';
import { isAgentTurn as isGeminiTurn, lastUserText, type GeminiRequest } from './fake-gemini.js';
import { responsesText, toolNames, type ResponsesRequest } from './fake-responses.js';

/** The agents whose turns are read. */
export type TurnAgent = 'pi' | 'claude' | 'codex' | 'gemini' | 'opencode';

/** The last user message of one request when it is one of the agent's own turns, else null. */
export type TurnOf = (request: unknown) => string | null;

export const TURN_OF: Readonly<Record<TurnAgent, TurnOf>> = {
  pi: (r) => (offersTools(r as ChatRequest) ? messageText(lastOfRole(r as ChatRequest, 'user')) : null),
  opencode: (r) => (offersTools(r as ChatRequest) ? messageText(lastOfRole(r as ChatRequest, 'user')) : null),
  claude: (r) => {
    const req = r as AnthropicRequest;
    if (!isClaudeTurn(req)) return null;
    return anthropicText([...req.messages].reverse().find((m) => m.role === 'user')?.content);
  },
  codex: (r) => {
    const req = r as ResponsesRequest;
    if (toolNames(req).length === 0) return null;
    return responsesText([...req.input].reverse().find((i) => i.role === 'user'));
  },
  gemini: (r) => (isGeminiTurn(r as GeminiRequest) ? lastUserText(r as GeminiRequest) : null),
};

/** The last user message of each of the agent's own turns among `requests`, in order. */
export function agentTurns(agent: TurnAgent, requests: readonly unknown[]): string[] {
  return requests.map(TURN_OF[agent]).filter((t): t is string => t !== null);
}

/** How many of the turns carried `text` as (part of) their last user message. */
export function turnsWith(turns: readonly string[], text: string): number {
  return turns.filter((t) => t.includes(text)).length;
}
