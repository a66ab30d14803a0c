/**
 * Reads a growing Codex rollout file from where it was last read: only the new bytes, in
 * complete lines. The daemon's event loop never waits on it (async reads only).
 *
 * Invariants (the limits): at most `MAX_TAIL_READ_BYTES` are read per call (the rest on the next
 * one); a line longer than `MAX_ROLLOUT_LINE_BYTES` is not kept whole: its first
 * `ROLLOUT_HEAD_BYTES` are handed out instead (tool outputs and prompts may be megabytes); a
 * file that shrank (replaced) is read again from its start.
 */
import { open } from 'node:fs/promises';

/** Most bytes read from the file per call. */
export const MAX_TAIL_READ_BYTES = 4 * 1024 * 1024;
/** Longest line kept whole. */
export const MAX_ROLLOUT_LINE_BYTES = 1024 * 1024;
/** What is kept of a longer line: its head, where a record's type, payload type and names are. */
export const ROLLOUT_HEAD_BYTES = 8 * 1024;
const CHUNK_BYTES = 256 * 1024;

export class RolloutTail {
  private parts: Buffer[] = [];
  private partBytes = 0;
  /** The line being read is over the limit: only its head is kept. */
  private long = false;

  constructor(
    readonly path: string,
    private offset: number,
  ) {}

  /** The file's new complete lines since the last call (a too-long one as its head). Throws when the file cannot be read. */
  async read(): Promise<string[]> {
    const fh = await open(this.path, 'r');
    try {
      const { size } = await fh.stat();
      if (size < this.offset) this.restart();
      const end = Math.min(size, this.offset + MAX_TAIL_READ_BYTES);
      const lines: string[] = [];
      const buf = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, Math.max(1, end - this.offset)));
      while (this.offset < end) {
        const { bytesRead } = await fh.read(buf, 0, Math.min(buf.length, end - this.offset), this.offset);
        if (bytesRead === 0) break;
        this.offset += bytesRead;
        this.take(buf.subarray(0, bytesRead), lines);
      }
      return lines;
    } finally {
      await fh.close();
    }
  }

  private restart(): void {
    this.offset = 0;
    this.parts = [];
    this.partBytes = 0;
    this.long = false;
  }

  private take(data: Buffer, lines: string[]): void {
    let from = 0;
    for (let nl = data.indexOf(0x0a, from); nl >= 0; nl = data.indexOf(0x0a, from)) {
      this.keep(data.subarray(from, nl));
      const line = Buffer.concat(this.parts, this.partBytes).toString('utf8');
      if (line.trim() !== '') lines.push(line);
      this.parts = [];
      this.partBytes = 0;
      this.long = false;
      from = nl + 1;
    }
    this.keep(data.subarray(from));
  }

  /** Keeps a piece of the current line (a copy: the read buffer is reused), within the limits. */
  private keep(piece: Buffer): void {
    if (piece.length === 0) return;
    if (!this.long && this.partBytes + piece.length > MAX_ROLLOUT_LINE_BYTES) {
      this.long = true;
      const head = Buffer.concat(this.parts, this.partBytes).subarray(0, ROLLOUT_HEAD_BYTES);
      this.parts = [head];
      this.partBytes = head.length;
    }
    const room = this.long ? Math.max(0, ROLLOUT_HEAD_BYTES - this.partBytes) : piece.length;
    if (room === 0) return;
    const copy = Buffer.from(piece.subarray(0, room));
    this.parts.push(copy);
    this.partBytes += copy.length;
  }
}
