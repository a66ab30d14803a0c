/**
 * A fake chat-completions model for the real pi and opencode: a local OpenAI-compatible server on
 * 127.0.0.1 that answers every request with a streamed (SSE) reply a script gives: text, tool
 * calls, or an HTTP error. Every request body is recorded. The benchmarks' and the tests' fake
 * (test/helpers/fake-model.ts gives it the tests' names): bench/ may not import test/.
 *
 * Invariant: it only ever listens on 127.0.0.1 and answers only what the script says.
 */
import type { ServerResponse } from 'node:http';
import { startEvents, startScriptedFake } from './fake-http.js';
import type { ModelRequest, ScriptedFake, ScriptedReply, ScriptOf } from './fake-http.js';

/** One chat message as the agent sends it (only the fields read here). */
export interface ChatMessage {
  readonly role: string;
  readonly content?: unknown;
  readonly tool_call_id?: string;
}

export interface ChatRequest extends ModelRequest {
  readonly messages: readonly ChatMessage[];
  readonly tools?: readonly unknown[];
}

export interface ChatToolCall {
  readonly name: string;
  readonly arguments: Record<string, unknown>;
}

/** What the fake answers (a `status` answers with an error body instead of a stream). */
export interface ChatReply extends ScriptedReply {
  readonly toolCalls?: readonly ChatToolCall[];
}

export type ChatScript = ScriptOf<ChatRequest, ChatReply>;

/** The fake; its `baseUrl` (`http://127.0.0.1:<port>/v1`) is the provider's baseUrl. */
export type FakeChat = ScriptedFake<ChatRequest, ChatReply>;

/** The text of a message's content (a string, or the text parts of an array). */
export function messageText(message: ChatMessage | undefined): string {
  const c = message?.content;
  if (typeof c === 'string') return c;
  if (Array.isArray(c)) {
    return c.map((p: unknown) => (p && typeof p === 'object' && 'text' in p && typeof p.text === 'string' ? p.text : '')).join('');
  }
  return '';
}

/** The last message of a request with the given role. */
export function lastOfRole(req: ChatRequest, role: string): ChatMessage | undefined {
  for (let i = req.messages.length - 1; i >= 0; i--) if (req.messages[i]!.role === role) return req.messages[i];
  return undefined;
}

/** Whether a request offers tools: the agent's own turn, not a title or naming call. */
export const offersTools = (req: ChatRequest): boolean => (req.tools ?? []).length > 0;

function chunk(
  res: ServerResponse,
  model: string,
  n: number,
  choice: Record<string, unknown> | null,
  extra: Record<string, unknown> = {},
): void {
  const body = {
    id: `fake-${n}`,
    object: 'chat.completion.chunk',
    created: 0,
    model,
    choices: choice ? [{ index: 0, ...choice }] : [],
    ...extra,
  };
  res.write(`data: ${JSON.stringify(body)}\n\n`);
}

function answer(res: ServerResponse, req: ChatRequest, n: number, reply: ChatReply): void {
  startEvents(res);
  chunk(res, req.model, n, { delta: { role: 'assistant', content: '' }, finish_reason: null });
  if (reply.text !== undefined && reply.text !== '') chunk(res, req.model, n, { delta: { content: reply.text }, finish_reason: null });
  const calls = reply.toolCalls ?? [];
  calls.forEach((call, i) => {
    const fn = { name: call.name, arguments: JSON.stringify(call.arguments) };
    chunk(res, req.model, n, {
      delta: { tool_calls: [{ index: i, id: `call_${n}_${i}`, type: 'function', function: fn }] },
      finish_reason: null,
    });
  });
  chunk(res, req.model, n, { delta: {}, finish_reason: calls.length > 0 ? 'tool_calls' : 'stop' });
  chunk(res, req.model, n, null, { usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } });
  res.end('data: [DONE]\n\n');
}

/** Starts the fake on 127.0.0.1 (a random port). */
export function startFakeChat(script: ChatScript): Promise<FakeChat> {
  return startScriptedFake(script, {
    basePath: '/v1',
    isModelCall: (method, path) => method === 'POST' && path.endsWith('/chat/completions'),
    answer,
    errorBody: (message) => ({ error: { message, type: 'fake_error' } }),
  });
}
