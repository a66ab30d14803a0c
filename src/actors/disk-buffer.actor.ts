/**
 * The disk buffer (docs/disk-buffer.md): each session's output appended to
 * `{data_dir}/buffers/<id>.log`, exactly the bytes its clients get, with the per-session and
 * global caps and the free-space watchdog of the disk-buffer machine
 * (src/machines/disk-buffer.machine.ts): one machine actor per session and one (`*`) for the
 * sidecar as a whole, which health reads. This file owns the buffers as a whole (the global
 * cap, the watchdog, the start-up cleanup, health); one session's batching and writes are
 * session-buffer.ts, the files' paths and measuring disk-buffer-files.ts.
 *
 * Invariants:
 * - Memory is bounded: output waits in a per-session batch of at most MAX_PENDING_BYTES,
 *   written every FLUSH_MS (or at FLUSH_BYTES) with one write in flight per session. When the
 *   disk is slower than the stream the waiting batch is dropped and the gap is noted, never
 *   queued without bound.
 * - Positions and the file agree: `<id>.idx` holds a line `<file offset> <stream position>`
 *   wherever the bytes in the file stop being contiguous in the stream (a new daemon run, a gap,
 *   a dropped batch, writing resumed after `off`). Positions never repeat for a session (see
 *   pane-stream.ts), so a position from before a restart maps to this session's bytes or to
 *   nothing, never to another's.
 * - The caps hold to the byte, the global one across sessions too: a write reserves its bytes
 *   against the global total before it starts (the total counts every reservation in flight),
 *   and is cut to the room left, so writers never overshoot together. The total is the live
 *   sessions' sizes (kept in memory, exact) plus the other files' sizes (measured by the
 *   watchdog), so a measurement never loses a write that finished while it ran.
 * - Every path stays inside the buffers dir, whatever the id (`bufferPaths` refuses anything
 *   but a session name); files are created 0600 and never followed through a symlink.
 * - Nothing here throws into the stream: a failed write (disk full, read-only, the file
 *   replaced by a directory) is logged, shown in health, and the next batch tries again.
 */
import { lstatSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { createActor, type InspectionEvent } from 'xstate';
import { diskBufferMachine, type DiskBufferLimits, type DiskBufferOffReason } from '../machines/disk-buffer.machine.js';
import type { Logger } from '../log.js';
import type { PaneStream } from '../stream/pane-stream.js';
import { bufferPaths, measureBuffers } from './disk-buffer-files.js';
import { SessionBuffer, type BufferActor } from './session-buffer.js';

export { bufferPaths } from './disk-buffer-files.js';
export const MIB = 1024 * 1024;
export const GIB = 1024 * MIB;

/** What the start-up cleanup knows of a tmux session. */
export interface SessionActivity {
  /** Latest output, input or attach in tmux, epoch ms. */
  readonly lastActivityMs: number;
  /** A client (an SSH user) is attached right now. */
  readonly attached: boolean;
  /** Every pane of it has exited. */
  readonly ended: boolean;
}

export interface DiskBuffersDeps {
  readonly dir: string;
  readonly limits: DiskBufferLimits;
  /** Free bytes on the buffers' file system (statfs; injected in tests). */
  readonly freeBytes: () => Promise<number>;
  readonly watchdogIntervalMs: number;
  readonly now: () => number;
  readonly log: Logger;
  /** XState inspection (the /ops view) of a session's buffer actor, or of the global one (null). */
  readonly inspect?: (sessionId: string | null) => (ev: InspectionEvent) => void;
}

/** What health shows. */
export interface DiskBufferStatus {
  readonly state: 'starting' | 'writing' | 'off';
  readonly reason: string | null;
  readonly totalBytes: number;
  readonly freeBytes: number | null;
  /** Per-session problems (a cap reached, a failed write), as sentences. */
  readonly warnings: string[];
}

const REASONS: Record<DiskBufferOffReason, (d: DiskBuffers) => string> = {
  'global-cap': (d) =>
    `disk-buffer writing is off for every session: the buffers passed global_cap_mb (${(d.limits.globalCapBytes / MIB).toFixed(0)} MB); delete sessions or raise the cap`,
  'low-disk': (d) =>
    `disk-buffer writing is off for every session: free disk is below min_free_gb (${(d.limits.minFreeBytes / GIB).toFixed(2)} GB); it resumes above ${((d.limits.minFreeBytes + d.limits.resumeMarginBytes) / GIB).toFixed(2)} GB`,
};

export class DiskBuffers {
  private readonly sessions = new Map<string, SessionBuffer>();
  /** The sidecar-wide actor: its state is "writing globally" or "off globally". */
  private readonly global: BufferActor;
  /** Sizes of the files of no live session (kept, or from an earlier run), by id, as last measured. */
  private others = new Map<string, number>();
  /** Bytes reserved by writes in flight: they count toward the global cap before they land. */
  private reserved = 0;
  private free: number | null = null;
  private timer: NodeJS.Timeout | null = null;
  private checking: Promise<void> | null = null;

  constructor(readonly deps: DiskBuffersDeps) {
    this.global = createActor(diskBufferMachine, {
      input: { limits: deps.limits },
      ...(deps.inspect ? { id: 'diskBuffer', inspect: deps.inspect(null) } : {}),
    }).start();
  }

  get limits(): DiskBufferLimits {
    return this.deps.limits;
  }

  /** All buffer files together, in bytes: the live sessions' exact sizes and the others' measured ones. */
  get total(): number {
    let sum = 0;
    for (const size of this.others.values()) sum += size;
    for (const b of this.sessions.values()) sum += b.size;
    return sum;
  }

  /** Bytes a write may still add under the global cap, the writes in flight counted. */
  globalRoom(): number {
    return this.limits.globalCapBytes - this.total - this.reserved;
  }

  /** A write takes `bytes` of the room before it starts... */
  reserve(bytes: number): void {
    this.reserved += bytes;
  }

  /** ...and gives them back when it ended (what it wrote is in its session's size by then). */
  release(bytes: number): void {
    this.reserved -= bytes;
  }

  /** Makes the dir, measures what is there, runs the first watchdog check and starts the timer. */
  async start(): Promise<void> {
    await mkdir(this.deps.dir, { recursive: true, mode: 0o700 });
    this.global.send({ type: 'buffer.startup', idleMs: 0 });
    await this.check();
    this.timer = setInterval(() => void this.check(), this.deps.watchdogIntervalMs);
    this.timer.unref();
  }

  /**
   * The start-up cleanup (docs/contract.md row "any --startup [inactive > idle_days]--> buffer file deleted"):
   * every buffer file whose session had no output and no client for longer than idle_days is
   * deleted, and a file without a session the same way; returns the sessions that have also
   * ended (the caller removes those from tmux).
   */
  async cleanupIdle(activity: ReadonlyMap<string, SessionActivity>): Promise<{ deleted: string[]; endedSessions: string[] }> {
    const deleted: string[] = [];
    const endedSessions: string[] = [];
    for (const [id, { stats }] of await measureBuffers(this.deps.dir)) {
      const a = activity.get(id);
      const last = Math.max(stats.mtimeMs, a?.lastActivityMs ?? 0);
      const idleMs = a?.attached ? 0 : this.deps.now() - last;
      const judge = createActor(diskBufferMachine, { input: { limits: this.deps.limits } }).start();
      judge.send({ type: 'buffer.startup', idleMs });
      const verdict = judge.getSnapshot().value;
      judge.stop();
      if (verdict !== 'deleted') continue;
      const paths = bufferPaths(this.deps.dir, id);
      await rm(paths.log, { force: true });
      await rm(paths.idx, { force: true });
      deleted.push(id);
      if (a?.ended) endedSessions.push(id);
    }
    if (deleted.length > 0) this.deps.log.info({ deleted, endedSessions }, 'idle disk buffers deleted at start-up');
    return { deleted, endedSessions };
  }

  /** Starts buffering a session's stream (its runtime was created). */
  attach(id: string, stream: PaneStream): () => void {
    let paths: { log: string; idx: string };
    try {
      paths = bufferPaths(this.deps.dir, id);
    } catch (err) {
      this.deps.log.warn({ err: (err as Error).message }, 'no disk buffer for this session');
      return () => undefined;
    }
    this.detach(id);
    this.others.delete(id);
    // The size on disk (an earlier run's bytes): the cap counts them, and writing goes on after them.
    let size = 0;
    try {
      size = lstatSync(paths.log).size;
    } catch {
      // No file yet.
    }
    const buffer = new SessionBuffer(id, paths, size, this, this.deps.limits);
    this.sessions.set(id, buffer);
    buffer.attach(stream);
    return () => {
      if (this.sessions.get(id) === buffer) {
        void buffer.flush();
        this.detach(id);
      }
    };
  }

  /** Stops a live session's buffer; its file stays and counts among the others. */
  private detach(id: string): void {
    const buffer = this.sessions.get(id);
    if (!buffer) return;
    void buffer.close(false);
    this.sessions.delete(id);
    this.others.set(id, buffer.size);
  }

  /** DELETE without keepBuffer: the session's files are removed. */
  async delete(id: string): Promise<void> {
    const paths = bufferPaths(this.deps.dir, id);
    const buffer = this.sessions.get(id);
    const closed = buffer?.close(true);
    this.sessions.delete(id);
    this.others.delete(id);
    await closed;
    await rm(paths.log, { force: true });
    await rm(paths.idx, { force: true });
  }

  /** A batch was written: the machines hear the new sizes. */
  written(buffer: SessionBuffer): void {
    const before = buffer.state;
    const totalBytes = this.total;
    buffer.actor.send({ type: 'output.written', sessionBytes: buffer.size, totalBytes });
    this.global.send({ type: 'output.written', sessionBytes: 0, totalBytes });
    if (before === 'writing' && buffer.state === 'stopped') {
      this.deps.log.warn(
        { session: buffer.id, capMb: this.limits.sessionCapBytes / MIB },
        'the session buffer reached its cap: later output is not written to disk',
      );
    }
    this.logGlobalChange();
  }

  private lastGlobal = 'writing';
  private logGlobalChange(): void {
    // The machine's state alone (every write asks): the whole status only when it changed.
    const value = this.global.getSnapshot().value;
    if ((value === 'off' ? 'off' : value === 'starting' ? 'starting' : 'writing') === this.lastGlobal) return;
    const s = this.status();
    this.lastGlobal = s.state;
    if (s.state === 'off') this.deps.log.warn({ reason: s.reason }, 'disk-buffer writing is off globally');
    else this.deps.log.info('disk-buffer writing resumed');
  }

  /** One watchdog check: free space and the total, to every machine. */
  check(): Promise<void> {
    this.checking ??= (async () => {
      try {
        try {
          this.free = await this.deps.freeBytes();
        } catch (err) {
          this.deps.log.warn({ err: (err as Error).message }, 'free disk space could not be read');
          return;
        }
        this.remeasure(await measureBuffers(this.deps.dir));
        const event = { type: 'watchdog.check' as const, freeBytes: this.free, totalBytes: this.total };
        this.global.send(event);
        for (const b of this.sessions.values()) b.actor.send(event);
        this.logGlobalChange();
      } finally {
        this.checking = null;
      }
    })();
    return this.checking;
  }

  /**
   * Takes the measured sizes: the other files' as they are; a live session's only when no write
   * of it is in flight (then the file is exactly its bytes: a file truncated by hand is seen),
   * read now, synchronously, so no write can finish between the look and the update.
   */
  private remeasure(measured: ReadonlyMap<string, { size: number }>): void {
    const others = new Map<string, number>();
    for (const [id, { size }] of measured) if (!this.sessions.has(id)) others.set(id, size);
    this.others = others;
    for (const b of this.sessions.values()) {
      if (b.writing) continue;
      try {
        b.size = lstatSync(bufferPaths(this.deps.dir, b.id).log).size;
      } catch (err) {
        // Gone (removed by hand): the next write starts it again. Unreadable: keep what is known.
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
          b.size = 0;
          void b.closeLog();
        }
      }
    }
  }

  status(): DiskBufferStatus {
    const snap = this.global.getSnapshot();
    const state = snap.value === 'off' ? 'off' : snap.value === 'starting' ? 'starting' : 'writing';
    const warnings: string[] = [];
    for (const b of this.sessions.values()) {
      if (b.state === 'stopped')
        warnings.push(
          `session ${b.id}: its disk buffer reached session_cap_mb (${(this.limits.sessionCapBytes / MIB).toFixed(0)} MB); later output is not written to disk`,
        );
      if (b.lastError) warnings.push(`session ${b.id}: the disk buffer cannot be written (${b.lastError})`);
      if (b.dropped > 0)
        warnings.push(`session ${b.id}: ${b.dropped} bytes were not written to the disk buffer (the disk was slower than the output)`);
    }
    return {
      state,
      reason: snap.context.reason ? REASONS[snap.context.reason](this) : null,
      totalBytes: this.total,
      freeBytes: this.free,
      warnings,
    };
  }

  /** The state of one session's buffer machine (for tests and `tether status`). */
  sessionState(id: string): string | null {
    return this.sessions.get(id)?.state ?? null;
  }

  /** Writes what waits for one session (a reader of its history wants the latest bytes). */
  async flushSession(id: string): Promise<void> {
    await this.sessions.get(id)?.flush();
  }

  /** Writes everything waiting (tests; shutdown). */
  async flush(): Promise<void> {
    await Promise.all([...this.sessions.values()].map((b) => b.flush()));
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.flush().catch(() => undefined);
    const closed = [...this.sessions.values()].map((b) => b.close(false));
    this.sessions.clear();
    await Promise.all(closed);
    this.global.stop();
  }
}
