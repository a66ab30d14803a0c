/**
 * A fake model for the real agent: a local OpenAI-compatible chat-completions server on
 * 127.0.0.1 that answers every request with a streamed (SSE) reply the test scripts: text,
 * tool calls, or an HTTP error. Every request body is recorded, so a test can check what the
 * agent sent (the naming call's prompt, the model it asked for).
 *
 * Invariant: it only ever listens on 127.0.0.1 and answers only what the script says; a reply
 * can be held until the test releases it, so a state can be observed without sleeping.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One chat message as the agent sends it (only the fields the tests look at). */
export interface ChatMessage {
  readonly role: string;
  readonly content?: unknown;
  readonly tool_call_id?: string;
}

export interface ChatRequest {
  readonly model: string;
  readonly messages: readonly ChatMessage[];
  readonly stream?: boolean;
}

export interface FakeToolCall {
  readonly name: string;
  readonly arguments: Record<string, unknown>;
}

/** What the fake model answers. */
export interface FakeReply {
  readonly text?: string;
  readonly toolCalls?: readonly FakeToolCall[];
  /** Answer with this HTTP status and an error body instead of a stream. */
  readonly status?: number;
  /** Resolves when the reply may be sent (a test holds a turn open with it). */
  readonly hold?: Promise<void>;
}

export type FakeScript = (req: ChatRequest, n: number) => FakeReply | Promise<FakeReply>;

export interface FakeModel {
  /** `http://127.0.0.1:<port>/v1`: the provider's baseUrl. */
  readonly baseUrl: string;
  /** Every request body, in arrival order. */
  readonly requests: ChatRequest[];
  /** Replaces the script. */
  setScript(script: FakeScript): void;
  close(): Promise<void>;
}

/** Largest request body the fake accepts. */
const MAX_BODY_BYTES = 16 * 1024 * 1024;

/** The text of a message's content (string, or the text parts of an array). */
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

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let size = 0;
    req.on('data', (d: Buffer) => {
      size += d.length;
      if (size > MAX_BODY_BYTES) {
        reject(new Error('request body too large'));
        req.destroy();
        return;
      }
      parts.push(d);
    });
    req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    req.on('error', reject);
  });
}

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

async function answer(res: ServerResponse, req: ChatRequest, n: number, reply: FakeReply): Promise<void> {
  if (reply.hold) await reply.hold;
  if (reply.status !== undefined) {
    res.writeHead(reply.status, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { message: `fake model error ${reply.status}`, type: 'fake_error' } }));
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
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

/** Starts the fake model on 127.0.0.1 (a random port). */
export async function startFakeModel(script: FakeScript): Promise<FakeModel> {
  let current = script;
  const requests: ChatRequest[] = [];
  const server: Server = createServer((req, res) => {
    void (async () => {
      try {
        if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
          res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not found"}}');
          return;
        }
        const body = JSON.parse(await readBody(req)) as ChatRequest;
        const n = requests.push(body);
        await answer(res, body, n, await current(body, n));
      } catch (err) {
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: String(err) } }));
      }
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    setScript: (s) => {
      current = s;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
