/**
 * The phone's workbench calls, as a client makes them (docs/client.md "Uploads, history and
 * search"): hand a file to the agent, read the history back by position, search it. Over https
 * they trust exactly the pinned certificate (pinning.ts), as the stream does.
 *
 * Invariant: a refusal is a `WorkbenchError` with the server's code and message, never a
 * silently empty answer.
 */
import http from 'node:http';
import https from 'node:https';
import type { PinnedTlsOptions } from './pinning.js';

/**
 * A refused request: the HTTP status and the server's `{error, message}`. A client's view of the
 * wire, already translated by the daemon's transport: kept apart from DomainError because it
 * carries the wire's status and code (and `held` of a 416), not a registry code.
 */
export class WorkbenchError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** For a 416: the position ranges the buffer holds. */
    readonly held: readonly { from: number; to: number }[] = [],
  ) {
    super(message);
    this.name = 'WorkbenchError';
  }
}

export interface WorkbenchOptions {
  /** `http(s)://host:port` of the sidecar. */
  readonly baseUrl: string;
  readonly token: string;
  /** The pinned certificate for https. */
  readonly tls?: PinnedTlsOptions;
}

/** A stored upload, as the server answers it. */
export interface Upload {
  readonly path: string;
  readonly bytes: number;
  readonly name: string;
}

/** A page of history: the bytes of positions `[from, to)`, and where the asked range goes on. */
export interface HistoryPage {
  readonly from: number;
  readonly to: number;
  readonly next: number | null;
  readonly data: Buffer;
  /** `writing`, or why the buffer is not (`stopped`, `off`, `none`). */
  readonly buffer: string;
}

export interface SearchMatch {
  readonly seq: number | null;
  readonly line: string;
  readonly before: string[];
  readonly after: string[];
}

export interface SearchAnswer {
  readonly matches: SearchMatch[];
  readonly complete: boolean;
  readonly buffer: { state: string; reason: string | null };
}

interface Answer {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: Buffer;
}

export class WorkbenchClient {
  constructor(private readonly opts: WorkbenchOptions) {}

  private request(method: string, path: string, body?: Buffer, contentType?: string): Promise<Answer> {
    const url = new URL(path, this.opts.baseUrl);
    const secure = url.protocol === 'https:';
    const send = secure ? https.request : http.request;
    return new Promise((resolve, reject) => {
      const req = send(
        url,
        {
          method,
          agent: false,
          ...(secure && this.opts.tls ? { ca: this.opts.tls.ca, checkServerIdentity: this.opts.tls.checkServerIdentity } : {}),
          headers: {
            authorization: `Bearer ${this.opts.token}`,
            ...(body ? { 'content-type': contentType ?? 'application/octet-stream', 'content-length': String(body.length) } : {}),
          },
        },
        (res) => {
          const parts: Buffer[] = [];
          res.on('data', (d: Buffer) => parts.push(d));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(parts) }));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  }

  private static refusal(a: Answer): WorkbenchError {
    let parsed: { error?: string; message?: string; held?: { from: number; to: number }[] } = {};
    try {
      parsed = JSON.parse(a.body.toString('utf8')) as typeof parsed;
    } catch {
      // Not JSON: the status says it all.
    }
    return new WorkbenchError(a.status, parsed.error ?? `http-${a.status}`, parsed.message ?? `HTTP ${a.status}`, parsed.held ?? []);
  }

  /** Uploads a file for the session; `insert` types its path on the agent's input line. */
  async upload(session: string, name: string, data: Buffer, opts: { insert?: boolean; contentType?: string } = {}): Promise<Upload> {
    const q = new URLSearchParams({ name, ...(opts.insert ? { insert: 'true' } : {}) });
    const a = await this.request('POST', `/sessions/${encodeURIComponent(session)}/files?${q.toString()}`, data, opts.contentType);
    if (a.status !== 201) throw WorkbenchClient.refusal(a);
    return JSON.parse(a.body.toString('utf8')) as Upload;
  }

  /** One page of the history from `from` (to `to`, or the end). */
  async history(session: string, from: number, to?: number): Promise<HistoryPage> {
    const q = new URLSearchParams({ from: String(from), ...(to !== undefined ? { to: String(to) } : {}) });
    const a = await this.request('GET', `/sessions/${encodeURIComponent(session)}/history?${q.toString()}`);
    if (a.status !== 200) throw WorkbenchClient.refusal(a);
    const next = a.headers['x-tether-next'];
    return {
      from: Number(a.headers['x-tether-from']),
      to: Number(a.headers['x-tether-to']),
      next: typeof next === 'string' ? Number(next) : null,
      data: a.body,
      buffer: String(a.headers['x-tether-buffer'] ?? 'writing'),
    };
  }

  /** Every page of the history from `from` to `to` (or the end), in order. */
  async *historyPages(session: string, from: number, to?: number): AsyncGenerator<HistoryPage> {
    for (let at: number | null = from; at !== null;) {
      const page = await this.history(session, at, to);
      yield page;
      at = page.next;
    }
  }

  /** Lines of the history that contain `q` (any case), newest first. */
  async search(session: string, q: string, limit?: number): Promise<SearchAnswer> {
    const query = new URLSearchParams({ q, ...(limit !== undefined ? { limit: String(limit) } : {}) });
    const a = await this.request('GET', `/sessions/${encodeURIComponent(session)}/search?${query.toString()}`);
    if (a.status !== 200) throw WorkbenchClient.refusal(a);
    return JSON.parse(a.body.toString('utf8')) as SearchAnswer;
  }
}
