/**
 * How a raw WebSocket to the daemon opened, for tests that look under the reference client:
 * whether the upgrade succeeded, or the HTTP status it was refused with.
 */
import type WebSocket from 'ws';

export interface RawOpening {
  /** True once open; false when the socket closed before opening (refused, or dropped). */
  readonly opened: Promise<boolean>;
  /** The HTTP status of a refused upgrade (the socket is dropped then); null otherwise. */
  readonly status: () => number | null;
}

/** Watches `ws` open; its errors show as the outcome above, never as an unhandled event. */
export function watchOpening(ws: WebSocket): RawOpening {
  let status: number | null = null;
  ws.on('unexpected-response', (_req, res) => {
    status = res.statusCode ?? null;
    ws.terminate();
  });
  ws.on('error', () => undefined);
  const opened = new Promise<boolean>((resolve) => {
    ws.once('open', () => resolve(true));
    ws.once('close', () => resolve(false));
  });
  return { opened, status: () => status };
}
