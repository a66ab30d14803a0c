/**
 * One session's disk buffer: it listens to the session's pane stream, batches what comes (at most
 * MAX_PENDING_BYTES wait, written every FLUSH_MS or at FLUSH_BYTES, one write in flight) and
 * appends it to `<id>.log`, with a line in `<id>.idx` wherever the file stops being contiguous
 * in the stream. Its disk-buffer machine says whether it writes; the owner (DiskBuffers) holds
 * the global cap, so a write reserves its bytes there first and is cut to the room left.
 * A failed write is logged and shown in health; it never throws into the stream.
 */
import { createActor, type Actor, type InspectionEvent } from 'xstate';
import { diskBufferMachine, type DiskBufferLimits } from '../machines/disk-buffer.machine.js';
import type { Logger } from '../log.js';
import type { PaneStream, StreamListener } from '../stream/pane-stream.js';
import type { RingChunk } from '../stream/ring.js';
import { lstat, type FileHandle } from 'node:fs/promises';
import { appendTo, openToAppend } from './disk-buffer-files.js';

/**
 * Output waits at most this long before it is written: one write a second per busy session (at
 * 100 ms, the writes of a hundred agents' trickles were a quarter of the daemon's busy time).
 * Readers of the history flush first, so they never miss it; a daemon killed loses at most this
 * much of the file, which tmux's own history still holds.
 */
export const FLUSH_MS = 1000;
/** A batch this large is written at once. */
export const FLUSH_BYTES = 256 * 1024;
/** A session's waiting batch never grows past this; beyond it the batch is dropped (a gap). */
export const MAX_PENDING_BYTES = 8 * 1024 * 1024;
/** The log file stays open while batches keep coming; this long without one, it is closed. */
export const LOG_IDLE_CLOSE_MS = 5000;

/** The first batch buffer of a session; it doubles while a batch needs more. */
const FIRST_BATCH_BYTES = 4096;

/**
 * A batch waiting to be written: the bytes copied in as they come (the chunks themselves are not
 * kept a second: at 100 busy sessions, chunks held that long were much of what outlived the young
 * generation), and where its bytes stop being contiguous in the stream.
 */
interface Batch {
  data: Buffer;
  bytes: number;
  /** Stream position just after the batch's last byte. */
  end: number;
  /** `[offset in the batch, stream position]` of its first byte and of every byte after a jump. */
  readonly breaks: number[];
}

export type BufferActor = Actor<typeof diskBufferMachine>;

/** What a session buffer needs of the buffers as a whole: the global cap's room and the machines' news. */
export interface BufferOwner {
  readonly limits: DiskBufferLimits;
  readonly deps: { readonly log: Logger; readonly inspect?: (sessionId: string | null) => (ev: InspectionEvent) => void };
  /** Bytes a write may still add under the global cap, the writes in flight counted. */
  globalRoom(): number;
  reserve(bytes: number): void;
  release(bytes: number): void;
  /** A batch was written (or nothing fit under the global cap): the machines hear the new sizes. */
  written(buffer: SessionBuffer): void;
}

export class SessionBuffer implements StreamListener {
  readonly actor: BufferActor;
  private pending: Batch | null = null;
  private timer: NodeJS.Timeout | null = null;
  /** The write in flight, if any: while it runs, `size` is the file's size before it. */
  writing: Promise<void> | null = null;
  /** Stream position right after the last byte in the file, or null when the next byte is not contiguous. */
  private nextSeq: number | null = null;
  dropped = 0;
  lastError: string | null = null;
  private unsubscribe: () => void = () => undefined;
  /**
   * The log file while output keeps coming: one write a batch instead of an open, a write and a
   * close (a hundred busy sessions made three thousand file operations a second of it). Closed
   * after LOG_IDLE_CLOSE_MS without a batch, after a failed write, when the watchdog finds the
   * file gone, and when the buffer closes. Each batch first looks whether the path still names
   * the open file (one lstat); when it was removed or replaced by hand (a new file, a directory),
   * the old one is closed and the path opened again, so the batch lands where an open per batch
   * would have put it, or fails as that open would.
   */
  private log: FileHandle | null = null;
  /** The open log file's identity, to tell it from whatever the path names now. */
  private logId: { dev: number; ino: number } | null = null;
  private logIdle: NodeJS.Timeout | null = null;

  constructor(
    readonly id: string,
    private readonly paths: { log: string; idx: string },
    public size: number,
    private readonly owner: BufferOwner,
    limits: DiskBufferLimits,
  ) {
    this.actor = createActor(diskBufferMachine, {
      input: { limits },
      ...(owner.deps.inspect ? { id: 'buffer', inspect: owner.deps.inspect(id) } : {}),
    }).start();
    this.actor.send({ type: 'buffer.startup', idleMs: 0 });
  }

  attach(stream: PaneStream): void {
    this.unsubscribe = stream.subscribe(this);
  }

  get state(): string {
    return String(this.actor.getSnapshot().value);
  }

  chunk(chunk: RingChunk): void {
    if (this.state !== 'writing') {
      this.nextSeq = null;
      return;
    }
    const waiting = this.pending?.bytes ?? 0;
    if (waiting + chunk.data.length > MAX_PENDING_BYTES) {
      // The disk is slower than the stream: drop what waits rather than grow; the index notes the gap.
      this.dropped += waiting + chunk.data.length;
      this.pending = null;
      this.nextSeq = null;
      return;
    }
    if (this.add(chunk).bytes >= FLUSH_BYTES) void this.flush();
    else if (!this.timer) {
      this.timer = setTimeout(() => void this.flush(), FLUSH_MS);
      this.timer.unref();
    }
  }

  /** Copies a chunk's bytes into the waiting batch; answers the batch. */
  private add(chunk: RingChunk): Batch {
    const size = chunk.data.length;
    let batch = this.pending;
    if (batch === null)
      batch = this.pending = { data: Buffer.allocUnsafeSlow(Math.max(FIRST_BATCH_BYTES, size)), bytes: 0, end: -1, breaks: [] };
    else if (batch.data.length - batch.bytes < size) {
      const grown = Buffer.allocUnsafeSlow(Math.max(batch.data.length * 2, batch.bytes + size));
      batch.data.copy(grown, 0, 0, batch.bytes);
      batch.data = grown;
    }
    if (chunk.start !== batch.end) batch.breaks.push(batch.bytes, chunk.start);
    chunk.data.copy(batch.data, batch.bytes);
    batch.bytes += size;
    batch.end = chunk.end;
    return batch;
  }

  gap(): void {
    // The next chunk starts at a new position: the index notes it when it is written.
  }

  /** Writes what waits (one write in flight; a flush during one runs after it). */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.writing) return this.writing.then(() => this.flush());
    const batch = this.pending;
    if (batch === null) return Promise.resolve();
    this.pending = null;
    this.writing = this.write(batch).finally(() => (this.writing = null));
    return this.writing;
  }

  private async write(batch: Batch): Promise<void> {
    if (this.state !== 'writing') return;
    const sessionRoom = this.owner.limits.sessionCapBytes - this.size;
    const globalRoom = this.owner.globalRoom();
    const length = Math.max(0, Math.min(batch.bytes, sessionRoom, globalRoom));
    // An index line wherever the file stops being contiguous in the stream: at the batch's first
    // byte unless the file ends just before it, and at every jump inside the batch.
    const index: string[] = [];
    let next = 0;
    for (let i = 0; i < batch.breaks.length; i += 2) {
      const offset = batch.breaks[i]!;
      const start = batch.breaks[i + 1]!;
      if (offset >= length) break;
      if (offset > 0 || start !== this.nextSeq) index.push(`${this.size + offset} ${start}\n`);
      next = start + (length - offset);
    }
    if (length === 0) {
      // Nothing fits under the global cap: the machines hear that output came with the total at
      // the cap, so this session too is off (and health says so) instead of writing nothing.
      if (globalRoom <= 0 && sessionRoom > 0) this.owner.written(this);
      return;
    }
    this.owner.reserve(length);
    try {
      if (index.length > 0) await appendTo(this.paths.idx, Buffer.from(index.join('')));
      const written = await this.appendLog(batch.data.subarray(0, length));
      this.size += written;
      this.nextSeq = written === length ? next : null;
      if (this.lastError) this.owner.deps.log.info({ session: this.id }, 'the disk buffer is written again');
      this.lastError = null;
    } catch (err) {
      this.nextSeq = null;
      const message = (err as Error).message;
      if (this.lastError !== message)
        this.owner.deps.log.warn({ session: this.id, err: message }, 'the disk buffer could not be written; the stream goes on');
      this.lastError = message;
      return;
    } finally {
      this.owner.release(length);
    }
    this.owner.written(this);
  }

  /** Appends one batch to the log file, opening it when it is not open. */
  private async appendLog(data: Buffer): Promise<number> {
    // The idle timer is moved on, not made anew: one timer a session, not one a batch.
    this.logIdle?.refresh();
    try {
      if (this.log && !(await this.pathStillNamesLog())) {
        const replaced = this.log;
        this.log = null;
        await replaced.close().catch(() => undefined);
      }
      if (!this.log) {
        const opened = await openToAppend(this.paths.log);
        this.log = opened;
        const st = await opened.stat();
        this.logId = { dev: st.dev, ino: st.ino };
      }
      const { bytesWritten } = await this.log.write(data, 0, data.length);
      return bytesWritten;
    } catch (err) {
      void this.closeLog();
      throw err;
    } finally {
      if (this.log) {
        this.logIdle ??= setTimeout(() => void this.closeLog(), LOG_IDLE_CLOSE_MS).unref();
        this.logIdle.refresh();
      }
    }
  }

  /** The log's path still names the file open for it: not removed, not replaced. */
  private async pathStillNamesLog(): Promise<boolean> {
    const st = await lstat(this.paths.log).catch(() => null);
    return st !== null && st.isFile() && this.logId !== null && st.ino === this.logId.ino && st.dev === this.logId.dev;
  }

  /**
   * Closes the log file, once the write in flight (if any) is done: the next batch opens it
   * again. The watchdog calls it when it finds the file gone.
   */
  closeLog(): Promise<void> {
    if (this.logIdle) clearTimeout(this.logIdle);
    this.logIdle = null;
    const log = this.log;
    if (!log) return Promise.resolve();
    this.log = null;
    return (this.writing ?? Promise.resolve()).catch(() => undefined).then(() => log.close().catch(() => undefined));
  }

  /** The session was deleted: stop listening, forget the file (the caller removes it); resolves once the file is closed. */
  close(deleted: boolean): Promise<void> {
    const closed = this.closeLog();
    this.unsubscribe();
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.pending = null;
    if (deleted) this.actor.send({ type: 'session.deleted' });
    this.actor.stop();
    return closed;
  }
}
