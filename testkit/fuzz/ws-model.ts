/**
 * What a WebSocket server must do with a run of client frames, by RFC 6455 and the limits
 * docs/api.md gives (a message at most 1 MiB + 4 KiB; ws's 16384 fragments): the close it must
 * answer with at the first frame that breaks the protocol, the echo of a client's own close, or
 * the messages it must hand to tether. The fuzzer compares the daemon with this.
 *
 * Invariant: the frames are read in order and the first fault decides, as a receiver that reads
 * a stream must; nothing after it counts.
 */
import { isUtf8 } from 'node:buffer';
import { constants, inflateRawSync } from 'node:zlib';
import { OP, type WsFrame } from './raw-ws.js';

/** A data message the server hands on. */
export interface WsMessage {
  readonly binary: boolean;
  readonly data: Buffer;
}

export type WsOutcome =
  /** The server must close with this code (the protocol's, for a fault), having handed on the messages before it. */
  | { readonly kind: 'refused'; readonly code: number; readonly why: string; readonly messages: readonly WsMessage[] }
  /** The client closed: the server echoes its code (1005: a close without one). */
  | { readonly kind: 'echo'; readonly code: number; readonly messages: readonly WsMessage[] }
  | { readonly kind: 'open'; readonly messages: readonly WsMessage[] };

export interface WsLimits {
  readonly maxPayload: number;
  readonly maxFragments: number;
  /** permessage-deflate was agreed (with no context takeover either way). */
  readonly deflate: boolean;
}

const TRAILER = Buffer.from([0x00, 0x00, 0xff, 0xff]);

/** A close code a peer may send (RFC 6455 7.4, as ws checks it). */
const validCloseCode = (c: number) => (c >= 1000 && c <= 1014 && c !== 1004 && c !== 1005 && c !== 1006) || (c >= 3000 && c <= 4999);

/** The 7-bit length field the frame's header carries. */
function lengthField(f: WsFrame): number {
  const len = f.declaredLength ?? f.payload.length;
  if (f.lengthForm === '16') return 126;
  if (f.lengthForm === '64') return 127;
  return len < 126 ? len : len < 65536 ? 126 : 127;
}

/**
 * Inflates a compressed message as ws does (sync flush, bounded): `whole` with the tail RFC 7692
 * drops, else the fragments so far (ws inflates each fragment as it comes); a code on failure.
 */
function inflate(data: Buffer, maxPayload: number, whole = true): { data: Buffer } | { code: number; why: string } {
  try {
    const input = whole ? Buffer.concat([data, TRAILER]) : data;
    const out = inflateRawSync(input, { finishFlush: constants.Z_SYNC_FLUSH, maxOutputLength: maxPayload + 1 });
    if (out.length > maxPayload) return { code: 1009, why: 'a compressed message that inflates past the limit' };
    return { data: out };
  } catch (err) {
    if (err instanceof RangeError) return { code: 1009, why: 'a compressed message that inflates past the limit' };
    return { code: 1007, why: 'a compressed message that does not inflate' };
  }
}

/** What the server must do with `frames`, in order. */
export function expectedWsOutcome(frames: readonly WsFrame[], limits: WsLimits): WsOutcome {
  const messages: WsMessage[] = [];
  let msg: { opcode: number; compressed: boolean; parts: Buffer[]; total: number; fragments: number } | null = null;
  const refused = (code: number, why: string): WsOutcome => ({ kind: 'refused', code, why, messages });
  for (const f of frames) {
    if (f.rsv & 3) return refused(1002, 'RSV2 or RSV3 set');
    const rsv1 = (f.rsv & 4) !== 0;
    if (rsv1 && !limits.deflate) return refused(1002, 'RSV1 set without permessage-deflate');
    const len7 = lengthField(f);
    const declared = f.declaredLength ?? f.payload.length;
    const control = f.opcode >= 8;
    if (f.opcode === OP.continuation) {
      if (rsv1) return refused(1002, 'RSV1 on a continuation');
      if (!msg) return refused(1002, 'a continuation with no message begun');
    } else if (f.opcode === OP.text || f.opcode === OP.binary) {
      if (msg) return refused(1002, 'a new message inside a fragmented one');
    } else if (f.opcode === OP.close || f.opcode === OP.ping || f.opcode === OP.pong) {
      if (!f.fin) return refused(1002, 'a fragmented control frame');
      if (rsv1) return refused(1002, 'RSV1 on a control frame');
      if (len7 > 125 || (f.opcode === OP.close && len7 === 1)) return refused(1002, 'a control frame of a bad length');
    } else return refused(1002, `opcode ${f.opcode}`);
    if (!f.masked) return refused(1002, 'an unmasked client frame');
    if (declared >= 2 ** 53) return refused(1009, 'a length past 2^53');
    if (!control) {
      msg ??= { opcode: f.opcode, compressed: rsv1, parts: [], total: 0, fragments: 0 };
      msg.total += declared;
      if (declared > 0 && msg.total > limits.maxPayload) return refused(1009, 'a message past the size limit');
    }
    if (declared !== f.payload.length) throw new Error('the model reads only frames whose payload is whole, or refused by their header');
    if (f.opcode === OP.close) {
      if (f.payload.length === 0) return { kind: 'echo', code: 1005, messages };
      const code = f.payload.readUInt16BE(0);
      if (!validCloseCode(code)) return refused(1002, `close code ${code}`);
      if (!isUtf8(f.payload.subarray(2))) return refused(1007, 'a close reason that is not UTF-8');
      return { kind: 'echo', code, messages };
    }
    if (control) continue;
    const m = msg!;
    if (++m.fragments > limits.maxFragments) return refused(1008, 'too many fragments');
    m.parts.push(f.payload);
    if (!f.fin) {
      // ws inflates a compressed message fragment by fragment: data that cannot inflate, or
      // inflates past the limit, is a fault at that fragment, before any frame after it is read.
      const sofar = m.compressed ? inflate(Buffer.concat(m.parts), limits.maxPayload, false) : null;
      if (sofar && 'code' in sofar) return refused(sofar.code, sofar.why);
      continue;
    }
    let data: Buffer = Buffer.concat(m.parts);
    if (m.compressed) {
      const inflated = inflate(data, limits.maxPayload);
      if ('code' in inflated) return refused(inflated.code, inflated.why);
      data = inflated.data;
    }
    if (m.opcode === OP.text && !isUtf8(data)) return refused(1007, 'a text message that is not UTF-8');
    messages.push({ binary: m.opcode === OP.binary, data });
    msg = null;
  }
  return { kind: 'open', messages };
}
