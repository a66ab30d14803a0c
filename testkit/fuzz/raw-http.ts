/**
 * HTTP/1.1 spoken by hand on a raw TCP or TLS socket, for the fuzzer: it writes exactly the
 * bytes it is given (a request line no client library would send, duplicate or folded headers,
 * a Content-Length that lies) and reads back whatever the server answers, response by response.
 *
 * Invariant: an exchange always ends: when the server closes, when it has been quiet for a while
 * after a request that may never be whole (`quietMs`), or at its bound, reported as `hung`. The
 * socket is never half-closed: node's HTTP server drops the requests in flight of a client that
 * half-closes, so a half-close would hide the answers the fuzzer wants to read.
 */
import net from 'node:net';
import tls from 'node:tls';

/** Where the daemon listens, and how a peer reaches it. */
export interface Peer {
  readonly host: string;
  readonly port: number;
  readonly tls: boolean;
  /** The source address (127.0.0.x): the pairing route counts attempts per address. */
  readonly localAddress?: string;
}

/** One HTTP response as read off the wire. */
export interface RawResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
}

export interface RawExchange {
  readonly responses: readonly RawResponse[];
  /** Bytes after the last whole response (a 101's WebSocket stream, or a cut-off answer). */
  readonly rest: Buffer;
  /** The socket failed (a reset) rather than closing cleanly; its message. */
  readonly error: string | null;
  /** Neither answered nor closed within the bound. */
  readonly hung: boolean;
}

/** The last TLS session per daemon port: resumed as a phone does, it spares a full handshake per case. */
const sessions = new Map<number, Buffer>();

/** Opens a socket to the peer (TLS without checking the self-signed certificate: the fuzzer is not a phone). */
export function connectPeer(peer: Peer): net.Socket {
  const base = { host: peer.host, port: peer.port, ...(peer.localAddress ? { localAddress: peer.localAddress } : {}) };
  if (!peer.tls) return net.connect(base);
  const last = sessions.get(peer.port);
  const socket = tls.connect({ ...base, rejectUnauthorized: false, ...(last ? { session: last } : {}) });
  socket.on('session', (s: Buffer) => sessions.set(peer.port, s));
  return socket;
}

/** Serializes a request: the line, the headers as given (order and repeats kept), the body. */
export function httpRequest(method: string, target: string, headers: readonly (readonly [string, string])[], body?: Buffer): Buffer {
  const head = `${method} ${target} HTTP/1.1\r\n${headers.map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n`;
  return body ? Buffer.concat([Buffer.from(head, 'latin1'), body]) : Buffer.from(head, 'latin1');
}

const CRLFCRLF = Buffer.from('\r\n\r\n');

/** Decodes a chunked body from `buf`; null while incomplete. */
function dechunk(buf: Buffer): { body: Buffer; used: number } | null {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const eol = buf.indexOf('\r\n', at);
    if (eol < 0) return null;
    const size = parseInt(buf.toString('latin1', at, eol).split(';')[0]!, 16);
    if (!Number.isFinite(size)) throw new Error(`a chunk size that is not hex: ${buf.toString('latin1', at, eol)}`);
    if (size === 0) {
      const end = buf.indexOf(CRLFCRLF, eol - 2 < at ? at : eol - 2);
      if (end < 0) return null;
      return { body: Buffer.concat(parts), used: end + 4 };
    }
    if (buf.length < eol + 2 + size + 2) return null;
    parts.push(buf.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
}

/**
 * Parses the whole responses at the start of `buf`. `bodiless(i)` says whether the i-th answer
 * has no body whatever its headers say (the answer to a HEAD). `ended` is true once the server
 * closed: a body delimited by the close is then complete.
 */
export function parseResponses(
  buf: Buffer,
  bodiless: (i: number) => boolean,
  ended: boolean,
): { responses: RawResponse[]; rest: Buffer; upgraded: boolean } {
  const responses: RawResponse[] = [];
  let at = 0;
  for (;;) {
    const end = buf.indexOf(CRLFCRLF, at);
    if (end < 0) break;
    const lines = buf.toString('latin1', at, end).split('\r\n');
    const m = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0]!);
    if (!m) throw new Error(`not an HTTP status line: ${JSON.stringify(lines[0]!.slice(0, 80))}`);
    const headers: Record<string, string> = {};
    for (const l of lines.slice(1)) {
      const c = l.indexOf(':');
      if (c > 0) headers[l.slice(0, c).trim().toLowerCase()] = l.slice(c + 1).trim();
    }
    const status = Number(m[1]);
    const start = end + 4;
    if (status === 101)
      return { responses: [...responses, { status, headers, body: Buffer.alloc(0) }], rest: buf.subarray(start), upgraded: true };
    let body: Buffer;
    let next: number;
    if (bodiless(responses.length) || status === 204 || status === 304 || (status >= 100 && status < 200)) {
      body = Buffer.alloc(0);
      next = start;
    } else if (headers['transfer-encoding']?.toLowerCase().includes('chunked')) {
      const d = dechunk(buf.subarray(start));
      if (!d) break;
      body = d.body;
      next = start + d.used;
    } else if (headers['content-length'] !== undefined) {
      const n = Number(headers['content-length']);
      if (buf.length < start + n) break;
      body = buf.subarray(start, start + n);
      next = start + n;
    } else {
      if (!ended) break;
      body = buf.subarray(start);
      next = buf.length;
    }
    responses.push({ status, headers, body });
    at = next;
  }
  return { responses, rest: buf.subarray(at), upgraded: false };
}

export interface ExchangeOptions {
  /** Bound of the whole exchange (generous: a busy machine is slow). */
  readonly timeoutMs: number;
  /** Which answers, by index, have no body (answers to HEAD). */
  readonly bodiless?: (i: number) => boolean;
  /** Leave the socket open after writing (an upgrade); the exchange ends at the first whole answer. */
  readonly keepOpen?: boolean;
  /**
   * For requests that may never be whole (a Content-Length that lies, a chunk never ended): the
   * exchange ends once the server has said nothing for this long (the server may still be waiting
   * for the rest; that is not a fault).
   */
  readonly quietMs?: number;
}

/** Writes `bytes` (in the pieces given) and reads every answer until the server closes (or goes quiet, see `quietMs`). */
export function exchange(
  peer: Peer,
  bytes: Buffer | readonly Buffer[],
  opts: ExchangeOptions,
): Promise<RawExchange & { socket: net.Socket }> {
  const bodiless = opts.bodiless ?? (() => false);
  return new Promise((resolve) => {
    const socket = connectPeer(peer);
    const got: Buffer[] = [];
    let error: string | null = null;
    let done = false;
    const finish = (hung: boolean, ended: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      if (quiet) clearTimeout(quiet);
      const all = Buffer.concat(got);
      let parsed: ReturnType<typeof parseResponses>;
      try {
        parsed = parseResponses(all, bodiless, ended);
      } catch (err) {
        error = `unreadable answer: ${(err as Error).message}`;
        parsed = { responses: [], rest: all, upgraded: false };
      }
      if (!opts.keepOpen || !parsed.upgraded) socket.destroy();
      else {
        // The WebSocket's reader takes over from here: nothing may flow past unread meanwhile.
        socket.off('data', onData);
        socket.pause();
      }
      resolve({ responses: parsed.responses, rest: parsed.rest, error, hung, socket });
    };
    const timer = setTimeout(() => finish(true, false), opts.timeoutMs);
    let quiet: NodeJS.Timeout | null = null;
    const hush = () => {
      if (opts.quietMs === undefined) return;
      if (quiet) clearTimeout(quiet);
      quiet = setTimeout(() => finish(false, false), opts.quietMs);
    };
    const onData = (d: Buffer) => {
      hush();
      got.push(d);
      if (!opts.keepOpen) return;
      try {
        const parsed = parseResponses(Buffer.concat(got), bodiless, false);
        if (parsed.upgraded || parsed.responses.length > 0) finish(false, false);
      } catch {
        finish(false, false);
      }
    };
    socket.on('data', onData);
    socket.on('error', (err) => {
      error = err.message;
      finish(false, true);
    });
    socket.on('close', () => finish(false, true));
    socket.once(peer.tls ? 'secureConnect' : 'connect', () => {
      const pieces = Buffer.isBuffer(bytes) ? [bytes] : bytes;
      for (const p of pieces) socket.write(p);
      hush();
    });
  });
}
