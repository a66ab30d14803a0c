/**
 * The three phones of the days soak (bench/days.bench.ts), and the stream client they share:
 *
 * - the streaming phone: a stream on every session, from its first snapshot on, that checks each
 *   chunk starts where the last one ended (no byte lost or doubled), keeps the recent bytes of
 *   each session by position (what a waking phone's delta is compared with) and feeds a terminal
 *   emulator per session (what is compared with tmux's own screen);
 * - the sleeping phone: wakes every few minutes, resumes on a few sessions with its last
 *   positions through a shaped link (bench/shaper.ts, LTE), stays a while, and sleeps by dropping
 *   its connections without a close (as a phone whose radio went); every delta it got is
 *   compared byte for byte with the streaming phone's, every snapshot's screen with tmux's;
 * - the idle phone: one stream on the idle session, nothing but keepalives, which must never be
 *   dropped by the daemon and must get its next byte at once.
 */
import WebSocket from 'ws';
import xtermHeadless from '@xterm/headless';
import { Unicode11Addon } from '@xterm/addon-unicode11';
import { decodeChunkFrame } from '../src/protocol/frames.js';

const { Terminal } = xtermHeadless;
type Term = InstanceType<typeof Terminal>;

/** The pane's size (src/tmux/sessions/session-create.ts: AGENT_COLUMNS x AGENT_ROWS). */
export const COLS = 120;
export const ROWS = 40;

export interface StreamOptions {
  /** ws(s)://host:port of the daemon (or of a shaping proxy in front of it). */
  readonly wsBase: string;
  readonly token: string;
  readonly session: string;
  /** The position to resume from (null: a fresh client, a snapshot first). */
  readonly lastSeq: number | null;
  readonly deflate: boolean;
}

/**
 * A stream socket that resumes with its position in the URL (as the reference client does) and
 * reports chunks and snapshots as they come; nothing else.
 */
export class StreamClient {
  readonly ws: WebSocket;
  lastSeq: number | null;
  readonly createdAt = performance.now();
  /** When `session-meta` came (the daemon took the position). */
  metaAt = 0;
  snapshots = 0;
  chunks = 0;
  /** A close the daemon chose (a code and reason), as opposed to one the bench chose. */
  closeCode: number | null = null;
  dropped = false;
  onChunk: ((start: number, seq: number, data: Buffer) => void) | null = null;
  onSnapshot: ((seq: number, bytes: Buffer) => void) | null = null;
  onMeta: (() => void) | null = null;
  onErrorFrame: ((code: string) => void) | null = null;
  readonly closed: Promise<void>;

  constructor(opts: StreamOptions) {
    this.lastSeq = opts.lastSeq;
    const url = `${opts.wsBase}/sessions/${encodeURIComponent(opts.session)}/stream?lastSeq=${opts.lastSeq === null ? 'null' : String(opts.lastSeq)}`;
    this.ws = new WebSocket(url, {
      headers: { authorization: `Bearer ${opts.token}` },
      perMessageDeflate: opts.deflate,
      rejectUnauthorized: false,
    });
    this.ws.binaryType = 'nodebuffer';
    this.ws.on('error', () => undefined);
    this.closed = new Promise((resolve) =>
      this.ws.once('close', (code) => {
        this.closeCode = code;
        resolve();
      }),
    );
    this.ws.on('message', (data: Buffer, isBinary) => {
      if (isBinary) {
        const { seq, data: bytes } = decodeChunkFrame(data);
        const start = seq - bytes.length;
        this.chunks++;
        this.onChunk?.(start, seq, bytes);
        this.lastSeq = seq;
        return;
      }
      const text = data.toString('utf8');
      if (text.startsWith('{"type":"snapshot"')) {
        const frame = JSON.parse(text) as { seq: number; data: string };
        this.snapshots++;
        this.lastSeq = frame.seq;
        this.onSnapshot?.(frame.seq, Buffer.from(frame.data, 'base64'));
        return;
      }
      if (text.startsWith('{"type":"session-meta"')) {
        if (this.metaAt === 0) this.metaAt = performance.now();
        this.onMeta?.();
        return;
      }
      if (text.startsWith('{"type":"error"')) this.onErrorFrame?.((JSON.parse(text) as { code: string }).code);
    });
  }

  /** Drops the connection without a close frame (a phone whose radio went). */
  drop(): Promise<void> {
    this.dropped = true;
    this.ws.terminate();
    return this.closed;
  }
}

/** A terminal emulator at the pane's size, Unicode 11 widths as tmux's. */
export function newTerm(scrollback = 0): Term {
  const term = new Terminal({ cols: COLS, rows: ROWS, scrollback, allowProposedApi: true });
  term.loadAddon(new Unicode11Addon());
  term.unicode.activeVersion = '11';
  return term;
}

/** Resolves once everything written to `term` so far is applied. */
export const settled = (term: Term): Promise<void> => new Promise((resolve) => term.write('', resolve));

/** The visible rows (trailing blanks trimmed) and the cursor. */
export function screenOf(term: Term): { rows: string[]; cursor: [number, number] } {
  const buf = term.buffer.active;
  const rows: string[] = [];
  for (let y = 0; y < ROWS; y++) rows.push((buf.getLine(buf.baseY + y)?.translateToString(true) ?? '').trimEnd());
  return { rows, cursor: [buf.cursorX, buf.cursorY] };
}

/** The first difference between two screens, or null when they are the same. */
export function screenDiff(
  a: { rows: string[]; cursor: [number, number] },
  b: { rows: string[]; cursor: [number, number] },
): string | null {
  for (let y = 0; y < ROWS; y++) {
    if ((a.rows[y] ?? '') !== (b.rows[y] ?? '')) return `row ${y}: ${JSON.stringify(a.rows[y])} vs tmux ${JSON.stringify(b.rows[y])}`;
  }
  if (a.cursor[0] !== b.cursor[0] || a.cursor[1] !== b.cursor[1]) return `cursor ${a.cursor.join(',')} vs tmux ${b.cursor.join(',')}`;
  return null;
}

/** The recent bytes of one stream by position: a window that slides forward, at most `cap` bytes. */
export class ByteRecord {
  private parts: Buffer[] = [];
  private bytes = 0;
  /** The position of the first byte held. */
  start = 0;

  constructor(private readonly cap: number) {}

  reset(at: number): void {
    this.parts = [];
    this.bytes = 0;
    this.start = at;
  }

  get end(): number {
    return this.start + this.bytes;
  }

  append(data: Buffer): void {
    this.parts.push(Buffer.from(data));
    this.bytes += data.length;
    while (this.bytes - (this.parts[0]?.length ?? 0) >= this.cap && this.parts.length > 1) {
      const first = this.parts.shift()!;
      this.bytes -= first.length;
      this.start += first.length;
    }
  }

  /** The bytes of [from, to), or null when the window does not hold them all. */
  range(from: number, to: number): Buffer | null {
    if (from < this.start || to > this.end) return null;
    const all = this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts);
    this.parts = [all];
    return all.subarray(from - this.start, to - this.start);
  }
}

/** One session as the streaming phone holds it. */
export interface LiveSession {
  readonly name: string;
  client: StreamClient;
  readonly term: Term;
  readonly record: ByteRecord;
  /** Chunks that did not start where the last one ended: bytes lost (gap) or sent twice (overlap). */
  gaps: number;
  overlaps: number;
  /** Snapshots after the first: the stream could not go on and the phone was given the screen again. */
  resyncs: number;
  based: boolean;
  /** The session was deleted by the bench (its close is expected). */
  ending: boolean;
}

/** The streaming phone: a stream on every session, checked chunk by chunk. */
export class StreamingPhone {
  readonly sessions = new Map<string, LiveSession>();
  /** Closes the daemon chose on a session the bench did not delete. */
  unexpectedCloses = 0;
  bytes = 0;

  constructor(
    private readonly wsBase: string,
    private readonly token: string,
    private readonly deflate: boolean,
    private readonly recordCap: number,
  ) {}

  add(name: string): LiveSession {
    const client = new StreamClient({ wsBase: this.wsBase, token: this.token, session: name, lastSeq: null, deflate: this.deflate });
    const live: LiveSession = {
      name,
      client,
      term: newTerm(),
      record: new ByteRecord(this.recordCap),
      gaps: 0,
      overlaps: 0,
      resyncs: 0,
      based: false,
      ending: false,
    };
    this.wire(live);
    this.sessions.set(name, live);
    return live;
  }

  private wire(live: LiveSession): void {
    const c = live.client;
    c.onSnapshot = (seq, bytes) => {
      // A screen-first snapshot comes as two frames at the same position; both are the one snapshot.
      if (live.based && seq !== live.record.end) live.resyncs++;
      live.based = true;
      live.record.reset(seq);
      live.term.reset();
      live.term.write(new Uint8Array(bytes));
    };
    c.onChunk = (start, seq, data) => {
      if (!live.based) return;
      const end = live.record.end;
      if (start > end) {
        live.gaps++;
        live.record.reset(start);
      } else if (start < end) {
        live.overlaps++;
        // Keep what is new, so the record stays the stream's.
        const fresh = data.subarray(end - start);
        live.record.append(fresh);
        live.term.write(new Uint8Array(fresh));
        this.bytes += fresh.length;
        return;
      }
      live.record.append(data);
      live.term.write(new Uint8Array(data));
      this.bytes += data.length;
    };
    void c.closed.then(() => {
      if (!live.ending && !c.dropped && this.sessions.get(live.name) === live) {
        this.unexpectedCloses++;
        // A phone connects again, from where it was.
        live.client = new StreamClient({
          wsBase: this.wsBase,
          token: this.token,
          session: live.name,
          lastSeq: c.lastSeq,
          deflate: this.deflate,
        });
        this.wire(live);
      }
    });
  }

  /** The session is being deleted: its close is expected. */
  ending(name: string): void {
    const live = this.sessions.get(name);
    if (live) live.ending = true;
  }

  remove(name: string): void {
    const live = this.sessions.get(name);
    if (!live) return;
    live.ending = true;
    void live.client.drop();
    live.term.dispose();
    this.sessions.delete(name);
  }

  totals(): { gaps: number; overlaps: number; resyncs: number } {
    let gaps = 0;
    let overlaps = 0;
    let resyncs = 0;
    for (const s of this.sessions.values()) {
      gaps += s.gaps;
      overlaps += s.overlaps;
      resyncs += s.resyncs;
    }
    return { gaps, overlaps, resyncs };
  }

  close(): Promise<void> {
    for (const name of [...this.sessions.keys()]) this.remove(name);
    return Promise.resolve();
  }
}
