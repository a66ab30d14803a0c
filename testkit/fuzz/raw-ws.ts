/**
 * WebSocket (RFC 6455) spoken by hand, for the fuzzer: frames with any bits set (FIN, RSV1-3, any
 * opcode, masked or not, a length in any of its three encodings, a declared length that lies),
 * the upgrade request written on a raw socket, and the server's frames read back.
 *
 * Invariant: the reader never trusts the server either: a frame it cannot read ends the reading
 * with a note, and the conversation is bounded in time.
 */
import { randomBytes } from 'node:crypto';
import type net from 'node:net';
import { constants, createInflateRaw, type InflateRaw } from 'node:zlib';

export const OP = { continuation: 0, text: 1, binary: 2, close: 8, ping: 9, pong: 10 } as const;

/** One client frame as the fuzzer describes it. */
export interface WsFrame {
  readonly fin: boolean;
  /** RSV1..3 as a 3-bit number (RSV1 is 4). */
  readonly rsv: number;
  readonly opcode: number;
  /** Masked (as a client must) or not. */
  readonly masked: boolean;
  readonly payload: Buffer;
  /** How the length is written: the shortest form, or a longer one than needed (still legal). */
  readonly lengthForm?: 'short' | '16' | '64';
  /** A length that is not the payload's: the header declares it, the payload sent is as given. */
  readonly declaredLength?: number;
}

/** Encodes a client frame exactly as described. */
export function encodeWsFrame(f: WsFrame): Buffer {
  const len = f.declaredLength ?? f.payload.length;
  const form = f.lengthForm ?? (len < 126 ? 'short' : len < 65536 ? '16' : '64');
  const form2 = form === 'short' && len >= 126 ? (len < 65536 ? '16' : '64') : form === '16' && len >= 65536 ? '64' : form;
  const extra = form2 === 'short' ? 0 : form2 === '16' ? 2 : 8;
  const head = Buffer.alloc(2 + extra + (f.masked ? 4 : 0));
  head[0] = (f.fin ? 0x80 : 0) | ((f.rsv & 7) << 4) | (f.opcode & 0x0f);
  head[1] = (f.masked ? 0x80 : 0) | (form2 === 'short' ? len : form2 === '16' ? 126 : 127);
  if (form2 === '16') head.writeUInt16BE(len, 2);
  if (form2 === '64') {
    head.writeUInt32BE(Math.floor(len / 2 ** 32), 2);
    head.writeUInt32BE(len >>> 0, 6);
  }
  if (!f.masked) return Buffer.concat([head, f.payload]);
  const mask = randomBytes(4);
  mask.copy(head, 2 + extra);
  const body = Buffer.from(f.payload);
  for (let i = 0; i < body.length; i++) body[i]! ^= mask[i & 3]!;
  return Buffer.concat([head, body]);
}

/** A close frame's payload: the code (2 bytes) and the reason. */
export function closePayload(code: number, reason: Buffer = Buffer.alloc(0)): Buffer {
  const b = Buffer.alloc(2);
  b.writeUInt16BE(code & 0xffff);
  return Buffer.concat([b, reason]);
}

/** A frame the server sent. */
export interface ServerWsFrame {
  readonly fin: boolean;
  readonly rsv: number;
  readonly opcode: number;
  readonly payload: Buffer;
}

/** Reads the whole server frames at the start of `buf`; what is left over waits for more bytes. */
export function readServerFrames(buf: Buffer): { frames: ServerWsFrame[]; rest: Buffer; problem: string | null } {
  const frames: ServerWsFrame[] = [];
  let at = 0;
  while (buf.length - at >= 2) {
    const b0 = buf[at]!;
    const b1 = buf[at + 1]!;
    if (b1 & 0x80) return { frames, rest: buf.subarray(at), problem: 'the server masked a frame' };
    let len = b1 & 0x7f;
    let off = at + 2;
    if (len === 126) {
      if (buf.length < off + 2) break;
      len = buf.readUInt16BE(off);
      off += 2;
    } else if (len === 127) {
      if (buf.length < off + 8) break;
      len = buf.readUInt32BE(off) * 2 ** 32 + buf.readUInt32BE(off + 4);
      off += 8;
    }
    if (buf.length < off + len) break;
    frames.push({ fin: (b0 & 0x80) !== 0, rsv: (b0 >> 4) & 7, opcode: b0 & 0x0f, payload: buf.subarray(off, off + len) });
    at = off + len;
  }
  return { frames, rest: buf.subarray(at), problem: null };
}

/** The upgrade request for `path`, with the headers given (the fuzzer may drop or spoil any). */
export function upgradeRequest(path: string, headers: readonly (readonly [string, string])[]): Buffer {
  return Buffer.from(`GET ${path} HTTP/1.1\r\n${headers.map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n`, 'latin1');
}

/** The headers of a correct upgrade (a fresh key each time). */
export function upgradeHeaders(host: string, extra: readonly (readonly [string, string])[] = []): [string, string][] {
  return [
    ['Host', host],
    ['Connection', 'Upgrade'],
    ['Upgrade', 'websocket'],
    ['Sec-WebSocket-Version', '13'],
    ['Sec-WebSocket-Key', randomBytes(16).toString('base64')],
    ...extra.map(([k, v]) => [k, v] as [string, string]),
  ];
}

/** What the server did on an open WebSocket so far. */
export interface WsConversation {
  /** Text messages (data frames, reassembled), as strings; compressed ones are not read. */
  readonly texts: readonly string[];
  /** The code of the server's close frame; null when none came (1005 when it had no payload). */
  readonly closeCode: number | null;
  /** The TCP connection ended. */
  readonly ended: boolean;
  /** Something the server sent that breaks RFC 6455. */
  readonly problem: string | null;
}

/**
 * Reads the server's side of an open WebSocket from the moment it is made (`initial` is what
 * arrived with the 101) for as long as the socket lives, so no frame is lost between two waits.
 * Pings are answered, so the server's keepalive does not end the socket. A compressed message
 * (RSV1: permessage-deflate, which the server uses for larger text) is inflated as a client
 * must, with the context kept from message to message; texts are kept in the order they came.
 */
export class WsReader implements WsConversation {
  readonly texts: string[] = [];
  closeCode: number | null = null;
  ended = false;
  problem: string | null = null;
  private buf: Buffer;
  private fragments: Buffer[] | null = null;
  private fragmentedText = false;
  private fragmentedCompressed = false;
  private wake: (() => void) | null = null;
  /** The texts still being inflated, in order. */
  private pending: Promise<void> = Promise.resolve();
  private inflater: InflateRaw | null = null;

  constructor(
    private readonly socket: net.Socket,
    initial: Buffer,
  ) {
    this.buf = initial;
    socket.on('data', (d: Buffer) => {
      this.buf = this.buf.length === 0 ? d : Buffer.concat([this.buf, d]);
      this.take();
    });
    socket.on('close', () => {
      this.ended = true;
      this.wake?.();
    });
    socket.on('error', () => undefined);
    socket.resume();
    this.take();
  }

  /** Waits until `done` holds, the server closed, or `timeoutMs` passed; whether `done` holds. */
  async until(done: (c: WsConversation) => boolean, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (!done(this) && this.closeCode === null && !this.ended && this.problem === null && Date.now() < deadline) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.max(0, deadline - Date.now()));
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = null;
    }
    await this.pending;
    return done(this);
  }

  /** Sends a frame, if the socket is still there. */
  send(f: WsFrame): void {
    if (!this.socket.destroyed) this.socket.write(encodeWsFrame(f));
  }

  /** What was read so far, as plain data (for a finding's evidence). */
  seen(): WsConversation {
    return { texts: [...this.texts], closeCode: this.closeCode, ended: this.ended, problem: this.problem };
  }

  private take(): void {
    const read = readServerFrames(this.buf);
    this.buf = read.rest;
    this.problem ??= read.problem;
    for (const f of read.frames) this.frame(f);
    this.wake?.();
  }

  private frame(f: ServerWsFrame): void {
    if (f.opcode === OP.close) this.closeCode = f.payload.length >= 2 ? f.payload.readUInt16BE(0) : 1005;
    else if (f.opcode === OP.ping) this.send({ fin: true, rsv: 0, opcode: OP.pong, masked: true, payload: Buffer.from(f.payload) });
    else if (f.opcode === OP.text || f.opcode === OP.binary) {
      const compressed = (f.rsv & 4) !== 0;
      if (f.fin) {
        if (f.opcode === OP.text) this.text(Buffer.from(f.payload), compressed);
      } else {
        this.fragments = [Buffer.from(f.payload)];
        this.fragmentedText = f.opcode === OP.text;
        this.fragmentedCompressed = compressed;
      }
    } else if (f.opcode === OP.continuation && this.fragments) {
      this.fragments.push(Buffer.from(f.payload));
      if (f.fin) {
        if (this.fragmentedText) this.text(Buffer.concat(this.fragments), this.fragmentedCompressed);
        this.fragments = null;
      }
    } else if (f.opcode !== OP.pong) this.problem ??= `the server sent opcode ${f.opcode}`;
  }

  /** Keeps a text message, inflated first when compressed, after those before it. */
  private text(payload: Buffer, compressed: boolean): void {
    this.pending = this.pending.then(async () => {
      try {
        this.texts.push((compressed ? await this.inflate(payload) : payload).toString('utf8'));
      } catch (err) {
        this.problem ??= `a compressed message did not inflate: ${String(err)}`;
      }
      this.wake?.();
    });
  }

  /** Inflates one message (RFC 7692: its bytes and the sync flush's tail), keeping the context. */
  private inflate(data: Buffer): Promise<Buffer> {
    const inflater = (this.inflater ??= createInflateRaw());
    return new Promise((resolve, reject) => {
      const out: Buffer[] = [];
      const onData = (d: Buffer) => out.push(d);
      inflater.on('data', onData);
      inflater.once('error', reject);
      inflater.write(Buffer.concat([data, Buffer.from([0x00, 0x00, 0xff, 0xff])]));
      inflater.flush(constants.Z_SYNC_FLUSH, () => {
        inflater.off('data', onData);
        inflater.off('error', reject);
        resolve(Buffer.concat(out));
      });
    });
  }
}
