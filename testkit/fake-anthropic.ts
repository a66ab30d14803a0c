/**
 * A fake Anthropic Messages API for the real Claude Code: a local server on 127.0.0.1 that
 * answers `POST /v1/messages` with the reply the test scripts, streamed as the API streams it
 * (message_start, content_block_start/delta/stop for text and tool_use, message_delta with the
 * stop reason, message_stop), or as one JSON message when the request does not stream. Claude
 * Code's other calls at start-up (count_tokens, the model list) get plausible answers; any
 * other path is answered 404 and recorded in `unknown`, so a test can see what it was asked.
 *
 * Invariant: it only ever listens on 127.0.0.1 and answers only what the script says.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { namedEvent as sse, readBody, sendJson, startEvents, startScriptedFake } from './fake-http.js';
import type { ModelRequest, ScriptedFake, ScriptedReply, ScriptOf } from './fake-http.js';

/** One message of a request (only the fields the tests look at). */
export interface AnthropicMessage {
  readonly role: 'user' | 'assistant';
  readonly content: string | readonly AnthropicBlock[];
}

/** A content block: text, tool_use, tool_result (with its own content), or others. */
export interface AnthropicBlock {
  readonly type: string;
  readonly text?: string;
  readonly id?: string;
  readonly name?: string;
  readonly tool_use_id?: string;
  readonly content?: string | readonly AnthropicBlock[];
  readonly is_error?: boolean;
}

export interface AnthropicRequest extends ModelRequest {
  readonly messages: readonly AnthropicMessage[];
  readonly tools?: readonly { readonly name: string }[];
  readonly max_tokens?: number;
}

/** What the fake answers: text, then tool calls (each becomes a tool_use block). */
export interface AnthropicReply extends ScriptedReply {
  readonly toolUses?: readonly { readonly name: string; readonly input: Record<string, unknown> }[];
}

export type AnthropicScript = ScriptOf<AnthropicRequest, AnthropicReply>;

/** The fake; its `baseUrl` is ANTHROPIC_BASE_URL (the client adds `/v1/...`). */
export type FakeAnthropic = ScriptedFake<AnthropicRequest, AnthropicReply>;

/** The model list answered on `GET /v1/models`. */
const MODELS = ['claude-sonnet-4-5', 'claude-opus-4-1', 'claude-haiku-4-5'];

/** Whether a request is a turn of the agent's own loop (it offers the Bash tool), not a side call. */
export function isAgentTurn(req: AnthropicRequest): boolean {
  return (req.tools ?? []).some((t) => t.name === 'Bash');
}

/**
 * The service's answer at the subscription's usage limit: 429 with the limit's headers (the
 * five-hour window, reset at `reset`, epoch seconds), the one reply the stops tests and bench share.
 */
export function usageLimitReply(reset: number): AnthropicReply {
  return {
    status: 429,
    headers: {
      'anthropic-ratelimit-unified-status': 'rejected',
      'anthropic-ratelimit-unified-reset': String(reset),
      'anthropic-ratelimit-unified-representative-claim': 'five_hour',
    },
    errorBody: { type: 'error', error: { type: 'rate_limit_error', message: 'Rate limited' } },
  };
}

/** The text of a block list or string (tool results' nested content included). */
export function anthropicText(content: string | readonly AnthropicBlock[] | undefined): string {
  if (content === undefined) return '';
  if (typeof content === 'string') return content;
  return content.map((b) => (b.text ?? '') + (b.content !== undefined ? anthropicText(b.content) : '')).join('');
}

/** The tool_result blocks of a request's last user message. */
export function toolResults(req: AnthropicRequest): AnthropicBlock[] {
  const last = req.messages.at(-1);
  if (!last || last.role !== 'user' || typeof last.content === 'string') return [];
  return last.content.filter((b) => b.type === 'tool_result');
}

/** The reply's content blocks, as a finished message holds them. */
function blocks(reply: AnthropicReply, n: number): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  if (reply.text !== undefined && reply.text !== '') out.push({ type: 'text', text: reply.text });
  (reply.toolUses ?? []).forEach((t, i) => out.push({ type: 'tool_use', id: `toolu_fake_${n}_${i}`, name: t.name, input: t.input }));
  return out;
}

function stream(res: ServerResponse, req: AnthropicRequest, n: number, reply: AnthropicReply): void {
  const content = blocks(reply, n);
  const stopReason = (reply.toolUses ?? []).length > 0 ? 'tool_use' : 'end_turn';
  startEvents(res);
  const message = { id: `msg_fake_${n}`, type: 'message', role: 'assistant', model: req.model, content: [], stop_reason: null };
  sse(res, 'message_start', { message: { ...message, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 1 } } });
  content.forEach((block, index) => {
    if (block.type === 'text') {
      sse(res, 'content_block_start', { index, content_block: { type: 'text', text: '' } });
      sse(res, 'content_block_delta', { index, delta: { type: 'text_delta', text: block.text } });
    } else {
      sse(res, 'content_block_start', { index, content_block: { ...block, input: {} } });
      sse(res, 'content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) } });
    }
    sse(res, 'content_block_stop', { index });
  });
  sse(res, 'message_delta', { delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: 5 } });
  sse(res, 'message_stop', {});
  res.end();
}

function answer(res: ServerResponse, req: AnthropicRequest, n: number, reply: AnthropicReply): void {
  if (req.stream) return stream(res, req, n, reply);
  const stopReason = (reply.toolUses ?? []).length > 0 ? 'tool_use' : 'end_turn';
  const body = { id: `msg_fake_${n}`, type: 'message', role: 'assistant', model: req.model, content: blocks(reply, n) };
  sendJson(res, 200, { ...body, stop_reason: stopReason, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 5 } });
}

/** Claude Code's calls at start-up besides the model calls. */
async function startupCall(req: IncomingMessage, res: ServerResponse, path: string): Promise<boolean> {
  if (req.method === 'POST' && path === '/v1/messages/count_tokens') {
    await readBody(req);
    sendJson(res, 200, { input_tokens: 100 });
  } else if (req.method === 'GET' && path === '/v1/models') {
    sendJson(res, 200, {
      data: MODELS.map((id) => ({ type: 'model', id, display_name: id, created_at: '2025-01-01T00:00:00Z' })),
      has_more: false,
    });
  } else return false;
  return true;
}

/** Starts the fake on 127.0.0.1 (a random port). */
export function startFakeAnthropic(script: AnthropicScript): Promise<FakeAnthropic> {
  return startScriptedFake(script, {
    basePath: '',
    isModelCall: (method, path) => method === 'POST' && path === '/v1/messages',
    answer,
    other: startupCall,
    errorBody: (message, status) => ({ type: 'error', error: { type: status === 404 ? 'not_found_error' : 'api_error', message } }),
  });
}
