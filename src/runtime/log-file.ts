/**
 * The daemon's log file, capped: `tether.log` is the live file; when a line would take it past
 * its cap it becomes `tether.log.1` (the older ones move up to `.2`, `.3`; the oldest goes) and
 * a new `tether.log` starts. So the log never holds more than (kept + 1) x cap bytes
 * (docs/configuration.md "Logs").
 *
 * Written here rather than with a rolling-file library: those name the live file with a number
 * (`tether.1.log`, `tether.2.log`, …), and `tether.log` is where people and tools look.
 *
 * Lines are collected during an event-loop turn and written at its end in one write (or one
 * per file when the turn's lines cross a rotation): a write per line stalled the loop once per
 * log line, which showed in a storm of requests. `flush` writes what waits at once (on close,
 * and from the process's exit, so a crash keeps its last lines).
 *
 * Invariants: a line is never split across files and never written twice; a file is never
 * past its cap unless one line alone is larger; a failing disk never throws into the daemon
 * (the line is dropped, the next one tries again); files are 0600.
 */
import { closeSync, fstatSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';

/** Default cap of one log file. */
export const DEFAULT_LOG_MAX_BYTES = 10 * 1024 * 1024;
/** Rotated files kept besides the live one. */
export const LOG_FILES_KEPT = 3;

export class RotatingLogFile {
  private fd: number | null = null;
  private size = 0;
  private pending: Buffer[] = [];
  private flushScheduled = false;

  constructor(
    readonly path: string,
    readonly maxBytes = DEFAULT_LOG_MAX_BYTES,
    readonly kept = LOG_FILES_KEPT,
  ) {
    this.open();
  }

  /** The file that holds the `n`th older part (`n` from 1). */
  rotatedPath(n: number): string {
    return `${this.path}.${n}`;
  }

  /** Appends one line (or several whole lines) at the end of this event-loop turn. */
  write(line: string): boolean {
    this.pending.push(Buffer.from(line, 'utf8'));
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(() => this.flush());
    }
    return true;
  }

  /** Writes every line that waits now, rotating before a line that would pass the cap. */
  flush(): void {
    this.flushScheduled = false;
    const lines = this.pending;
    this.pending = [];
    let batch: Buffer[] = [];
    let batchBytes = 0;
    for (const bytes of lines) {
      if (this.size + batchBytes > 0 && this.size + batchBytes + bytes.length > this.maxBytes) {
        this.append(batch, batchBytes);
        batch = [];
        batchBytes = 0;
        this.rotate();
      }
      batch.push(bytes);
      batchBytes += bytes.length;
    }
    this.append(batch, batchBytes);
  }

  private append(batch: Buffer[], bytes: number): void {
    if (bytes === 0) return;
    if (this.fd === null) this.open();
    if (this.fd === null) return;
    try {
      writeSync(this.fd, batch.length === 1 ? batch[0]! : Buffer.concat(batch, bytes));
      this.size += bytes;
    } catch {
      // A full or failing disk: these lines are lost; the daemon goes on.
    }
  }

  close(): void {
    this.flush();
    if (this.fd === null) return;
    try {
      closeSync(this.fd);
    } catch {
      // Already gone.
    }
    this.fd = null;
  }

  private open(): void {
    try {
      this.fd = openSync(this.path, 'a', 0o600);
      this.size = fstatSync(this.fd).size;
    } catch {
      this.fd = null;
      this.size = 0;
    }
  }

  private rotate(): void {
    this.close();
    try {
      rmSync(this.rotatedPath(this.kept), { force: true });
      for (let n = this.kept - 1; n >= 1; n--) {
        try {
          renameSync(this.rotatedPath(n), this.rotatedPath(n + 1));
        } catch {
          // That one does not exist yet.
        }
      }
      renameSync(this.path, this.rotatedPath(1));
    } catch {
      // It cannot be moved aside: start it again rather than grow past the cap.
      rmSync(this.path, { force: true });
    }
    this.open();
  }
}
