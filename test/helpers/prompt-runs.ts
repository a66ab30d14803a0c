/**
 * Prompts sent to a real agent the way a phone sends them (docs/api.md "Prompts"): one
 * `POST /sessions/:id/prompt` each, the next as soon as the previous was submitted, and what the
 * person would check: each prompt reached the model exactly once, as one user message with its
 * lines, and the session's prompts say `submitted`.
 *
 * What "reached the model" means per agent: the agent's own turns (requests that offer its shell
 * tool, not its side calls: titles, routing, summaries), by the text of their last user message.
 */
import { expect } from 'vitest';
import { anthropicText, isAgentTurn as isClaudeTurn, type AnthropicRequest } from '../../testkit/fake-anthropic.js';
import { isAgentTurn as isGeminiTurn, lastUserText, type GeminiRequest } from '../../testkit/fake-gemini.js';
import { responsesText, toolNames, type ResponsesRequest } from '../../testkit/fake-responses.js';
import type { ContinueSchedule } from '../../src/protocol/continue.js';
import type { PromptRecord } from '../../src/protocol/prompt.js';
import type { Stop } from '../../src/protocol/stop.js';
import type { DaemonFixture } from './daemon-fixture.js';
import { lastOfRole, messageText, type ChatRequest } from './fake-model.js';
import { eventually } from './tmux.js';

/** Whether a chat request offers tools: the agent's own turn, not a title or naming call. */
const offersTools = (r: ChatRequest): boolean => ((r as { tools?: unknown[] }).tools ?? []).length > 0;

/** The agents, as the model servers tell their turns apart. */
export type TurnReader = (requests: readonly unknown[]) => string[];

/** The last user message of each of the agent's own turns, in order. */
export const TURNS: Readonly<Record<'pi' | 'claude' | 'codex' | 'gemini' | 'opencode', TurnReader>> = {
  pi: (rs) => (rs as ChatRequest[]).filter(offersTools).map((r) => messageText(lastOfRole(r, 'user'))),
  opencode: (rs) => (rs as ChatRequest[]).filter(offersTools).map((r) => messageText(lastOfRole(r, 'user'))),
  claude: (rs) =>
    (rs as AnthropicRequest[]).filter(isClaudeTurn).map((r) => {
      const last = [...r.messages].reverse().find((m) => m.role === 'user');
      return anthropicText(last?.content);
    }),
  codex: (rs) =>
    (rs as ResponsesRequest[])
      .filter((r) => toolNames(r).length > 0)
      .map((r) => responsesText([...r.input].reverse().find((i) => i.role === 'user'))),
  gemini: (rs) => (rs as GeminiRequest[]).filter(isGeminiTurn).map(lastUserText),
};

/** How many of the turns carried `text` as (part of) their last user message. */
export function turnsWith(turns: readonly string[], text: string): number {
  return turns.filter((t) => t.includes(text)).length;
}

/** The session's prompts, as a phone lists them. */
export async function listedPrompts(fx: DaemonFixture, session: string): Promise<PromptRecord[]> {
  const res = await fx.d.get(`/sessions/${session}/prompts`);
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as PromptRecord[];
}

/** Sends one prompt; resolves with its record once it is decided (submitted, or the test fails saying how it ended). */
export async function promptDecided(
  fx: DaemonFixture,
  session: string,
  body: { text: string; id?: string },
  ms: number,
  want: PromptRecord['status'] = 'submitted',
): Promise<PromptRecord> {
  const res = await fx.json('POST', `/sessions/${session}/prompt`, body);
  expect(res.status, await res.clone().text()).toBe(202);
  const sent = (await res.json()) as PromptRecord;
  let seen: PromptRecord | undefined;
  await eventually(
    async () => {
      seen = (await listedPrompts(fx, session)).find((p) => p.id === sent.id);
      return seen !== undefined && seen.status !== 'queued' && seen.status !== 'typing';
    },
    ms,
    100,
    `prompt ${sent.id} decided`,
  );
  expect(seen?.status, `prompt ${sent.id}: ${JSON.stringify(seen)}`).toBe(want);
  return seen!;
}

/** What of `GET /sessions/:id` these tests read. */
interface SessionItem {
  agentState?: string | null;
  continue?: ContinueSchedule | null;
  stop?: Pick<Stop, 'id' | 'kind' | 'stoppedAt'> | null;
}

/** The session as `GET /sessions/:id` gives it. */
async function sessionItem(fx: DaemonFixture, session: string): Promise<SessionItem> {
  return (await (await fx.d.get(`/sessions/${session}`)).json()) as SessionItem;
}

/**
 * Whether the session's agent waits after a turn that ended at `since` (ISO, the daemon's clock)
 * or later: it is `awaiting-input` with the `done` stop of that end. An agent reports its turn a
 * moment after its prompt was submitted, so `awaiting-input` alone may still be the end of the
 * turn before; the stop's time tells them apart.
 */
export async function waitingSince(fx: DaemonFixture, session: string, since: string): Promise<boolean> {
  const item = await sessionItem(fx, session);
  return item.agentState === 'awaiting-input' && item.stop?.kind === 'done' && Date.parse(item.stop.stoppedAt) >= Date.parse(since);
}

/** The session's agent state, as the list says it. */
export async function agentState(fx: DaemonFixture, session: string): Promise<string | null> {
  return (await sessionItem(fx, session)).agentState ?? null;
}

/** The session's continue, as the list says it. */
export async function continueOf(fx: DaemonFixture, session: string): Promise<ContinueSchedule | null> {
  return (await sessionItem(fx, session)).continue ?? null;
}
