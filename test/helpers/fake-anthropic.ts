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
import type { ServerResponse } from 'node:http';
import { namedEvent as sse, readBody, sendJson, startEvents, startFakeHttp } from './fake-http.js';

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

export interface AnthropicRequest {
  readonly model: string;
  readonly messages: readonly AnthropicMessage[];
  readonly tools?: readonly { readonly name: string }[];
  readonly stream?: boolean;
  readonly max_tokens?: number;
}

/** What the fake answers: text, then tool calls (each becomes a tool_use block). */
export interface AnthropicReply {
  readonly text?: string;
  readonly toolUses?: readonly { readonly name: string; readonly input: Record<string, unknown> }[];
  /** Answer with this HTTP status and an error body instead. */
  readonly status?: number;
  /** Resolves when the reply may be sent (a test holds a turn open with it). */
  readonly hold?: Promise<void>;
}

export type AnthropicScript = (req: AnthropicRequest, n: number) => AnthropicReply | Promise<AnthropicReply>;

export interface FakeAnthropic {
  /** `http://127.0.0.1:<port>`: ANTHROPIC_BASE_URL (the client adds `/v1/...`). */
  readonly baseUrl: string;
  /** Every `/v1/messages` body, in arrival order. */
  readonly requests: AnthropicRequest[];
  /** Requests to paths the fake does not know: `METHOD path`. */
  readonly unknown: string[];
  setScript(script: AnthropicScript): void;
  close(): Promise<void>;
}

/** The model list answered on `GET /v1/models`. */
const MODELS = ['claude-sonnet-4-5', 'claude-opus-4-1', 'claude-haiku-4-5'];

/** Whether a request is a turn of the agent's own loop (it offers the Bash tool), not a side call. */
export function isAgentTurn(req: AnthropicRequest): boolean {
  return (req.tools ?? []).some((t) => t.name === 'Bash');
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

async function answer(res: ServerResponse, req: AnthropicRequest, n: number, reply: AnthropicReply): Promise<void> {
  if (reply.hold) await reply.hold;
  if (reply.status !== undefined) {
    res.writeHead(reply.status, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ type: 'error', error: { type: 'api_error', message: `fake model error ${reply.status}` } }));
    return;
  }
  if (req.stream) return stream(res, req, n, reply);
  const stopReason = (reply.toolUses ?? []).length > 0 ? 'tool_use' : 'end_turn';
  const body = { id: `msg_fake_${n}`, type: 'message', role: 'assistant', model: req.model, content: blocks(reply, n) };
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ ...body, stop_reason: stopReason, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 5 } }));
}

/** Starts the fake on 127.0.0.1 (a random port). */
export async function startFakeAnthropic(script: AnthropicScript): Promise<FakeAnthropic> {
  let current = script;
  const requests: AnthropicRequest[] = [];
  const unknown: string[] = [];
  const http = await startFakeHttp(
    async (req, res, path) => {
      if (req.method === 'POST' && path === '/v1/messages') {
        const body = JSON.parse(await readBody(req)) as AnthropicRequest;
        const n = requests.push(body);
        await answer(res, body, n, await current(body, n));
      } else if (req.method === 'POST' && path === '/v1/messages/count_tokens') {
        await readBody(req);
        sendJson(res, 200, { input_tokens: 100 });
      } else if (req.method === 'GET' && path === '/v1/models') {
        sendJson(res, 200, {
          data: MODELS.map((id) => ({ type: 'model', id, display_name: id, created_at: '2025-01-01T00:00:00Z' })),
          has_more: false,
        });
      } else {
        unknown.push(`${req.method} ${req.url}`);
        sendJson(res, 404, { type: 'error', error: { type: 'not_found_error', message: 'not found' } });
      }
    },
    (message) => ({ type: 'error', error: { type: 'api_error', message } }),
  );
  return {
    baseUrl: `http://127.0.0.1:${http.port}`,
    requests,
    unknown,
    setScript: (s) => {
      current = s;
    },
    close: () => http.close(),
  };
}
