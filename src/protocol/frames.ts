/**
 * The stream's frame codec (spec "Stream frames"): binary chunk frames (an 8-byte big-endian
 * unsigned sequence number, then the raw bytes) and the JSON text frames both ways.
 *
 * Invariants: a chunk frame is encoded once per chunk and the same Buffer goes to every client;
 * sequence numbers are below 2^53 so JSON and JavaScript numbers carry them exactly; a client
 * frame is parsed against its schema or refused with a typed `ProtocolError`, never half-read.
 */
import { Type, type Static } from 'typebox';
import { Compile } from 'typebox/compile';
import { ProtocolError } from '../errors.js';

/** Bytes of the binary frame header. */
export const CHUNK_HEADER_BYTES = 8;
/** Largest client text frame accepted (input of 1 MiB plus JSON overhead). */
export const MAX_CLIENT_FRAME_BYTES = 1024 * 1024 + 4096;
const TWO_32 = 2 ** 32;

/** Encodes a chunk frame: header and payload in one exact-size Buffer. */
export function encodeChunkFrame(seq: number, data: Buffer): Buffer {
  if (!Number.isSafeInteger(seq) || seq < 0) throw new ProtocolError('frame-malformed', `sequence number out of range: ${seq}`);
  const frame = Buffer.allocUnsafe(CHUNK_HEADER_BYTES + data.length);
  frame.writeUInt32BE(Math.floor(seq / TWO_32), 0);
  frame.writeUInt32BE(seq % TWO_32, 4);
  data.copy(frame, CHUNK_HEADER_BYTES);
  return frame;
}

/** Decodes a chunk frame (clients): the sequence number and a view of the bytes. */
export function decodeChunkFrame(frame: Uint8Array): { seq: number; data: Buffer } {
  if (frame.length < CHUNK_HEADER_BYTES) throw new ProtocolError('frame-malformed', 'a chunk frame is at least 8 bytes');
  const buf = Buffer.from(frame.buffer, frame.byteOffset, frame.byteLength);
  const hi = buf.readUInt32BE(0);
  if (hi >= 2 ** 21) throw new ProtocolError('frame-malformed', 'sequence number above 2^53');
  return { seq: hi * TWO_32 + buf.readUInt32BE(4), data: buf.subarray(CHUNK_HEADER_BYTES) };
}

/** The agent states of the side channel. */
export const AgentStateValue = Type.Union([
  Type.Literal('thinking'),
  Type.Literal('tool'),
  Type.Literal('idle'),
  Type.Literal('awaiting-input'),
]);

export const StateFrame = Type.Object({
  type: Type.Literal('state'),
  value: AgentStateValue,
  tool: Type.Optional(Type.String()),
  ts: Type.Number(),
});
export const SnapshotFrame = Type.Object({ type: Type.Literal('snapshot'), seq: Type.Integer({ minimum: 0 }), data: Type.String() });
export const SessionMetaFrame = Type.Object({
  type: Type.Literal('session-meta'),
  name: Type.String(),
  description: Type.Optional(Type.String()),
  createdAt: Type.String(),
});
export const ErrorFrame = Type.Object({ type: Type.Literal('error'), code: Type.String(), message: Type.String() });
export type ServerFrame =
  Static<typeof StateFrame> | Static<typeof SnapshotFrame> | Static<typeof SessionMetaFrame> | Static<typeof ErrorFrame>;

const MAX_INPUT_CHARS = 1024 * 1024;
const ClientFrames = {
  resume: Type.Object(
    { type: Type.Literal('resume'), lastSeq: Type.Union([Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }), Type.Null()]) },
    { additionalProperties: false },
  ),
  key: Type.Object({ type: Type.Literal('key'), name: Type.String({ maxLength: 32 }) }, { additionalProperties: false }),
  keys: Type.Object({ type: Type.Literal('keys'), data: Type.String({ maxLength: MAX_INPUT_CHARS }) }, { additionalProperties: false }),
  paste: Type.Object({ type: Type.Literal('paste'), data: Type.String({ maxLength: MAX_INPUT_CHARS }) }, { additionalProperties: false }),
  'snapshot-request': Type.Object({ type: Type.Literal('snapshot-request') }, { additionalProperties: false }),
};
export const ClientFrameSchema = Type.Union([
  ClientFrames.resume,
  ClientFrames.key,
  ClientFrames.keys,
  ClientFrames.paste,
  ClientFrames['snapshot-request'],
]);
export type ClientFrame = Static<typeof ClientFrameSchema>;
type ClientType = keyof typeof ClientFrames;
/** One compiled validator per frame type, so an error names the field of the frame sent. */
const CHECKS = new Map(Object.entries(ClientFrames).map(([type, schema]) => [type, Compile(schema)]));

/** Parses a client text frame, or throws ProtocolError('frame-malformed') saying what is wrong. */
export function parseClientFrame(text: string): ClientFrame {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ProtocolError('frame-malformed', 'a text frame must be one JSON object');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new ProtocolError('frame-malformed', 'a text frame must be one JSON object');
  const type: unknown = (value as { type?: unknown }).type;
  const check = typeof type === 'string' ? CHECKS.get(type) : undefined;
  if (!check) throw new ProtocolError('frame-malformed', `type: must be one of ${Object.keys(ClientFrames).join(', ')}`);
  if (!check.Check(value)) {
    const first = [...check.Errors(value)][0];
    const where = first?.instancePath ? first.instancePath.replace(/^\//, '') : (type as ClientType);
    throw new ProtocolError('frame-malformed', `${where}: ${first?.message ?? 'does not fit the frame'} (in a "${String(type)}" frame)`);
  }
  return value as ClientFrame;
}

/** Encodes a server text frame. */
export function encodeServerFrame(frame: ServerFrame): string {
  return JSON.stringify(frame);
}
