/**
 * What a user of the reference stream client (session-stream.ts) hands it and hears from it: its
 * options, its events and its connection statuses, with the server frames they carry.
 */
import type { ClientOptions } from 'ws';
import type { AnsweredFrame, ErrorFrame, PromptFrame, SessionMetaFrame, StateFrame } from '../protocol/frames.js';
import type { PromptRecord } from '../protocol/prompt.js';
import type { PinnedTlsOptions } from './pinning.js';

export type { AnsweredFrame, ErrorFrame, PromptFrame, PromptRecord, SessionMetaFrame, StateFrame };

/** Where the stream's connection is. */
export type StreamStatus = 'connecting' | 'open' | 'reconnecting' | 'ended' | 'unauthorized' | 'closed';

/** What a `SessionStream` is made with. */
export interface SessionStreamOptions {
  /** `http(s)://host:port` of the sidecar. */
  readonly baseUrl: string;
  readonly token: string;
  readonly session: string;
  /** Where the stream was left (a stored lastSeq), or null for a fresh client. */
  readonly lastSeq?: number | null;
  /** Foreground ping interval and how long a pong may take. */
  readonly pingIntervalMs?: number;
  readonly pongTimeoutMs?: number;
  /** Reconnect delays: the first retry is immediate, then doubling to the ceiling. */
  readonly retryCeilingMs?: number;
  /** The pinned certificate for https (`pinnedTlsOptions` / `pinnedOptions`). */
  readonly tls?: PinnedTlsOptions;
  /** More options for the `ws` client. */
  readonly ws?: ClientOptions;
}

/** What a `SessionStream` emits. */
export interface SessionStreamEvents {
  /** Bytes that continue the screen, and the position after them. */
  data: [bytes: Buffer, seq: number];
  /** A full screen: reset the terminal, then write these bytes. */
  snapshot: [bytes: Buffer, seq: number];
  state: [frame: StateFrame];
  meta: [frame: SessionMetaFrame];
  /** An `error` frame (not an EventEmitter 'error': an unheard one must not throw). */
  errorFrame: [frame: ErrorFrame];
  /** How an `answer` went: typed, and whether the agent took it. */
  answered: [frame: AnsweredFrame];
  /** A prompt of the session changed (any client's, this one's too): queued, typing, decided. */
  prompt: [frame: PromptFrame];
  status: [status: StreamStatus];
}
