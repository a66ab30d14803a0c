/**
 * A small HTTP/2 client for APNs: `POST /3/device/<token>` on one long-lived connection per
 * endpoint (sandbox and production at once), as Apple asks providers to do.
 *
 * Invariant: a request always settles, within REQUEST_TIMEOUT_MS, with the status and APNs'
 * `reason`, or with status 0 and the network error; it never throws. A connection that
 * closes or errs is dropped and the next request opens a new one.
 */
import { connect, constants, type ClientHttp2Session } from 'node:http2';
import { rootCertificates } from 'node:tls';

/** How long one request may take before it counts as failed. */
export const REQUEST_TIMEOUT_MS = 10_000;
/** The most of a reply body kept (APNs' bodies are a few dozen bytes). */
export const MAX_REPLY_BYTES = 4096;
/** APNs' limit on an alert payload. */
export const MAX_PAYLOAD_BYTES = 4096;

/** The headers of one push, besides authorization. */
export interface ApnsHeaders {
  readonly topic: string;
  /** A newer push with the same id replaces the older on the lock screen (alerts only). */
  readonly collapseId?: string;
  /** Unix seconds after which APNs drops the notification if it could not be delivered. */
  readonly expiration: number;
  /** `alert` (the default) or `liveactivity` (docs/push.md "Live Activity"). */
  readonly pushType?: 'alert' | 'liveactivity';
  /** 10 (the default): at once; 5: when convenient for the device. */
  readonly priority?: 5 | 10;
}

/** The outcome of one request: status 0 is a network failure. */
export interface ApnsReply {
  readonly status: number;
  readonly reason: string | null;
  readonly apnsId: string | null;
}

export interface ApnsClientOptions {
  /** Extra certificate authorities to trust (PEM), besides the system's: a TLS-inspecting proxy. */
  readonly ca?: string;
}

export class ApnsClient {
  private readonly sessions = new Map<string, ClientHttp2Session>();
  private closed = false;

  constructor(private readonly opts: ApnsClientOptions = {}) {}

  /** Sends one alert; `origin` is the endpoint's base URL (`https://api.push.apple.com`). */
  send(origin: string, deviceToken: string, jwt: string, headers: ApnsHeaders, payload: Buffer): Promise<ApnsReply> {
    if (this.closed) return Promise.resolve({ status: 0, reason: 'the push client is closed', apnsId: null });
    let session: ClientHttp2Session;
    try {
      session = this.session(origin);
    } catch (err) {
      return Promise.resolve({ status: 0, reason: String((err as Error).message), apnsId: null });
    }
    return new Promise((resolve) => {
      let settled = false;
      const done = (reply: ApnsReply) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(reply);
      };
      const req = session.request({
        [constants.HTTP2_HEADER_METHOD]: 'POST',
        [constants.HTTP2_HEADER_PATH]: `/3/device/${encodeURIComponent(deviceToken)}`,
        authorization: `bearer ${jwt}`,
        'apns-topic': headers.topic,
        'apns-push-type': headers.pushType ?? 'alert',
        'apns-priority': String(headers.priority ?? 10),
        ...(headers.collapseId !== undefined ? { 'apns-collapse-id': headers.collapseId } : {}),
        'apns-expiration': String(headers.expiration),
        'content-type': 'application/json',
        'content-length': String(payload.length),
      });
      const timer = setTimeout(() => {
        req.close(constants.NGHTTP2_CANCEL);
        done({ status: 0, reason: `no reply within ${REQUEST_TIMEOUT_MS / 1000} s`, apnsId: null });
      }, REQUEST_TIMEOUT_MS);
      let status = 0;
      let apnsId: string | null = null;
      const body: Buffer[] = [];
      let size = 0;
      req.on('response', (h) => {
        status = Number(h[constants.HTTP2_HEADER_STATUS] ?? 0);
        const id = h['apns-id'];
        apnsId = typeof id === 'string' ? id : null;
      });
      req.on('data', (chunk: Buffer) => {
        if (size >= MAX_REPLY_BYTES) return;
        body.push(chunk);
        size += chunk.length;
      });
      req.on('end', () => done({ status, reason: replyReason(Buffer.concat(body).subarray(0, MAX_REPLY_BYTES)), apnsId }));
      req.on('error', (err: Error) => done({ status: 0, reason: err.message, apnsId: null }));
      req.end(payload);
    });
  }

  /** Closes every connection; later sends fail at once. */
  close(): void {
    this.closed = true;
    for (const s of this.sessions.values()) s.close();
    this.sessions.clear();
  }

  private session(origin: string): ClientHttp2Session {
    const open = this.sessions.get(origin);
    if (open && !open.closed && !open.destroyed) return open;
    const s = this.opts.ca !== undefined ? connect(origin, { ca: [...rootCertificates, this.opts.ca] }) : connect(origin);
    const drop = () => {
      if (this.sessions.get(origin) === s) this.sessions.delete(origin);
    };
    s.on('error', drop);
    s.on('close', drop);
    s.on('goaway', drop);
    // An idle push connection must not keep the daemon alive at shutdown.
    s.unref();
    this.sessions.set(origin, s);
    return s;
  }
}

/** APNs' `{"reason": "..."}`, or null. */
function replyReason(body: Buffer): string | null {
  if (body.length === 0) return null;
  try {
    const parsed = JSON.parse(body.toString('utf8')) as { reason?: unknown };
    return typeof parsed.reason === 'string' ? parsed.reason : null;
  } catch {
    return null;
  }
}
