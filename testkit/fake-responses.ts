/**
 * A fake OpenAI Responses API for the real Codex: a local server on 127.0.0.1 that answers
 * `POST /v1/responses` with the reply the test scripts, streamed as the API streams it
 * (response.created, output_item.added / output_text.delta / output_item.done for a message,
 * function_call items with their arguments, response.completed). Codex reaches it through a
 * custom `model_providers` entry with `wire_api = "responses"`. The model list is answered;
 * any other path is answered 404 and recorded in `unknown`.
 *
 * Invariant: it only ever listens on 127.0.0.1 and answers only what the script says.
 */
import type { ServerResponse } from 'node:http';
import { namedEvent as sse, sendJson, startEvents, startScriptedFake } from './fake-http.js';
import type { ModelRequest, ScriptedFake, ScriptedReply, ScriptOf } from './fake-http.js';

/** One input item of a request (only the fields the tests look at). */
export interface ResponsesItem {
  readonly type?: string;
  readonly role?: string;
  readonly content?: unknown;
  readonly call_id?: string;
  readonly name?: string;
  readonly output?: unknown;
}

export interface ResponsesRequest extends ModelRequest {
  readonly input: readonly ResponsesItem[];
  readonly tools?: readonly { readonly type?: string; readonly name?: string }[];
}

/** What the fake answers: text, then function calls (each an output item). */
export interface ResponsesReply extends ScriptedReply {
  readonly calls?: readonly { readonly name: string; readonly arguments: Record<string, unknown> }[];
}

export type ResponsesScript = ScriptOf<ResponsesRequest, ResponsesReply>;

/** The fake; its `baseUrl` (`http://127.0.0.1:<port>/v1`) is the provider's base_url. */
export type FakeResponses = ScriptedFake<ResponsesRequest, ResponsesReply>;

/** The text of an item's content (string, or the text parts of an array), or its output. */
export function responsesText(item: ResponsesItem | undefined): string {
  const c = item?.content ?? item?.output;
  if (typeof c === 'string') return c;
  if (Array.isArray(c)) {
    return c.map((p: unknown) => (p && typeof p === 'object' && 'text' in p && typeof p.text === 'string' ? p.text : '')).join('');
  }
  return '';
}

/** The function_call_output items of a request (the results of the tools the fake called). */
export function callOutputs(req: ResponsesRequest): ResponsesItem[] {
  return req.input.filter((i) => i.type === 'function_call_output' || i.type === 'custom_tool_call_output');
}

/** The names of the function tools a request offers. */
export function toolNames(req: ResponsesRequest): string[] {
  return (req.tools ?? []).map((t) => t.name ?? t.type ?? '');
}

/**
 * A function call that runs `command` through Codex's own shell tool, whichever form the
 * request offers: `exec_command` (a `cmd` string), `shell_command` (a `command` string) or
 * `shell` (a `command` argv).
 */
export function shellCall(req: ResponsesRequest, command: string): { name: string; arguments: Record<string, unknown> } {
  const names = toolNames(req);
  if (names.includes('exec_command')) return { name: 'exec_command', arguments: { cmd: command } };
  if (names.includes('shell_command')) return { name: 'shell_command', arguments: { command } };
  if (names.includes('shell')) return { name: 'shell', arguments: { command: ['bash', '-lc', command] } };
  throw new Error(`the request offers no shell tool: ${names.join(', ')}`);
}

function messageEvents(res: ServerResponse, index: number, id: string, text: string): void {
  const item = { type: 'message', id, role: 'assistant', status: 'in_progress', content: [] };
  sse(res, 'response.output_item.added', { output_index: index, item });
  const part = { type: 'output_text', text: '', annotations: [] };
  sse(res, 'response.content_part.added', { item_id: id, output_index: index, content_index: 0, part });
  sse(res, 'response.output_text.delta', { item_id: id, output_index: index, content_index: 0, delta: text });
  sse(res, 'response.output_text.done', { item_id: id, output_index: index, content_index: 0, text });
  sse(res, 'response.content_part.done', { item_id: id, output_index: index, content_index: 0, part: { ...part, text } });
  const done = { ...item, status: 'completed', content: [{ type: 'output_text', text, annotations: [] }] };
  sse(res, 'response.output_item.done', { output_index: index, item: done });
}

function callEvents(res: ServerResponse, index: number, n: number, call: { name: string; arguments: Record<string, unknown> }): void {
  const id = `fc_fake_${n}_${index}`;
  const args = JSON.stringify(call.arguments);
  const item = { type: 'function_call', id, call_id: `call_fake_${n}_${index}`, name: call.name, arguments: '', status: 'in_progress' };
  sse(res, 'response.output_item.added', { output_index: index, item });
  sse(res, 'response.function_call_arguments.delta', { item_id: id, output_index: index, delta: args });
  sse(res, 'response.function_call_arguments.done', { item_id: id, output_index: index, arguments: args });
  sse(res, 'response.output_item.done', { output_index: index, item: { ...item, arguments: args, status: 'completed' } });
}

function answer(res: ServerResponse, req: ResponsesRequest, n: number, reply: ResponsesReply): void {
  startEvents(res);
  const response = { id: `resp_fake_${n}`, object: 'response', created_at: 0, model: req.model, output: [] };
  sse(res, 'response.created', { response: { ...response, status: 'in_progress' } });
  let index = 0;
  if (reply.text !== undefined && reply.text !== '') messageEvents(res, index++, `msg_fake_${n}`, reply.text);
  for (const call of reply.calls ?? []) callEvents(res, index++, n, call);
  const usage = {
    input_tokens: 10,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: 5,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: 15,
  };
  sse(res, 'response.completed', { response: { ...response, status: 'completed', usage } });
  res.end();
}

/** Starts the fake on 127.0.0.1 (a random port). */
export function startFakeResponses(script: ResponsesScript): Promise<FakeResponses> {
  return startScriptedFake(script, {
    basePath: '/v1',
    isModelCall: (method, path) => method === 'POST' && path === '/v1/responses',
    answer,
    other: (req, res, path) => {
      if (req.method !== 'GET' || path !== '/v1/models') return Promise.resolve(false);
      sendJson(res, 200, { object: 'list', data: [], models: [] });
      return Promise.resolve(true);
    },
    errorBody: (message) => ({ error: { message, type: 'fake_error' } }),
  });
}
