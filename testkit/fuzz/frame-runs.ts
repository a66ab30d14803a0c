/**
 * The runs of client frames the frame surface sends (frames.ts runs them): messages a client may
 * send without breaking the protocol (client frames that fit, with hostile text, and ones that do
 * not; text, binary, fragmented, with pings between the fragments, compressed when
 * permessage-deflate was agreed) and at most one fault among them (reserved bits and opcodes,
 * unmasked, oversized, invalid UTF-8, a bad close, too many fragments, a compression bomb).
 */
import { constants, deflateRawSync } from 'node:zlib';
import fc from 'fast-check';
import { ClientFrames } from '../../src/protocol/frames.schemas.js';
import { closePayload, OP, type WsFrame } from './raw-ws.js';
import { anyJson, fitting, hostileValue, type JsonSchema } from './schema-arbitrary.js';
import type { FuzzLedger, FuzzRoute, FuzzTarget } from './target.js';

/** The daemon's limits (docs/api.md): a client message at most 1 MiB + 4 KiB; ws's fragment bound. */
export const WS_LIMITS = { maxPayload: 1024 * 1024 + 4096, maxFragments: 16 * 1024 } as const;
/** More messages than this before the stream is open are refused (src/transport/stream/stream.plugin.ts). */
export const EARLY_BOUND = 60;

/** One message (or protocol event) of a run, before it is cut into frames. */
export type MessageCase =
  | {
      readonly kind: 'json';
      readonly value: unknown;
      readonly fragments: number;
      readonly pingBetween: boolean;
      readonly compress: boolean;
    }
  | { readonly kind: 'text'; readonly text: string; readonly fragments: number; readonly compress: boolean }
  | { readonly kind: 'binary'; readonly data: Uint8Array; readonly fragments: number }
  | { readonly kind: 'bad-utf8'; readonly bytes: Uint8Array }
  | { readonly kind: 'control'; readonly opcode: 9 | 10; readonly payload: Uint8Array }
  | { readonly kind: 'close'; readonly code: number; readonly reason: Uint8Array }
  | {
      readonly kind: 'raw';
      readonly fin: boolean;
      readonly rsv: number;
      readonly opcode: number;
      readonly masked: boolean;
      readonly payload: Uint8Array;
      readonly lengthForm: 'short' | '16' | '64';
    }
  | { readonly kind: 'oversize'; readonly declared: number; readonly opcode: number }
  | { readonly kind: 'many-fragments'; readonly count: number }
  | { readonly kind: 'bomb' };

export interface FramesCase {
  readonly route: FuzzRoute;
  readonly deflate: boolean;
  /** Send at once after the 101, before the stream is open (its frames are kept in order). */
  readonly early: boolean;
  readonly messages: readonly MessageCase[];
}

const clientFrameSchemas = Object.values(ClientFrames) as unknown as JsonSchema[];

export function framesCases(t: FuzzTarget, text: fc.Arbitrary<string>): fc.Arbitrary<FramesCase> {
  const frameValue = fc.oneof(
    { weight: 4, arbitrary: fc.oneof(...clientFrameSchemas.map((s) => fitting(s, text))) },
    { weight: 3, arbitrary: fc.oneof(...clientFrameSchemas.map((s) => hostileValue(s, text))) },
    { weight: 1, arbitrary: anyJson },
  );
  const bytes = (max: number) => fc.uint8Array({ maxLength: max });
  // What a client may send without breaking the protocol (the daemon answers refusals with error frames).
  const clean: fc.Arbitrary<MessageCase> = fc.oneof(
    {
      weight: 50,
      arbitrary: fc.record({
        kind: fc.constant('json' as const),
        value: frameValue,
        fragments: fc.integer({ min: 1, max: 4 }),
        pingBetween: fc.boolean(),
        compress: fc.boolean(),
      }),
    },
    {
      weight: 10,
      arbitrary: fc.record({
        kind: fc.constant('text' as const),
        text: fc.oneof(text, fc.constantFrom('', '{', 'null', '[]', '{"type":1}')),
        fragments: fc.integer({ min: 1, max: 3 }),
        compress: fc.boolean(),
      }),
    },
    {
      weight: 5,
      arbitrary: fc.record({ kind: fc.constant('binary' as const), data: bytes(64), fragments: fc.integer({ min: 1, max: 3 }) }),
    },
    {
      weight: 5,
      arbitrary: fc.record({
        kind: fc.constant('control' as const),
        opcode: fc.constantFrom(9 as const, 10 as const),
        payload: bytes(125),
      }),
    },
  );
  // What breaks it (or ends it): the daemon must close with the protocol's code, or echo a close.
  const fault: fc.Arbitrary<MessageCase> = fc.oneof(
    {
      weight: 5,
      arbitrary: fc.record({
        kind: fc.constant('bad-utf8' as const),
        bytes: fc.constantFrom(
          Uint8Array.of(0xff),
          Uint8Array.of(0xc0, 0x80),
          Uint8Array.of(0xed, 0xa0, 0x80),
          Uint8Array.of(0x7b, 0xe2, 0x82),
        ),
      }),
    },
    {
      weight: 5,
      arbitrary: fc.record({
        kind: fc.constant('close' as const),
        code: fc.oneof(fc.constantFrom(1000, 1001, 1005, 1006, 1015, 2999, 3000, 4999, 5000, 0), fc.nat(65535)),
        reason: fc.oneof(bytes(20), fc.constant(Uint8Array.of(0xff))),
      }),
    },
    {
      weight: 10,
      arbitrary: fc.record({
        kind: fc.constant('raw' as const),
        fin: fc.boolean(),
        rsv: fc.nat(7),
        opcode: fc.nat(15),
        masked: fc.oneof({ weight: 20, arbitrary: fc.constant(true) }, { weight: 5, arbitrary: fc.constant(false) }),
        payload: bytes(140),
        lengthForm: fc.constantFrom('short' as const, 'short' as const, '16' as const, '64' as const),
      }),
    },
    {
      weight: 5,
      arbitrary: fc.record({
        kind: fc.constant('oversize' as const),
        declared: fc.constantFrom(WS_LIMITS.maxPayload + 1, 2 ** 31, 2 ** 53 + 1, 2 ** 63),
        opcode: fc.constantFrom(1, 2),
      }),
    },
    {
      weight: 1,
      arbitrary: fc.record({ kind: fc.constant('many-fragments' as const), count: fc.constantFrom(50, WS_LIMITS.maxFragments + 1) }),
    },
    { weight: 1, arbitrary: fc.constant({ kind: 'bomb' as const }) },
  );
  return fc.record({
    route: fc.constantFrom(...t.routes.filter((r) => r.websocket && r.method === 'GET')),
    deflate: fc.boolean(),
    early: fc.boolean(),
    messages: fc
      .tuple(fc.array(clean, { minLength: 1, maxLength: 12 }), fc.option(fault, { freq: 2 }), fc.nat())
      .map(([msgs, f, at]) => (f === null ? msgs : [...msgs.slice(0, at % (msgs.length + 1)), f, ...msgs.slice(at % (msgs.length + 1))])),
  });
}

/** A payload cut into `n` frames: the first carries the opcode, the rest continue it. */
function fragmentsOf(opcode: number, payload: Buffer, n: number, rsv1: boolean, ping: boolean): WsFrame[] {
  const cuts = Array.from({ length: n }, (_, i) =>
    payload.subarray(Math.floor((i * payload.length) / n), Math.floor(((i + 1) * payload.length) / n)),
  );
  return cuts.flatMap((p, i) => [
    { fin: i === n - 1, rsv: i === 0 && rsv1 ? 4 : 0, opcode: i === 0 ? opcode : OP.continuation, masked: true, payload: p },
    ...(ping && i < n - 1 ? [{ fin: true, rsv: 0, opcode: OP.ping, masked: true, payload: Buffer.from('p') }] : []),
  ]);
}

/** A message compressed as permessage-deflate sends it (the final empty block's 4 bytes cut). */
const deflated = (b: Buffer): Buffer => {
  const d = deflateRawSync(b, { finishFlush: constants.Z_SYNC_FLUSH });
  return d.subarray(0, d.length - 4);
};

/** What a frame run is: its frames, and each input's marker with the bytes a pane must get (null: a paste, changed on its way). */
export interface Built {
  readonly frames: WsFrame[];
  readonly markers: Map<string, Buffer | null>;
}

export function build(c: FramesCase, ledger: FuzzLedger): Built {
  const frames: WsFrame[] = [];
  const markers = new Map<string, Buffer | null>();
  for (const m of c.messages) {
    switch (m.kind) {
      case 'json': {
        let value = m.value;
        let marker: string | null = null;
        let typed: Buffer | null = null;
        const v = value as { type?: unknown; data?: unknown } | null;
        if (
          typeof v === 'object' &&
          v !== null &&
          !Array.isArray(v) &&
          typeof v.data === 'string' &&
          (v.type === 'keys' || v.type === 'paste')
        ) {
          marker = ledger.marker();
          value = { ...v, data: marker + v.data };
          if (v.type === 'keys') typed = Buffer.from(marker + v.data, 'utf8');
        }
        const payload = Buffer.from(JSON.stringify(value) ?? 'null', 'utf8');
        const compress = c.deflate && m.compress;
        frames.push(
          ...(compress
            ? fragmentsOf(OP.text, deflated(payload), 1, true, false)
            : fragmentsOf(OP.text, payload, m.fragments, false, m.pingBetween)),
        );
        if (marker) markers.set(marker, typed);
        break;
      }
      case 'text': {
        const payload = Buffer.from(m.text, 'utf8');
        const compress = c.deflate && m.compress;
        frames.push(
          ...(compress
            ? fragmentsOf(OP.text, deflated(payload), 1, true, false)
            : fragmentsOf(OP.text, payload, m.fragments, false, false)),
        );
        break;
      }
      case 'binary':
        frames.push(...fragmentsOf(OP.binary, Buffer.from(m.data), m.fragments, false, false));
        break;
      case 'bad-utf8':
        frames.push(...fragmentsOf(OP.text, Buffer.from(m.bytes), 1, false, false));
        break;
      case 'control':
        frames.push({ fin: true, rsv: 0, opcode: m.opcode, masked: true, payload: Buffer.from(m.payload) });
        break;
      case 'close':
        frames.push({
          fin: true,
          rsv: 0,
          opcode: OP.close,
          masked: true,
          payload: m.code === 1005 ? Buffer.alloc(0) : closePayload(m.code, Buffer.from(m.reason)),
        });
        break;
      case 'raw':
        frames.push({
          fin: m.fin,
          rsv: m.rsv,
          opcode: m.opcode,
          masked: m.masked,
          payload: Buffer.from(m.opcode >= 8 ? m.payload.subarray(0, 125) : m.payload),
          lengthForm: m.lengthForm,
        });
        break;
      case 'oversize':
        frames.push({ fin: true, rsv: 0, opcode: m.opcode, masked: true, payload: Buffer.from('xxxx'), declaredLength: m.declared });
        break;
      case 'many-fragments':
        frames.push(
          ...Array.from({ length: m.count }, (_, i) => ({
            fin: i === m.count - 1,
            rsv: 0,
            opcode: i === 0 ? OP.text : OP.continuation,
            masked: true,
            payload: Buffer.from(i === 0 ? '[' : i === m.count - 1 ? ']' : ''),
          })),
        );
        break;
      case 'bomb': {
        const payload = c.deflate ? deflated(Buffer.alloc(WS_LIMITS.maxPayload + 10, 0x20)) : Buffer.from('{}');
        frames.push({ fin: true, rsv: c.deflate ? 4 : 0, opcode: OP.text, masked: true, payload });
        break;
      }
    }
  }
  return { frames, markers };
}
