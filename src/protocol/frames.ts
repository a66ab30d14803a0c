/**
 * The stream's frame codec (docs/api.md "WebSocket"): binary chunk frames (an 8-byte big-endian
 * unsigned sequence number, then the raw bytes) and the JSON text frames both ways.
 *
 * Invariants: a chunk frame is encoded once per chunk and the same Buffer goes to every client;
 * sequence numbers are below 2^53 so JSON and JavaScript numbers carry them exactly; a client
 * frame is parsed against its schema or refused with a typed `DomainError` (`frame-malformed`), never half-read.
 * The JSON frames' schemas are in frames.schemas.ts, checked by the generated frames.checks.ts.
 */
import { DomainError } from '../errors.js';
import {
  AnsweredFrame,
  CHECKS as GENERATED,
  ClientFrames,
  ErrorFrame,
  PromptFrame,
  SessionMetaFrame,
  SnapshotFrame,
  StateFrame,
} from './frames.checks.js';
import type { ClientFrame, ClientType, ServerFrame } from './frames.schemas.js';
import { inputCheck, inputRuleBroken, isInputType } from './input.js';
import { checkOf, type SchemaCheck } from './schema-check.js';
import { illFormedAt, illFormedMessage } from './well-formed.js';

/** Bytes of the binary frame header. */
export const CHUNK_HEADER_BYTES = 8;
/** Largest client text frame accepted (input of 1 MiB plus JSON overhead). */
export const MAX_CLIENT_FRAME_BYTES = 1024 * 1024 + 4096;
const TWO_32 = 2 ** 32;

/** Encodes a chunk frame: header and payload in one exact-size Buffer. */
export function encodeChunkFrame(seq: number, data: Buffer): Buffer {
  if (!Number.isSafeInteger(seq) || seq < 0) throw new DomainError('frame-malformed', `sequence number out of range: ${seq}`);
  const frame = Buffer.allocUnsafe(CHUNK_HEADER_BYTES + data.length);
  frame.writeUInt32BE(Math.floor(seq / TWO_32), 0);
  frame.writeUInt32BE(seq % TWO_32, 4);
  data.copy(frame, CHUNK_HEADER_BYTES);
  return frame;
}

/** Decodes a chunk frame (clients): the sequence number and a view of the bytes. */
export function decodeChunkFrame(frame: Uint8Array): { seq: number; data: Buffer } {
  if (frame.length < CHUNK_HEADER_BYTES) throw new DomainError('frame-malformed', 'a chunk frame is at least 8 bytes');
  const buf = Buffer.from(frame.buffer, frame.byteOffset, frame.byteLength);
  const hi = buf.readUInt32BE(0);
  if (hi >= 2 ** 21) throw new DomainError('frame-malformed', 'sequence number above 2^53');
  return { seq: hi * TWO_32 + buf.readUInt32BE(4), data: buf.subarray(CHUNK_HEADER_BYTES) };
}

export type {
  AgentState,
  AgentStateFact,
  AnsweredFrame,
  Ask,
  ErrorFrame,
  PromptFrame,
  ServerFrame,
  SessionMetaFrame,
  StateFrame,
  Stop,
} from './frames.schemas.js';

const SERVER_CHECKS = new Map<string, SchemaCheck>([
  ['state', checkOf(GENERATED, StateFrame)],
  ['snapshot', checkOf(GENERATED, SnapshotFrame)],
  ['session-meta', checkOf(GENERATED, SessionMetaFrame)],
  ['error', checkOf(GENERATED, ErrorFrame)],
  ['answered', checkOf(GENERATED, AnsweredFrame)],
  ['prompt', checkOf(GENERATED, PromptFrame)],
]);

/** The JSON object a text frame holds, or DomainError('frame-malformed') for anything else. */
function jsonObjectOf(text: string): { readonly type?: unknown } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new DomainError('frame-malformed', 'a text frame must be one JSON object');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new DomainError('frame-malformed', 'a text frame must be one JSON object');
  return value;
}

/**
 * Parses a server text frame (clients). A frame of a type this version does not know is `null`
 * (a newer server may add types; a client skips them); a known type that does not fit its
 * schema throws DomainError('frame-malformed'). Fields a newer server adds are kept.
 */
export function parseServerFrame(text: string): ServerFrame | null {
  const value = jsonObjectOf(text);
  const type = value.type;
  const check = typeof type === 'string' ? SERVER_CHECKS.get(type) : undefined;
  if (!check) return null;
  if (!check.Check(value)) {
    const first = [...check.Errors(value)][0];
    throw new DomainError(
      'frame-malformed',
      `${first?.instancePath || String(type)}: ${first?.message ?? 'does not fit'} (a "${String(type)}" frame)`,
    );
  }
  return value as ServerFrame;
}

export type { ClientFrame } from './frames.schemas.js';
/** One check per frame type, so an error names the field of the frame sent. */
const CHECKS = new Map<string, SchemaCheck<ClientFrame>>(
  Object.entries(ClientFrames).map(([type, schema]) => [type, isInputType(type) ? inputCheck(type) : checkOf(GENERATED, schema)]),
);

/** Parses a client text frame, or throws DomainError('frame-malformed') saying what is wrong. */
export function parseClientFrame(text: string): ClientFrame {
  const value = jsonObjectOf(text);
  const type = value.type;
  const check = typeof type === 'string' ? CHECKS.get(type) : undefined;
  if (!check) throw new DomainError('frame-malformed', `type: must be one of ${Object.keys(ClientFrames).join(', ')}`);
  const illFormed = illFormedAt(value);
  if (illFormed !== null)
    throw new DomainError('frame-malformed', `${illFormedMessage(illFormed.slice(1))} (in a "${String(type)}" frame)`);
  if (!check.Check(value)) {
    const first = [...check.Errors(value)][0];
    const where = first?.instancePath ? first.instancePath.replace(/^\//, '') : (type as ClientType);
    throw new DomainError('frame-malformed', `${where}: ${first?.message ?? 'does not fit the frame'} (in a "${String(type)}" frame)`);
  }
  const frame = value;
  if (frame.type === 'key' || frame.type === 'keys' || frame.type === 'paste') {
    const broken = inputRuleBroken(frame);
    if (broken) throw new DomainError('frame-malformed', broken.message);
  }
  return frame;
}

/** Encodes a server text frame. */
export function encodeServerFrame(frame: ServerFrame): string {
  return JSON.stringify(frame);
}

/**
 * Encodes a `snapshot` frame, the same text as `encodeServerFrame` gives: base64 needs no
 * escape, so a long history's frame is joined rather than scanned by JSON (2 ms less a
 * 10000-line snapshot, measured).
 */
export function encodeSnapshotFrame(seq: number, data: Buffer): string {
  return `{"type":"snapshot","seq":${seq},"data":"${data.toString('base64')}"}`;
}
