/**
 * A fake Gemini API for the real Gemini CLI: a local server on 127.0.0.1 that answers
 * `POST /v1beta/models/{model}:streamGenerateContent?alt=sse` with the reply the test scripts,
 * streamed as the API streams it (`data:` lines of `candidates[0].content.parts`, a
 * `finishReason` and `usageMetadata`), and `:generateContent` (not streamed) the same way. The
 * CLI's side calls (its model router, which wants `complexity_reasoning` / `complexity_score`
 * as JSON text, and session summaries) go through the same script: `isAgentTurn` tells them
 * apart. Any other path is answered 404 and recorded in `unknown`.
 *
 * Invariant: it only ever listens on 127.0.0.1 and answers only what the script says.
 */
import type { ServerResponse } from 'node:http';
import { readBody, sendJson, startEvents, startScriptedFake } from './fake-http.js';
import type { ModelRequest, ScriptedFake, ScriptedReply, ScriptOf } from './fake-http.js';

/** One part of a content: text, a function call or a function's response. */
export interface GeminiPart {
  readonly text?: string;
  readonly functionCall?: { readonly name: string; readonly args?: Record<string, unknown>; readonly id?: string };
  readonly functionResponse?: { readonly name: string; readonly response?: Record<string, unknown>; readonly id?: string };
}

export interface GeminiContent {
  readonly role?: string;
  readonly parts?: readonly GeminiPart[];
}

export interface GeminiRequest extends ModelRequest {
  readonly contents: readonly GeminiContent[];
  readonly tools?: readonly { readonly functionDeclarations?: readonly { readonly name: string }[] }[];
  readonly generationConfig?: { readonly responseJsonSchema?: unknown; readonly responseSchema?: unknown };
  /** Whether it came on the streaming path (set by the fake from the URL). */
  readonly stream?: boolean;
}

/** What the fake answers: text, then function calls. */
export interface GeminiReply extends ScriptedReply {
  readonly calls?: readonly { readonly name: string; readonly args: Record<string, unknown> }[];
}

export type GeminiScript = ScriptOf<GeminiRequest, GeminiReply>;

/** The fake; its `baseUrl` is GOOGLE_GEMINI_BASE_URL. */
export type FakeGemini = ScriptedFake<GeminiRequest, GeminiReply>;

/** Whether a request is a turn of the agent's own loop (it offers the shell tool), not a side call. */
export function isAgentTurn(req: GeminiRequest): boolean {
  return (req.tools ?? []).some((t) => (t.functionDeclarations ?? []).some((f) => f.name === 'run_shell_command'));
}

/** The text of a request's last user content (a prompt, or a function response's output). */
export function lastUserText(req: GeminiRequest): string {
  const last = [...req.contents].reverse().find((c) => c.role === 'user');
  return (last?.parts ?? []).map((p) => p.text ?? (p.functionResponse ? JSON.stringify(p.functionResponse.response ?? {}) : '')).join('');
}

/** The function responses of a request's last user content. */
export function functionResponses(req: GeminiRequest): NonNullable<GeminiPart['functionResponse']>[] {
  const last = req.contents.at(-1);
  if (!last || last.role !== 'user') return [];
  return (last.parts ?? []).flatMap((p) => (p.functionResponse ? [p.functionResponse] : []));
}

/** The answer to a side call the test did not script: the router's JSON, else a short text. */
export function sideReply(req: GeminiRequest): GeminiReply {
  const schema = JSON.stringify(req.generationConfig ?? {});
  if (schema.includes('complexity_score')) return { text: JSON.stringify({ complexity_reasoning: 'simple', complexity_score: 1 }) };
  if (schema.includes('"reasoning"') && schema.includes('"model_choice"'))
    return { text: JSON.stringify({ reasoning: 'simple', model_choice: 'flash' }) };
  return { text: 'Fake summary' };
}

function candidate(reply: GeminiReply, n: number): Record<string, unknown> {
  const parts: Record<string, unknown>[] = [];
  if (reply.text !== undefined && reply.text !== '') parts.push({ text: reply.text });
  (reply.calls ?? []).forEach((c, i) => parts.push({ functionCall: { name: c.name, args: c.args, id: `call_fake_${n}_${i}` } }));
  return { content: { role: 'model', parts }, finishReason: 'STOP', index: 0 };
}

/** A 429's body: the daily quota used up (the CLI gives up at once on a daily quota, and retries a per-minute one for minutes). */
const DAILY_QUOTA = {
  error: {
    code: 429,
    message: 'Quota exceeded for quota metric generate_content_requests per day',
    status: 'RESOURCE_EXHAUSTED',
    details: [
      {
        '@type': 'type.googleapis.com/google.rpc.QuotaFailure',
        violations: [{ quotaMetric: 'generate_content_requests', quotaId: 'GenerateRequestsPerDayPerProjectPerModel' }],
      },
    ],
  },
};

const USAGE = { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 };

function answer(res: ServerResponse, req: GeminiRequest, n: number, reply: GeminiReply): void {
  const body = { candidates: [candidate(reply, n)], usageMetadata: USAGE, modelVersion: req.model, responseId: `resp_fake_${n}` };
  if (!req.stream) return sendJson(res, 200, body);
  startEvents(res);
  res.write(`data: ${JSON.stringify(body)}\r\n\r\n`);
  res.end();
}

/** Starts the fake on 127.0.0.1 (a random port). */
export async function startFakeGemini(script: GeminiScript): Promise<FakeGemini> {
  const modelCall = /^\/v1beta\/models\/([^/:]+):(streamGenerateContent|generateContent)$/;
  // The model and the path are in the URL, not the body: the script sees them as `model` and `stream`.
  return startScriptedFake<GeminiRequest, GeminiReply>(
    (req, n) => script(req, n),
    {
      basePath: '',
      isModelCall: (method, path) => method === 'POST' && modelCall.test(path),
      answer,
      other: async (req, res, path) => {
        if (req.method === 'POST' && /:countTokens$/.test(path)) {
          await readBody(req);
          sendJson(res, 200, { totalTokens: 10 });
          return true;
        }
        return false;
      },
      errorBody: (message, status) =>
        status === 429 ? DAILY_QUOTA : { error: { code: status, message, status: status === 404 ? 'NOT_FOUND' : 'INTERNAL' } },
    },
    (path, body) => {
      const m = modelCall.exec(path);
      return m ? { ...body, model: m[1]!, stream: m[2] === 'streamGenerateContent' } : body;
    },
  );
}
