/**
 * One connected /stream client: the client machine (with the Resume machine inside it)
 * provided with this client's I/O: the session's stream, its snapshots and a `ClientLink`.
 *
 * Invariants: the bytes a client gets continue its base exactly: `sentEnd` is the position the
 * client holds, a chunk is sent only from there (the tail of a chunk when the base is in its
 * middle), and anything that does not continue it is a gap that goes through a snapshot.
 * Chunks go out only while the machine is `live`; a client whose send queue stays full (see
 * `Watermarks`) is `behind` and gets nothing until it drains, so its memory is bounded by the
 * high watermark plus one chunk plus one snapshot.
 */
import { createActor, fromPromise, type Actor, type InspectionEvent } from 'xstate';
import { CLOSE_CODES } from '../errors.js';
import { streamClientMachine } from '../machines/stream-client.machine.js';
import { resumeMachine, type TakenSnapshot } from '../machines/resume.machine.js';
import { encodeChunkFrame, encodeServerFrame, encodeSnapshotFrame, type ServerFrame } from '../protocol/frames.js';
import type { PaneStream } from './pane-stream.js';
import type { RingChunk } from './ring.js';
import type { ChunkFrames } from './chunk-frames.js';
import { DEFAULT_WATERMARKS, QueueLag, type Watermarks } from './queue-lag.js';

/** The history must outweigh the screen by this much for the screen to go first on its own. */
export const SCREEN_FIRST_MIN_SAVING = 32 * 1024;

/**
 * A catch-up from the ring (a resume's delta, the output after a snapshot) goes out while the
 * client's send queue holds at most this; the rest follows as it drains. All at once, a resume of a
 * full 4 MiB ring held 4 MiB of frames (and their compressed copies) in the daemon per socket
 * until a phone on a cellular link had read them (docs/benchmarks.md "Days without a restart").
 */
export const CATCH_UP_QUEUE_BYTES = 256 * 1024;

/** What a client actor needs of its socket (the transport adapts a WebSocket to it). */
export interface ClientLink {
  /**
   * Sends a binary frame; `written`, when given, is called once it has left for the network, never
   * at once and never once the socket is gone (what waits on it ends as the client is released).
   */
  sendBinary(frame: Buffer, written?: () => void): void;
  /** Sends a text frame; `written`, when given, is called once it has left for the network (or the socket is gone). */
  sendText(text: string, written?: () => void): void;
  /** Bytes accepted but not yet written to the network. */
  readonly bufferedAmount: number;
  close(code: number, reason: string): void;
}

export interface StreamClientDeps {
  readonly sessionId: string;
  readonly stream: PaneStream;
  readonly frames: ChunkFrames;
  readonly link: ClientLink;
  readonly snapshot: () => Promise<TakenSnapshot>;
  readonly watermarks?: Watermarks;
  /** Called once when the client is done (socket closed or session ended). */
  readonly onReleased: () => void;
  readonly onSnapshotFailed?: (err: unknown) => void;
  /** Each state the client machine enters (for the debug log). */
  readonly onState?: (state: string) => void;
  readonly delays?: { readonly drainPoll?: number; readonly snapshotRetry?: number };
  /** XState inspection of this client's machine (the /ops view); `id` names the actor. */
  readonly inspect?: { readonly id: string; readonly inspect: (ev: InspectionEvent) => void };
}

export class StreamClient {
  readonly actor: Actor<typeof streamClientMachine>;
  /** The stream position the client holds; -1 until it has a base. */
  private sentEnd = -1;
  private forwarding = false;
  /**
   * Set while a frame is on its way that the next bytes must follow (a snapshot's screen, whose full
   * frame is sent once it has left; a catch-up's piece, after which the catch-up goes on): live
   * chunks wait in the ring meanwhile, and what comes after that frame sends them in order.
   */
  private waiting = false;
  /** Counts the bases the client was given (snapshots, deltas): what waits for an older one is dropped. */
  private base = 0;
  private released = false;
  private readonly unsubscribe: () => void;
  private readonly watermarks: Watermarks;
  private readonly lag: QueueLag;

  constructor(private readonly deps: StreamClientDeps) {
    this.watermarks = deps.watermarks ?? DEFAULT_WATERMARKS;
    this.lag = new QueueLag(this.watermarks);
    const takeSnapshot = fromPromise<TakenSnapshot>(() => deps.snapshot());
    const reportSnapshotFailed = ({ event }: { event: unknown }) => this.reportSnapshotFailed((event as { error?: unknown }).error);
    const sendSnapshot = ({ event }: { event: unknown }) => this.sendSnapshot((event as { output: TakenSnapshot }).output);
    const resume = resumeMachine.provide({
      actors: { takeSnapshot },
      guards: { isInRing: ({ event }) => event.lastSeq !== null && deps.stream.ring.covers(event.lastSeq) },
      actions: {
        sendDelta: ({ event }) => {
          if (event.type === 'client.resume' && event.lastSeq !== null) this.sendDelta(event.lastSeq);
        },
        sendSnapshot,
        reportSnapshotFailed,
      },
    });
    const machine = streamClientMachine.provide({
      actors: { resume, takeSnapshot },
      guards: { isDrained: () => deps.link.bufferedAmount <= this.watermarks.low },
      actions: {
        startForwarding: () => {
          this.forwarding = true;
          this.lag.reset();
        },
        stopForwarding: () => {
          this.forwarding = false;
        },
        sendSnapshot,
        reportSnapshotFailed,
        closeSessionEnded: () => {
          this.sendFrame({ type: 'error', code: 'session-ended', message: `session ${deps.sessionId} has ended` });
          deps.link.close(CLOSE_CODES.sessionEnded, 'session ended');
        },
        release: () => this.release(),
      },
      delays: {
        drainPoll: deps.delays?.drainPoll ?? 25,
        snapshotRetry: deps.delays?.snapshotRetry ?? 1000,
      },
    });
    this.unsubscribe = deps.stream.subscribe({
      chunk: (c) => this.onChunk(c),
      gap: () => {
        if (this.forwarding) {
          this.forwarding = false;
          this.actor.send({ type: 'stream.gap' });
        }
      },
    });
    this.actor = createActor(machine, deps.inspect ? { id: deps.inspect.id, inspect: deps.inspect.inspect } : {});
    if (deps.onState) {
      const report = deps.onState;
      let last = '';
      this.actor.subscribe((snap) => {
        const state = JSON.stringify(snap.value);
        if (state !== last) report((last = state));
      });
    }
    this.actor.start();
  }

  /** The machine's state, for tests and status. */
  get state(): string {
    return JSON.stringify(this.actor.getSnapshot().value);
  }

  /** The machine's state by name (`live`, `behind`), as /health and `tether status` show it. */
  get stateName(): string {
    const value: unknown = this.actor.getSnapshot().value;
    return typeof value === 'string' ? value : JSON.stringify(value);
  }

  resume(lastSeq: number | null): void {
    this.actor.send({ type: 'client.resume', lastSeq });
  }

  requestSnapshot(): void {
    this.actor.send({ type: 'client.snapshot-request' });
  }

  /** The socket closed (either side). */
  closed(): void {
    this.actor.send({ type: 'socket.closed' });
  }

  /** The session was deleted or its pane died: error frame, close 4404. */
  sessionEnded(): void {
    this.actor.send({ type: 'session.ended' });
  }

  sendFrame(frame: ServerFrame): void {
    if (this.released) return;
    this.deps.link.sendText(encodeServerFrame(frame));
  }

  private onChunk(c: RingChunk): void {
    if (!this.forwarding || this.waiting || c.end <= this.sentEnd) return;
    if (c.start > this.sentEnd) {
      // Bytes between the client's position and this chunk never reached it.
      this.forwarding = false;
      this.actor.send({ type: 'stream.gap' });
      return;
    }
    this.sendChunk(c);
    if (this.lag.behind(this.deps.link.bufferedAmount, performance.now())) {
      this.forwarding = false;
      this.actor.send({ type: 'client.behind' });
    }
  }

  /** Sends the part of `c` after `sentEnd` (the whole chunk when it starts there). */
  private sendChunk(c: RingChunk, written?: () => void): void {
    const frame = c.start === this.sentEnd ? this.deps.frames.of(c) : encodeChunkFrame(c.end, c.data.subarray(this.sentEnd - c.start));
    this.deps.link.sendBinary(frame, written);
    this.sentEnd = c.end;
  }

  private sendDelta(lastSeq: number): void {
    this.rebase();
    this.sentEnd = lastSeq;
    this.catchUp();
  }

  private sendSnapshot(snap: TakenSnapshot): void {
    const serial = this.rebase();
    this.sentEnd = snap.position;
    const sendFull = () => {
      if (!this.released) this.deps.link.sendText(encodeSnapshotFrame(snap.position, snap.data));
    };
    if (!snap.screen || snap.data.length - snap.screen.length <= SCREEN_FIRST_MIN_SAVING || this.released) {
      sendFull();
      this.catchUp();
      return;
    }
    // Screen first (docs/api.md "WebSocket"): the same position without the history, then the
    // whole. A client applies each as a snapshot; the screen shows before the history arrives.
    // The whole is encoded once the screen has left: encoding a long history holds this thread
    // for milliseconds, and the screen's compressed frame is written only when the thread is free.
    let inAction = true;
    this.waiting = true;
    this.deps.link.sendText(encodeSnapshotFrame(snap.position, snap.screen), () => {
      if (serial !== this.base || this.released) return;
      this.waiting = false;
      sendFull();
      // Once live, what the ring took meanwhile follows; otherwise the machine is on its way
      // elsewhere (a gap, another snapshot) and says what comes next.
      if (inAction || this.forwarding) this.catchUp();
    });
    inAction = false;
  }

  /** The client is given a new base: what still waits for the old one is dropped. Answers the new base's serial. */
  private rebase(): number {
    this.waiting = false;
    return ++this.base;
  }

  /**
   * Sends what the ring holds after `sentEnd` while the client's queue is short, and the rest as
   * it drains; bytes not flushed yet come as live chunks.
   */
  private catchUp(): void {
    const chunks = this.deps.stream.ring.since(this.sentEnd);
    if (chunks === null) {
      this.waiting = false;
      // Past the ring's end: the rest is still being coalesced and arrives as a live chunk.
      // Before its start: the ring overflowed meanwhile; once live, that is a gap (the event
      // is queued behind the transition that is running now).
      if (this.sentEnd < this.deps.stream.ring.start) this.actor.send({ type: 'stream.gap' });
      return;
    }
    const serial = this.base;
    for (const c of chunks) {
      if (this.deps.link.bufferedAmount + c.data.length <= CATCH_UP_QUEUE_BYTES) {
        this.sendChunk(c);
        continue;
      }
      // The queue is full: the rest, and what the ring takes meanwhile, once this piece has left.
      this.waiting = true;
      this.sendChunk(c, () => {
        if (serial === this.base && !this.released) this.catchUp();
      });
      return;
    }
    this.waiting = false;
  }

  private reportSnapshotFailed(err: unknown): void {
    this.deps.onSnapshotFailed?.(err);
    this.sendFrame({ type: 'error', code: 'snapshot-failed', message: 'the screen could not be read from tmux; retrying' });
  }

  private release(): void {
    if (this.released) return;
    this.released = true;
    this.forwarding = false;
    this.unsubscribe();
    this.deps.onReleased();
  }
}
