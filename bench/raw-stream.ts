/**
 * The measuring side of the stream benchmarks: a raw stream socket that only counts bytes, follows
 * `seq` and looks for markers, so it costs as little CPU as the bare `tmux -C` reader it is
 * compared with.
 */
import WebSocket from 'ws';
import { decodeChunkFrame } from '../src/protocol/frames.js';
import { CLIENT_DEFLATE_MIN_BYTES } from '../src/reference-client/session-stream.js';
import { waitFor } from './figures.js';
import type { BenchDaemon } from './harness.js';

/** Accumulates a byte stream's last bytes to find a marker that may straddle chunks. */
export class MarkerScan {
  private tail = '';
  constructor(private readonly marker: string) {}
  /** True once the marker has been seen in what was fed since the last reset. */
  feed(bytes: Buffer): boolean {
    const s = this.tail + bytes.toString('latin1', Math.max(0, bytes.length - 4096));
    if (s.includes(this.marker)) {
      this.tail = '';
      return true;
    }
    this.tail = s.slice(-this.marker.length);
    return false;
  }
  reset(): void {
    this.tail = '';
  }
}

/** A fresh stream client on `session`, once it has its first snapshot (the screen to follow from). */
export async function streamWithBase(bd: BenchDaemon, session: string, deflate = true): Promise<RawStream> {
  const client = new RawStream(bd, session, null, deflate);
  await client.opened;
  await waitFor('the first snapshot', () => client.snapshots > 0);
  return client;
}

/**
 * A stream client that does the minimum a client must (resume, follow seq, decode a
 * snapshot) and nothing else: the measuring side of the tether runs.
 */
export class RawStream {
  readonly ws: WebSocket;
  lastSeq: number | null;
  /** When the socket was created (before the TCP connect and any TLS handshake). */
  readonly startedAt = performance.now();
  openedAt = 0;
  dataBytes = 0;
  snapshots = 0;
  onData: ((data: Buffer, seq: number) => void) | null = null;
  onSnapshot: ((bytes: Buffer, seq: number, frameBytes: number) => void) | null = null;
  readonly opened: Promise<void>;
  readonly closed: Promise<void>;
  /** When the first frame of any kind arrived. */
  readonly firstFrame: Promise<number>;

  constructor(bd: BenchDaemon, session: string, lastSeq: number | null, deflate = true, path = 'stream') {
    this.lastSeq = lastSeq;
    const url = `${bd.base.replace(/^http/, 'ws')}/sessions/${session}/${path}`;
    this.ws = new WebSocket(url, bd.wsOptions(deflate));
    this.ws.binaryType = 'nodebuffer';
    this.opened = new Promise((resolve, reject) => {
      this.ws.once('open', () => {
        this.openedAt = performance.now();
        if (path === 'stream') this.ws.send(JSON.stringify({ type: 'resume', lastSeq: this.lastSeq }));
        resolve();
      });
      this.ws.once('error', reject);
    });
    this.closed = new Promise((resolve) => this.ws.once('close', () => resolve()));
    this.ws.on('error', () => undefined);
    this.firstFrame = new Promise((resolve) => this.ws.once('message', () => resolve(performance.now())));
    this.ws.on('message', (data: Buffer, isBinary) => {
      if (isBinary) {
        const { seq, data: bytes } = decodeChunkFrame(data);
        this.dataBytes += bytes.length;
        this.lastSeq = seq;
        this.onData?.(bytes, seq);
        return;
      }
      const text = data.toString('utf8');
      if (!text.startsWith('{"type":"snapshot"')) return;
      const frame = JSON.parse(text) as { seq: number; data: string };
      const bytes = Buffer.from(frame.data, 'base64');
      this.snapshots++;
      this.lastSeq = frame.seq;
      this.onSnapshot?.(bytes, frame.seq, data.length);
    });
  }

  /** As the reference client sends: small frames uncompressed. */
  send(frame: object): void {
    const text = JSON.stringify(frame);
    this.ws.send(text, { compress: text.length >= CLIENT_DEFLATE_MIN_BYTES });
  }

  /** Bytes read from the network so far (the wire, after compression). */
  get wireBytesRead(): number {
    return (this.ws as unknown as { _socket?: { bytesRead: number } })._socket?.bytesRead ?? 0;
  }

  close(): Promise<void> {
    this.ws.terminate();
    return this.closed;
  }
}
