/**
 * The reference client's prompts (docs/client.md "Prompts"): each prompt sent on a session's
 * stream, held with its id until it is decided. On every new connection the undecided ones are
 * sent again, with the same id and text, in the order they were first sent: the server answers a
 * repeat with the prompt as it stands and types nothing twice. A prompt is settled by the
 * `prompt` frames with its id, or refused by an `error` frame.
 *
 * An `error` frame names no prompt, so on a connection one prompt at a time awaits the server's
 * first answer (a `prompt` frame with its id, or a refusal); the next is sent once it came. A
 * refusal is then the refusal of that one. Prompts are sent by a person, seconds apart: the round
 * trip this costs is not felt, and the server takes them in the order they were sent.
 *
 * Invariants: a prompt is sent with the same id and text every time; at most one awaits its first
 * answer on a connection; a prompt leaves the outbox only decided, refused, or with the stream
 * stopped, and its `decided` settles exactly once.
 */
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { ClientFrame, ErrorFrame } from '../protocol/frames.js';
import { comparableText, type PromptRecord, type PromptStatus } from '../protocol/prompt.js';

/** The `error` frame codes that refuse a prompt awaiting its answer (docs/api.md "Prompts", "Over the stream"). */
export const PROMPT_REFUSALS: ReadonlySet<string> = new Set([
  'bad-frame',
  'prompt-id-conflict',
  'prompt-queue-full',
  'session-exited',
  'tmux-unavailable',
  'payload-too-large',
  'input-failed',
]);

const DECIDED: ReadonlySet<PromptStatus> = new Set(['typed', 'submitted', 'failed', 'cancelled']);

/** Whether a prompt is decided (typed, submitted, failed or cancelled): it never changes again. */
export const isDecided = (record: PromptRecord): boolean => DECIDED.has(record.status);

/** What `prompt()` may be given beside the text. */
export interface PromptOptions {
  /** The prompt's id (1 to 64 of `A-Z a-z 0-9 . _ -`); a new UUID when absent. Sending one again is safe. */
  readonly id?: string;
}

/**
 * Why a prompt came to no decision: refused by the server (`code` is the `error` frame's), or the
 * stream stopped first (`closed`, `ended`, `unauthorized`; the prompt may still be typed: its id
 * is safe to send again).
 */
export class PromptError extends Error {
  constructor(
    readonly id: string,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'PromptError';
  }
}

/** The events of a sent prompt. */
export interface SentPromptEvents {
  /** The prompt changed (each `prompt` frame with its id): queued, typing, then its decision. */
  change: [record: PromptRecord];
}

/** A prompt sent on a stream: its id, its record as last heard, and its decision to await. */
export class SentPrompt extends EventEmitter<SentPromptEvents> {
  /** The prompt as the server last told it; null until it answered. */
  record: PromptRecord | null = null;
  /** Resolves with the decided record (`failed` and `cancelled` too); rejects with a PromptError. */
  readonly decided: Promise<PromptRecord>;
  private resolve!: (record: PromptRecord) => void;
  private reject!: (err: PromptError) => void;

  constructor(
    readonly id: string,
    readonly text: string,
  ) {
    super();
    this.decided = new Promise<PromptRecord>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    // A caller who never awaits it must not meet an unhandled rejection; one who does still gets it.
    this.decided.catch(() => undefined);
  }

  /** Takes a record the server sent (internal: the outbox calls it). */
  heard(record: PromptRecord): void {
    this.record = record;
    this.emit('change', record);
    if (isDecided(record)) this.resolve(record);
  }

  /** Rejects the prompt (internal: the outbox calls it). */
  fail(code: string, message: string): void {
    this.reject(new PromptError(this.id, code, message));
  }
}

/** The prompts of one stream, kept until decided and sent again on every new connection. */
export class PromptOutbox {
  /** Undecided prompts, in the order first sent. */
  private readonly held = new Map<string, SentPrompt>();
  /** What this connection has still to send, in order. */
  private toSend: SentPrompt[] = [];
  /** The prompt sent on this connection that awaits its first answer. */
  private awaiting: SentPrompt | null = null;

  /** `send` sends a frame on the open connection, or says false when there is none. */
  constructor(private readonly send: (frame: ClientFrame) => boolean) {}

  /**
   * Holds and sends a prompt (`id` a new UUID when absent). A prompt held with the same id and
   * text is returned as it is; one with the same id and another text is refused at once.
   */
  add(text: string, id: string = randomUUID()): SentPrompt {
    const held = this.held.get(id);
    if (held?.text === text) return held;
    const sent = new SentPrompt(id, text);
    if (held) {
      sent.fail('prompt-id-conflict', `prompt "${id}" is held with another text`);
      return sent;
    }
    this.held.set(id, sent);
    this.toSend.push(sent);
    this.next();
    return sent;
  }

  /** A new connection opened: every undecided prompt is sent again, in order. */
  opened(): void {
    this.awaiting = null;
    this.toSend = [...this.held.values()];
    this.next();
  }

  /** The connection dropped: what was not answered on it is sent on the next. */
  dropped(): void {
    this.awaiting = null;
    this.toSend = [];
  }

  /** A `prompt` frame: settles the held prompt of its id (a frame with another text is someone else's). */
  heard(record: PromptRecord): void {
    const sent = this.held.get(record.id);
    if (!sent || comparableText(record.text) !== comparableText(sent.text)) return;
    // The server has it: this connection hears its changes, nothing to send again.
    this.toSend = this.toSend.filter((p) => p !== sent);
    if (this.awaiting === sent) this.awaiting = null;
    if (isDecided(record)) this.held.delete(sent.id);
    this.next();
    sent.heard(record);
  }

  /** An `error` frame: the refusal of the prompt awaiting its answer, if any; says whether it was. */
  refused(frame: ErrorFrame): boolean {
    const sent = this.awaiting;
    if (!sent || !PROMPT_REFUSALS.has(frame.code)) return false;
    this.awaiting = null;
    this.held.delete(sent.id);
    this.next();
    sent.fail(frame.code, frame.message);
    return true;
  }

  /** The stream stopped for good (`closed`, `ended`, `unauthorized`): every prompt held is rejected. */
  stop(code: string, message: string): void {
    const held = [...this.held.values()];
    this.held.clear();
    this.dropped();
    for (const sent of held) sent.fail(code, message);
  }

  /** Sends the next prompt once none awaits its answer. */
  private next(): void {
    const sent = this.toSend[0];
    if (this.awaiting !== null || sent === undefined) return;
    if (!this.send({ type: 'prompt', text: sent.text, id: sent.id })) return;
    this.toSend.shift();
    this.awaiting = sent;
  }
}
