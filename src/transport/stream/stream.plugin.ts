/**
 * `/sessions/:id/stream` and `/sessions/:id/side` (docs/api.md "WebSocket", docs/api.md "WebSocket"):
 * the socket side of a stream client. It adapts a WebSocket to a `ClientLink`, parses client
 * frames, sends input on, answers anything wrong with an `error` frame, and keeps the socket
 * honest with pings (src/transport/stream/keepalive.ts), which also measure its link for /health.
 *
 * Invariants: an unknown session is an HTTP 404 before any upgrade; a stream that cannot be
 * opened ends with `session-ended` and close 4404 only when its session is gone, otherwise with
 * `stream-unavailable` and close 1013 (try again); nothing a client sends can
 * throw out of a handler (every frame is parsed or refused with an error frame); frames that
 * arrive before the client is opened are kept, in order, and handled once it is.
 */
import type { FastifyPluginCallbackTypebox } from '@fastify/type-provider-typebox';
import type { FastifyBaseLogger } from 'fastify';
import type { WebSocket } from 'ws';
import { DomainError } from '../../errors.js';
import type { ClientLink } from '../../stream/stream-client.actor.js';
import type { ClientKind, OpenClient } from '../../stream/stream-hub.js';
import type { ConnectionRegistry } from './connections.js';
import { errorFrame, openFailure } from '../error-translation.js';
import { DeflatePolicy } from './deflate-policy.js';
import type { VerifiedToken } from '../handles.js';
import { Keepalive, PING_INTERVAL_MS, type RawSocket } from './keepalive.js';
import { RouteSchemas } from '../schemas/routes.checks.js';
import { encodeServerFrame, MAX_CLIENT_FRAME_BYTES, parseClientFrame, type ClientFrame, type ServerFrame } from '../../protocol/frames.js';
import type { InputMessage } from '../../protocol/input.js';
import type { PromptRecord } from '../../protocol/prompt.js';

/** What the stream routes need of the stream hub (src/stream/stream-hub.ts is one). */
export interface StreamHandle {
  /** Whether a session of that id exists (checked before the upgrade). */
  has(sessionId: string): Promise<boolean>;
  open(sessionId: string, kind: ClientKind, link: ClientLink): Promise<OpenClient>;
}

/** What the stream routes ask of the sessions service (src/service/sessions/sessions.service.ts is one). */
export interface StreamSessions {
  input(sessionId: string, message: InputMessage): Promise<void>;
  /** Starts the session's exited agent again (`session-running` when it runs). */
  respawn(sessionId: string): Promise<unknown>;
}

/** What the stream routes ask of the answers (src/service/answers/answers.service.ts is one). */
export interface StreamAnswers {
  /** Answers an ask as `by` (a device's token name); resolves with whether the agent took it. */
  answer(sessionId: string, ask: string, choice: string, by: { by: string; tokenId: string | null }): Promise<{ landed: boolean }>;
}

/** What the stream routes ask of the prompts (src/service/prompts/prompts.service.ts is one). */
export interface StreamPrompts {
  /** Queues a prompt as `by`; `created` false: its id named one already (nothing typed again). */
  submit(sessionId: string, request: { text: string; id?: string }, by: string): Promise<{ record: PromptRecord; created: boolean }>;
}

export interface StreamPluginOptions {
  readonly stream: StreamHandle;
  readonly sessions: StreamSessions;
  /** Prompts (`prompt` messages); absent: refused as a frame this server does not take. */
  readonly prompts?: StreamPrompts;
  /** Answers to asks (`answer` frames); absent: refused as a frame this server does not take. */
  readonly answers?: StreamAnswers;
  readonly connections: ConnectionRegistry;
  /** How often the server pings (default PING_INTERVAL_MS); a pong overdue ends the socket (src/transport/stream/keepalive.ts). */
  readonly pingIntervalMs?: number;
}

/** Frames kept while a client is being opened (a resume and some input). */
const MAX_EARLY_FRAMES = 64;

const { IdParams, StreamQuery } = RouteSchemas;

/** The position a `lastSeq` query names: null for a fresh client, undefined when absent. */
export function lastSeqOfQuery(value: string | undefined): number | null | undefined {
  if (value === undefined) return undefined;
  if (value === 'null') return null;
  const n = Number(value);
  if (!Number.isSafeInteger(n))
    throw new DomainError('invalid', 'must be a stream position below 2^53, or null', { field: 'querystring/lastSeq' });
  return n;
}

function linkOf(socket: WebSocket): ClientLink {
  const deflate = new DeflatePolicy();
  return {
    sendBinary: (frame, written) => {
      // A socket that is gone says nothing more: a catch-up waiting on it ends with the client.
      if (socket.readyState !== socket.OPEN) return;
      const compress = deflate.compress(frame.length, performance.now(), socket.bufferedAmount);
      socket.send(frame, { binary: true, compress }, written && (() => written()));
    },
    sendText: (text, written) => {
      // JSON is ASCII but for a description or a title: its length is near enough its bytes.
      if (socket.readyState === socket.OPEN)
        socket.send(text, { compress: deflate.compressText(text.length, socket.bufferedAmount) }, written && (() => written()));
      else written?.();
    },
    get bufferedAmount() {
      return socket.bufferedAmount;
    },
    close: (code, reason) => {
      if (socket.readyState === socket.OPEN || socket.readyState === socket.CONNECTING) socket.close(code, reason);
    },
  };
}

function serve(
  kind: ClientKind,
  opts: StreamPluginOptions,
  socket: WebSocket,
  sessionId: string,
  token: VerifiedToken | null | undefined,
  raw: RawSocket | null,
  lastSeq: number | null | undefined,
  log: FastifyBaseLogger,
): void {
  const tokenId = token?.id ?? 'unknown';
  const send = (frame: ServerFrame) => {
    if (socket.readyState === socket.OPEN) socket.send(encodeServerFrame(frame));
  };
  let client: OpenClient | null = null;
  let closed = false;
  const early: ((c: OpenClient) => void)[] = [];
  /** Runs `fn` once the client is open, in arrival order with everything before it. */
  const whenOpen = (fn: (c: OpenClient) => void) => {
    if (client) fn(client);
    else if (early.length < MAX_EARLY_FRAMES) early.push(fn);
    else send(errorFrame(new DomainError('invalid', 'too many frames before the stream was ready'), ''));
  };
  const keepalive = new Keepalive(socket, raw, { intervalMs: opts.pingIntervalMs ?? PING_INTERVAL_MS });
  const unregister = opts.connections.add({
    tokenId,
    sessionId,
    kind,
    close: (code, reason) => socket.close(code, reason),
    alive: () => keepalive.alive(),
    figures: () => ({
      ...keepalive.figures(),
      device: token?.name ?? tokenId,
      actor: client?.actor ?? null,
      state: client ? client.state() : null,
    }),
  });

  // The position in the URL is the first resume, ahead of anything the client sends.
  if (lastSeq !== undefined && kind === 'stream') whenOpen((c) => c.resume(lastSeq));

  const handle = (frame: ClientFrame, c: OpenClient) => {
    switch (frame.type) {
      case 'resume':
        c.resume(frame.lastSeq);
        return;
      case 'snapshot-request':
        c.requestSnapshot();
        return;
      case 'respawn':
        // The new agent's bytes and a new session-meta say it worked; only a refusal is answered.
        opts.sessions.respawn(sessionId).catch((err: unknown) => send(errorFrame(err, 'the agent could not be respawned')));
        return;
      case 'answer': {
        if (!opts.answers) {
          send(errorFrame(new DomainError('frame-malformed', 'this server takes no answers'), ''));
          return;
        }
        const { ask, choice } = frame;
        opts.answers.answer(sessionId, ask, choice, { by: token?.name ?? tokenId, tokenId: token?.id ?? null }).then(
          (r) => send({ type: 'answered', ask, choice, landed: r.landed }),
          (err: unknown) => send(errorFrame(err, 'the answer could not be typed')),
        );
        return;
      }
      case 'prompt': {
        if (!opts.prompts) {
          send(errorFrame(new DomainError('frame-malformed', 'this server takes no prompts'), ''));
          return;
        }
        // A new prompt reaches every client of the session (this one too) as it changes; one its
        // id named already is told to this client alone, as it stands.
        const request = { text: frame.text, ...(frame.id !== undefined ? { id: frame.id } : {}) };
        opts.prompts.submit(sessionId, request, token?.name ?? tokenId).then(
          ({ record, created }) => created || send({ type: 'prompt', prompt: record }),
          (err: unknown) => send(errorFrame(err, 'the prompt could not be queued')),
        );
        return;
      }
      default: {
        // Checked against the one input schema and rules when the frame was parsed.
        const message: InputMessage = frame;
        opts.sessions.input(sessionId, message).catch((err: unknown) => send(errorFrame(err, 'the input could not be delivered to tmux')));
      }
    }
  };

  socket.on('message', (data, isBinary) => {
    const refuse = (err: DomainError) => whenOpen(() => send(errorFrame(err, '')));
    if (kind === 'side') {
      refuse(new DomainError('invalid', 'the side channel takes no messages'));
      return;
    }
    if (isBinary) {
      refuse(new DomainError('invalid', 'binary frames are not accepted: send JSON text frames'));
      return;
    }
    const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data);
    if (bytes.length > MAX_CLIENT_FRAME_BYTES) {
      refuse(new DomainError('too-large', `a text frame is at most ${MAX_CLIENT_FRAME_BYTES} bytes`));
      return;
    }
    let frame: ClientFrame;
    try {
      frame = parseClientFrame(bytes.toString('utf8'));
    } catch (err) {
      refuse(err instanceof DomainError ? err : new DomainError('frame-malformed', 'the frame could not be read'));
      return;
    }
    whenOpen((c) => handle(frame, c));
  });

  socket.on('close', () => {
    closed = true;
    keepalive.stop();
    unregister();
    client?.closed();
  });

  opts.stream.open(sessionId, kind, linkOf(socket)).then(
    (c) => {
      if (closed) {
        c.closed();
        return;
      }
      client = c;
      for (const fn of early.splice(0)) fn(c);
    },
    (err: unknown) => {
      // Only a session that is gone ends a client; anything else is for now, and it tries again.
      const failure = openFailure(err);
      if (failure.unforeseen) log.warn({ session: sessionId, err: String(err) }, 'a stream could not be opened');
      send(failure.frame);
      socket.close(failure.close.code, failure.close.reason);
    },
  );
}

/** Registers the two WebSocket routes (behind auth: register after the auth plugin). */
export const streamRoutes: FastifyPluginCallbackTypebox<StreamPluginOptions> = (app, opts, done) => {
  const notFound = (id: string) => new DomainError('session-not-found', `no session named "${id}"`);
  for (const kind of ['stream', 'side'] as const) {
    app.get(
      `/sessions/:id/${kind}`,
      {
        websocket: true,
        schema: { params: IdParams, querystring: StreamQuery },
        // After the schema checked the id and the query: a malformed id is a 400, not an unknown session.
        preHandler: async (req) => {
          const { id } = req.params;
          if (kind === 'side' && req.query.lastSeq !== undefined)
            throw new DomainError('invalid', 'the side channel carries no stream position', { field: 'querystring/lastSeq' });
          lastSeqOfQuery(req.query.lastSeq);
          if (!(await opts.stream.has(id))) throw notFound(id);
        },
      },
      (socket, req) => serve(kind, opts, socket, req.params.id, req.tetherToken, req.socket, lastSeqOfQuery(req.query.lastSeq), req.log),
    );
  }
  done();
};
