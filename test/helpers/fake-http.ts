/**
 * What the fake model servers share (fake-model.ts, fake-anthropic.ts, fake-responses.ts): a
 * server on 127.0.0.1 whose handler errors become a 500 with a JSON body, request bodies read
 * with a bound, server-sent events, and a close that drops open connections.
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
