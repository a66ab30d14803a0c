/**
 * The reference stream client (docs/client.md): one session's `/stream`, kept
 * connected. It holds `lastSeq`, resumes on every (re)connect, applies a delta or a snapshot,
 * follows bracketed paste to choose `paste` or `keys`, pings while in the foreground, and
 * reconnects at once when told the app came to the foreground. What a chunk or a snapshot does
 * to the position held is stream-position.ts; the prompts held until decided, and sent again on
 * each new connection, are prompt-outbox.ts; this file keeps the connection.
 *
 * Invariant: what it hands to the terminal is exactly the stream (StreamPosition decides which
 * bytes); the position goes with every (re)connect.
 */
import { EventEmitter } from 'node:events';
import { isIP } from 'node:net';
import tls from 'node:tls';
import WebSocket, { type ClientOptions } from 'ws';
import { CLOSE_CODES } from '../errors.js';
import { parseServerFrame, type ClientFrame } from '../protocol/frames.js';
import { BracketedPasteTracker } from './paste-mode.js';
import { PromptOutbox, type PromptOptions, type SentPrompt } from './prompt-outbox.js';
import { StreamPosition } from './stream-position.js';
import type { SessionStreamEvents, SessionStreamOptions, StreamStatus } from './stream-types.js';

/** Client frames smaller than this are sent uncompressed. */
export const CLIENT_DEFLATE_MIN_BYTES = 1024;

/** Its options, events and statuses, and the frames they carry (stream-types.ts). */
export type * from './stream-types.js';

/** One session's stream, kept connected (docs/client.md "The reference client"). */
export class SessionStream extends EventEmitter<SessionStreamEvents> {
  private readonly position: StreamPosition;
  private readonly prompts = new PromptOutbox((frame) => this.send(frame));
  status: StreamStatus = 'closed';
  readonly paste = new BracketedPasteTracker();
  private socket: WebSocket | null = null;
  private retries = 0;
  private retryTimer: NodeJS.Timeout | null = null;
  private pingTimer: NodeJS.Timeout | null = null;
  private pongTimer: NodeJS.Timeout | null = null;
  private foregrounded = true;
  private stopped = false;
  /** The last TLS session the server gave (a ticket): the next connection resumes it. */
  private tlsSession: Buffer | null = null;
  /** Whether the last connection's TLS handshake resumed an earlier session (one round trip, no certificate). */
  tlsResumed = false;

  /** The stream position the client holds; persist it per session. */
  get lastSeq(): number | null {
    return this.position.lastSeq;
  }

  /** Where the next connection resumes from (a stored position, or null to start afresh). */
  set lastSeq(seq: number | null) {
    this.position.lastSeq = seq;
  }

  /** Whether a TLS session ticket is held for the next connection. */
  get tlsTicketHeld(): boolean {
    return this.tlsSession !== null;
  }

  constructor(private readonly opts: SessionStreamOptions) {
    super();
    this.position = new StreamPosition(opts.lastSeq ?? null);
  }

  /**
   * Connects (and keeps reconnecting until `close`, a deleted session or a revoked token): a
   * stream the server cannot open for now (`stream-unavailable`, close 1013) is tried again.
   */
  connect(): this {
    this.stopped = false;
    this.open();
    return this;
  }

  /** The app came to the foreground: reconnect now and pull the delta. */
  foreground(): void {
    this.foregrounded = true;
    if (this.stopped || this.status === 'ended' || this.status === 'unauthorized') return;
    this.dropSocket();
    this.open();
  }

  /** The app went to the background: no more pings (the OS will suspend the socket). */
  background(): void {
    this.foregrounded = false;
    this.clearPing();
  }

  /** Sends pasted text: `paste` while the application has bracketed paste on, else `keys`. */
  sendText(text: string): void {
    this.send({ type: this.paste.on ? 'paste' : 'keys', data: text });
  }

  /** Sends a `paste` frame whatever the mode (the server wraps it only when the mode is on). */
  sendPaste(text: string): void {
    this.send({ type: 'paste', data: text });
  }

  /** Sends typed text literally. */
  sendKeys(text: string): void {
    this.send({ type: 'keys', data: text });
  }

  /** Sends a named key (`enter`, `ctrl-c`, `up`...). */
  sendKey(name: string): void {
    this.send({ type: 'key', name });
  }

  requestSnapshot(): void {
    this.send({ type: 'snapshot-request' });
  }

  /** Starts the session's exited agent again (`session-meta` says `exited`); an error frame says why not. */
  respawn(): void {
    this.send({ type: 'respawn' });
  }

  /** Answers the agent's ask (a `state` frame's `ask`) with one of its choices; `answered` or an error frame says how it went. */
  answer(ask: string, choice: string): void {
    this.send({ type: 'answer', ask, choice });
  }

  /**
   * Sends a prompt (docs/client.md "Prompts"): typed for the agent once, in its turn. Its id
   * (`opts.id`, else a new UUID) is kept, and the prompt sent again on each new connection, until
   * it is decided; `decided` resolves with the decided record, or rejects with a PromptError.
   */
  prompt(text: string, opts: PromptOptions = {}): SentPrompt {
    const sent = this.prompts.add(text, opts.id);
    if (this.status === 'ended' || this.status === 'unauthorized') this.prompts.stop(this.status, `the stream is ${this.status}`);
    return sent;
  }

  /** Closes and stops reconnecting; prompts not yet decided are rejected (`closed`). */
  close(): void {
    this.stopped = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.dropSocket();
    this.setStatus('closed');
    this.prompts.stop('closed', 'the stream was closed before the prompt was decided');
  }

  /** Sends a frame on the open socket; false when there is none. */
  private send(frame: ClientFrame): boolean {
    // Small frames go uncompressed (docs/client.md): deflating a keystroke saves a few bytes and
    // costs a trip through zlib's thread pool on both sides, a good part of an echo's time.
    const text = JSON.stringify(frame);
    if (this.socket?.readyState !== WebSocket.OPEN) return false;
    this.socket.send(text, { compress: text.length >= CLIENT_DEFLATE_MIN_BYTES });
    return true;
  }

  /** The stream's URL, carrying the position held: the server resumes from it at open. */
  private url(): string {
    const base = new URL(this.opts.baseUrl);
    base.protocol = base.protocol === 'https:' ? 'wss:' : 'ws:';
    base.pathname = `/sessions/${encodeURIComponent(this.opts.session)}/stream`;
    base.search = `?lastSeq=${this.lastSeq === null ? 'null' : String(this.lastSeq)}`;
    return base.toString();
  }

  /**
   * TLS connections that offer the last session ticket, so a reconnect within the ticket's
   * lifetime skips the certificate exchange; the pin is checked all the same.
   */
  private connectTls = (options: tls.ConnectionOptions): tls.TLSSocket => {
    const host = options.host ?? '';
    const socket = tls.connect({
      ...options,
      ...this.opts.tls,
      servername: options.servername ?? (isIP(host) ? '' : host),
      ...(this.tlsSession ? { session: this.tlsSession } : {}),
    });
    socket.on('session', (session: Buffer) => {
      this.tlsSession = session;
    });
    socket.once('secureConnect', () => {
      this.tlsResumed = socket.isSessionReused();
    });
    return socket;
  };

  private open(): void {
    this.setStatus(this.retries > 0 ? 'reconnecting' : 'connecting');
    const secure = new URL(this.opts.baseUrl).protocol === 'https:';
    const socket = new WebSocket(this.url(), {
      ...(secure ? { createConnection: this.connectTls as unknown as ClientOptions['createConnection'] } : {}),
      ...this.opts.ws,
      headers: { ...this.opts.ws?.headers, authorization: `Bearer ${this.opts.token}` },
      perMessageDeflate: true,
    });
    this.socket = socket;
    socket.binaryType = 'nodebuffer';
    socket.on('open', () => {
      if (this.socket !== socket) return;
      // The back-off restarts once the server sends the session (below), not at the upgrade: a
      // stream refused right after it (1013) is tried again later and later, not in a tight loop.
      this.position.reopened();
      // No resume message: the position went with the upgrade (`?lastSeq=`).
      this.setStatus('open');
      this.schedulePing();
      this.prompts.opened(); // the undecided ones again: a repeat is answered as it stands
    });
    socket.on('message', (data, isBinary) => {
      if (this.socket !== socket) return;
      if (isBinary) this.onChunk(data as Buffer);
      else this.onText((data as Buffer).toString('utf8'));
    });
    socket.on('pong', () => {
      if (this.pongTimer) clearTimeout(this.pongTimer);
      this.pongTimer = null;
    });
    socket.on('unexpected-response', (_req, res) => {
      if (res.statusCode === 401) this.finish('unauthorized');
      else if (res.statusCode === 404) this.finish('ended');
      socket.terminate();
    });
    socket.on('error', () => undefined);
    socket.on('close', (code) => {
      if (this.socket !== socket) return;
      this.socket = null;
      this.clearPing();
      this.prompts.dropped();
      if (code === CLOSE_CODES.sessionEnded) this.finish('ended');
      else if (code === CLOSE_CODES.tokenRevoked) this.finish('unauthorized');
      // Any other close, 1013 (`stream-unavailable`: the session is there, not ready) included, is retried.
      else if (!this.stopped && this.status !== 'ended' && this.status !== 'unauthorized') this.scheduleRetry();
    });
  }

  private onChunk(frame: Buffer): void {
    const step = this.position.chunk(frame);
    if (step === 'ask-snapshot') this.requestSnapshot();
    if (step === null || step === 'ask-snapshot') return;
    this.paste.feed(step.bytes);
    this.emit('data', step.bytes, step.seq);
  }

  private onText(text: string): void {
    let frame;
    try {
      frame = parseServerFrame(text);
    } catch {
      return; // a frame that does not fit its type is skipped, never half-applied
    }
    switch (frame?.type) {
      case 'snapshot': {
        const bytes = Buffer.from(frame.data, 'base64');
        this.position.snapshot(frame.seq);
        this.paste.reset();
        this.paste.feed(bytes);
        this.emit('snapshot', bytes, frame.seq);
        return;
      }
      case 'state':
        this.emit('state', frame);
        return;
      case 'session-meta':
        this.retries = 0;
        this.emit('meta', frame);
        return;
      case 'error':
        this.prompts.refused(frame); // the refusal of the prompt awaiting its answer, if any
        this.emit('errorFrame', frame);
        return;
      case 'answered':
        this.emit('answered', frame);
        return;
      case 'prompt':
        this.prompts.heard(frame.prompt);
        this.emit('prompt', frame);
        return;
      default:
        return; // a type this version does not know
    }
  }

  private finish(status: 'ended' | 'unauthorized'): void {
    this.stopped = true;
    this.dropSocket();
    this.setStatus(status);
    this.prompts.stop(status, `the stream is ${status} before the prompt was decided`);
  }

  private scheduleRetry(): void {
    const delay = this.retries === 0 ? 0 : Math.min(this.opts.retryCeilingMs ?? 5000, 250 * 2 ** (this.retries - 1));
    this.retries++;
    this.setStatus('reconnecting');
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      if (!this.stopped) this.open();
    }, delay);
  }

  private schedulePing(): void {
    this.clearPing();
    if (!this.foregrounded) return;
    this.pingTimer = setInterval(() => {
      const socket = this.socket;
      if (!socket || socket.readyState !== WebSocket.OPEN || this.pongTimer) return;
      socket.ping();
      this.pongTimer = setTimeout(() => {
        // No pong in time: the connection is dead even if the OS has not noticed.
        this.pongTimer = null;
        socket.terminate();
      }, this.opts.pongTimeoutMs ?? 5000);
    }, this.opts.pingIntervalMs ?? 10_000);
  }

  private clearPing(): void {
    if (this.pingTimer) clearInterval(this.pingTimer);
    if (this.pongTimer) clearTimeout(this.pongTimer);
    this.pingTimer = null;
    this.pongTimer = null;
  }

  private dropSocket(): void {
    const socket = this.socket;
    this.socket = null;
    this.clearPing();
    this.prompts.dropped();
    if (socket) {
      socket.removeAllListeners('message');
      socket.on('error', () => undefined);
      socket.terminate();
    }
  }

  private setStatus(status: StreamStatus): void {
    if (this.status === status) return;
    this.status = status;
    this.emit('status', status);
  }
}
