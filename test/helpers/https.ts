/**
 * HTTPS requests as a paired phone makes them: to a host and port from the pairing URL,
 * trusting exactly the pinned certificate (src/reference-client/pinning.ts), with a bearer token.
 */
import https from 'node:https';
import type { PinnedTlsOptions } from '../../src/reference-client/pinning.js';

export interface PinnedResponse {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly text: string;
  json<T = Record<string, unknown>>(): T;
}

export interface PinnedRequest {
  readonly method?: string;
  readonly token?: string;
  readonly body?: unknown;
  /** A source address of the loopback range (127.0.0.x): rate limits count per address. */
  readonly localAddress?: string;
}

export function pinnedRequest(
  host: string,
  port: number,
  path: string,
  tls: PinnedTlsOptions,
  req: PinnedRequest = {},
): Promise<PinnedResponse> {
  const body = req.body === undefined ? undefined : Buffer.from(JSON.stringify(req.body));
  return new Promise((resolve, reject) => {
    const r = https.request(
      {
        host,
        port,
        path,
        method: req.method ?? 'GET',
        ca: tls.ca,
        checkServerIdentity: tls.checkServerIdentity,
        agent: false,
        ...(req.localAddress ? { localAddress: req.localAddress } : {}),
        headers: {
          ...(req.token ? { authorization: `Bearer ${req.token}` } : {}),
          ...(body ? { 'content-type': 'application/json', 'content-length': String(body.length) } : {}),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: <T>() => JSON.parse(text) as T }));
      },
    );
    r.on('error', reject);
    r.end(body);
  });
}
