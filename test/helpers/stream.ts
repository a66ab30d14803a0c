/**
 * A stream client as a user's screen: the reference client (`SessionStream`) feeding a
 * headless terminal, with every frame it got recorded, so tests compare what a person would
 * see and in which order things arrived.
 */
import {
  SessionStream,
  type AnsweredFrame,
  type ErrorFrame,
  type SessionMetaFrame,
  type StateFrame,
} from '../../src/reference-client/index.js';
import { expect } from 'vitest';
import { eventually } from './tmux.js';
import type { PaneStream } from '../../src/stream/pane-stream.js';
import { newTerminal, readScreen, write, type Screen } from './screen.js';

export type Received =
  | { kind: 'meta'; frame: SessionMetaFrame }
  | { kind: 'state'; frame: StateFrame }
  | { kind: 'error'; frame: ErrorFrame }
  | { kind: 'answered'; frame: AnsweredFrame }
  | { kind: 'snapshot'; seq: number; bytes: number }
  | { kind: 'data'; seq: number; bytes: number };

export class Mirror {
  readonly stream: SessionStream;
  readonly received: Received[] = [];
  readonly term = newTerminal();
  private writes: Promise<void> = Promise.resolve();
  /** Every byte applied since the last snapshot (for byte-exact comparisons). */
  bytesSinceSnapshot: Buffer[] = [];
  /** When the last output arrived (Date.now()), or 0. */
  lastDataAt = 0;

  constructor(base: string, token: string, session: string, lastSeq: number | null = null) {
    this.stream = new SessionStream({ baseUrl: base, token, session, lastSeq });
    this.stream.on('meta', (frame) => this.received.push({ kind: 'meta', frame }));
    this.stream.on('state', (frame) => this.received.push({ kind: 'state', frame }));
    this.stream.on('errorFrame', (frame) => this.received.push({ kind: 'error', frame }));
    this.stream.on('answered', (frame) => this.received.push({ kind: 'answered', frame }));
    this.stream.on('snapshot', (bytes, seq) => {
      this.received.push({ kind: 'snapshot', seq, bytes: bytes.length });
      this.bytesSinceSnapshot = [bytes];
      this.apply(bytes, true);
    });
    this.stream.on('data', (bytes, seq) => {
      this.received.push({ kind: 'data', seq, bytes: bytes.length });
      this.lastDataAt = Date.now();
      this.bytesSinceSnapshot.push(bytes);
      this.apply(bytes, false);
    });
  }

  connect(): this {
    this.stream.connect();
    return this;
  }

  private apply(bytes: Buffer, reset: boolean): void {
    const copy = Buffer.from(bytes);
    this.writes = this.writes.then(async () => {
      if (reset) this.term.reset();
      await write(this.term, copy);
    });
  }

  /** The screen once every received byte is written. */
  async screen(): Promise<Screen> {
    await this.writes;
    return readScreen(this.term);
  }

  /** The visible text, rows joined (trailing blank rows dropped). */
  async text(): Promise<string> {
    return (await this.screen()).text.join('\n').replace(/\n+$/, '');
  }

  kinds(): string[] {
    return this.received.map((r) => r.kind);
  }

  errors(): ErrorFrame[] {
    return this.received.flatMap((r) => (r.kind === 'error' ? [r.frame] : []));
  }

  close(): void {
    this.stream.close();
    this.term.dispose();
  }
}

/**
 * Waits until the client got nothing for `quietMs` (the screen is drawn and has stopped
 * changing), as a person reads a dialog before answering it. Claude Code drops a key that comes
 * in the first moments after its dialog is drawn (tether's own answers wait for the same quiet:
 * src/agent/claude/asks.ts).
 */
export function still(m: Mirror, timeoutMs: number, what: string, quietMs = 500): Promise<boolean> {
  let seen = -1;
  let since = 0;
  return eventually(
    () => {
      const n = m.received.length;
      if (n !== seen) {
        seen = n;
        since = Date.now();
        return false;
      }
      return Date.now() - since >= quietMs;
    },
    timeoutMs,
    50,
    what,
  );
}

/** Waits until the client's screen shows every one of `texts`; the error shows the screen. */
export function shows(m: Mirror, texts: readonly string[], ms: number, what: string, pollMs = 100): Promise<string> {
  return eventually(
    async () => {
      const text = await m.text();
      if (texts.every((t) => text.includes(t))) return text;
      throw new Error(`the client's screen is:\n${text}`);
    },
    ms,
    pollMs,
    what,
  );
}

/** The state frames the client was sent, in order. */
export const stateFrames = (m: Mirror): StateFrame[] => m.received.flatMap((r) => (r.kind === 'state' ? [r.frame] : []));

/** New output reaches a live client as the next chunk, at exactly the stream's end position. */
export function expectLiveOutputContinues(stream: PaneStream, sent: { binary: { seq: number; data: Buffer }[] }): void {
  const more = Buffer.from('live bytes');
  stream.append(more);
  stream.flush();
  expect(sent.binary.at(-1)!.data.equals(more)).toBe(true);
  expect(sent.binary.at(-1)!.seq).toBe(stream.ring.end);
}
