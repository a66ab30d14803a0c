/**
 * What the fake model servers share (fake-model.ts, fake-anthropic.ts, fake-responses.ts): a
 * server on 127.0.0.1 whose handler errors become a 500 with a JSON body, request bodies read
 * with a bound, server-sent events, and a close that drops open connections; and the scripted
 * model server built on it (requests recorded, replies held or failed as the script says).
 *
 * Invariant: it only ever listens on 127.0.0.1, on a port the system picks.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Largest request body a fake accepts (an agent's system prompt and tools are large). */
export const MAX_FAKE_BODY_BYTES = 32 * 1024 * 1024;

/** A request's body as text; rejects past MAX_FAKE_BODY_BYTES. */
export function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let size = 0;
    req.on('data', (d: Buffer) => {
      size += d.length;
      if (size > MAX_FAKE_BODY_BYTES) {
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

/** One named server-sent event whose data is `{type, ...data}` (the Anthropic and Responses form). */
export function namedEvent(res: ServerResponse, type: string, data: Record<string, unknown>): void {
  res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
}

/** Starts the stream of server-sent events. */
export function startEvents(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
}

/** A JSON answer. */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

export interface FakeHttp {
  readonly port: number;
  close(): Promise<void>;
}

/**
 * Serves `handle` on 127.0.0.1; an error it throws is answered as a 500 with `errorBody(message)`
 * (or ended, once the answer has begun).
 */
export async function startFakeHttp(
  handle: (req: IncomingMessage, res: ServerResponse, path: string) => Promise<void>,
  errorBody: (message: string) => unknown,
): Promise<FakeHttp> {
  const server = createServer((req, res) => {
    handle(req, res, (req.url ?? '').split('?')[0]!).catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify(errorBody(String(err))));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** What a model request holds in every API the fakes speak (only the fields the tests look at). */
export interface ModelRequest {
  readonly model: string;
  readonly stream?: boolean;
}

/** What a scripted reply holds in every fake: its text (before any tool calls), or how it fails or waits. */
export interface ScriptedReply {
  readonly text?: string;
  /** Answer with this HTTP status and an error body instead. */
  readonly status?: number;
  /** Headers the service sends with the answer: a rate limit's reset with a `status`, the usage windows' figures with a good one. */
  readonly headers?: Readonly<Record<string, string>>;
  /** With `status`: the body the service sends (its error's own shape); the fake's error body when absent. */
  readonly errorBody?: unknown;
  /** Resolves when the reply may be sent (a test holds a turn open with it). */
  readonly hold?: Promise<void>;
}

/** A test's script: the reply to the n-th model request (n counts from 1). */
export type ScriptOf<Req, Reply> = (req: Req, n: number) => Reply | Promise<Reply>;

/** A started fake model server. */
export interface ScriptedFake<Req, Reply> {
  /** `http://127.0.0.1:<port>` and the fake's base path: the API's base URL the agent is given. */
  readonly baseUrl: string;
  /** Every model request body, in arrival order. */
  readonly requests: Req[];
  /** Requests to paths the fake does not know: `METHOD path`. */
  readonly unknown: string[];
  /** Replaces the script. */
  setScript(script: ScriptOf<Req, Reply>): void;
  close(): Promise<void>;
}

/** What one fake's API looks like to the shared server. */
export interface ScriptedFakeApi<Req, Reply> {
  /** What follows the origin in `baseUrl` (`''` or `'/v1'`). */
  readonly basePath: string;
  /** Whether a request is a model call: its body is recorded and the script answers it. */
  isModelCall(method: string, path: string): boolean;
  /** Sends the script's reply (a held reply has been released, a `status` reply answered). */
  answer(res: ServerResponse, req: Req, n: number, reply: Reply): void;
  /** Answers a call the agent makes besides the model calls; false for a path it does not know. */
  other?(req: IncomingMessage, res: ServerResponse, path: string): Promise<boolean>;
  /** The JSON body of an error answer with this status (a scripted one, a 404 or a 500). */
  errorBody(message: string, status: number): unknown;
}

/**
 * Starts a fake model server on 127.0.0.1: each model call is recorded, then answered with the
 * script's reply once its `hold` resolves (as an error when it names a `status`); other known
 * calls are answered by `api.other`, and the rest are answered 404 and recorded in `unknown`.
 */
export async function startScriptedFake<Req, Reply extends ScriptedReply>(
  script: ScriptOf<Req, Reply>,
  api: ScriptedFakeApi<Req, Reply>,
  /** What the request's path adds to its body (an API that names the model in the URL). */
  withPath: (path: string, body: Req) => Req = (_path, body) => body,
): Promise<ScriptedFake<Req, Reply>> {
  let current = script;
  const requests: Req[] = [];
  const unknown: string[] = [];
  const http = await startFakeHttp(
    async (req, res, path) => {
      if (api.isModelCall(req.method ?? '', path)) {
        const body = withPath(path, JSON.parse(await readBody(req)) as Req);
        const n = requests.push(body);
        const reply = await current(body, n);
        if (reply.hold) await reply.hold;
        if (reply.status === undefined) {
          for (const [name, value] of Object.entries(reply.headers ?? {})) res.setHeader(name, value);
          api.answer(res, body, n, reply);
        } else {
          const errorBody = reply.errorBody ?? api.errorBody(`fake model error ${reply.status}`, reply.status);
          res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers }).end(JSON.stringify(errorBody));
        }
      } else if (!(await api.other?.(req, res, path))) {
        unknown.push(`${req.method} ${req.url}`);
        sendJson(res, 404, api.errorBody('not found', 404));
      }
    },
    (message) => api.errorBody(message, 500),
  );
  return {
    baseUrl: `http://127.0.0.1:${http.port}${api.basePath}`,
    requests,
    unknown,
    setScript: (s) => {
      current = s;
    },
    close: () => http.close(),
  };
}
