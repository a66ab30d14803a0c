/**
 * Model-based test of the Resume machine (docs/contract.md "Resume"): every simple path through the
 * machine and a path for every transition (test/helpers/transitions.ts), generated with xstate/graph from the machine itself, is run against the REAL client
 * actor (the client machine with the Resume machine inside it) over a real ring holding real
 * chunks. The model's guard says which lastSeq values the ring covers; the actor decides with
 * the ring itself, and what the client receives must be what the path's rows promise: the
 * bytes right after lastSeq (a delta, even from the middle of a chunk), or a snapshot frame
 * whose seq is the position it covers followed by exactly the bytes after it, or a
 * `snapshot-failed` error frame.
 */
import { describe, expect, it } from 'vitest';
import { getSimplePaths } from 'xstate/graph';
import { ChunkFrames } from '../../src/stream/chunk-frames.js';
import { StreamClient, type ClientLink } from '../../src/stream/stream-client.actor.js';
import { PaneStream } from '../../src/stream/pane-stream.js';
import { resumeMachine, type ResumeEvent } from '../../src/machines/resume.machine.js';
import { decodeChunkFrame } from '../../src/protocol/frames.js';
import { expectLiveOutputContinues } from '../helpers/stream.js';
import { describeTransition, TransitionCoverage, transitionCoveringPaths, UNPLANNED } from '../helpers/transitions.js';

/** The ring of the test: 3 KB of output in a 2 KB ring, so its start is past position 1024. */
function filledStream(): { stream: PaneStream; bytes: Buffer } {
  const stream = new PaneStream({ ringBytes: 2048, now: () => Date.UTC(2026, 0, 1) });
  const bytes = Buffer.alloc(3072);
  for (let i = 0; i < bytes.length; i++) bytes[i] = 0x20 + (i % 90);
  for (let i = 0; i < bytes.length; i += 512) {
    stream.append(bytes.subarray(i, i + 512));
    stream.flush();
  }
  return { stream, bytes };
}

const probe = filledStream().stream.ring;
const RING = { start: probe.start, end: probe.end };
/** lastSeq values and what the ring says about each. */
const LAST_SEQ = {
  inRingMidChunk: RING.start + 100,
  atEnd: RING.end,
  fresh: null,
  beforeRestart: 1,
  future: RING.end + 1_000_000,
} as const;
const covered = (lastSeq: number | null) => lastSeq !== null && lastSeq >= RING.start && lastSeq <= RING.end;

const SNAP_POSITION = RING.end - 300;
const MODEL_EVENTS = [
  ...Object.values(LAST_SEQ).map((lastSeq): ResumeEvent => ({ type: 'client.resume', lastSeq })),
  { type: 'xstate.done.actor.snapshot', output: { data: Buffer.from('SNAP'), position: SNAP_POSITION } },
  { type: 'xstate.error.actor.snapshot', error: new Error('tmux is gone') },
];

const model = resumeMachine.provide({
  guards: { isInRing: ({ event }) => covered(event.lastSeq) },
  actions: { sendDelta: () => undefined, sendSnapshot: () => undefined, reportSnapshotFailed: () => undefined },
});
const traversal = { events: MODEL_EVENTS as ResumeEvent[], serializeState: (s: { value: unknown }) => JSON.stringify(s.value) };
const simple = getSimplePaths(model, traversal as never);
const covering = transitionCoveringPaths<(typeof simple)[number]['state'], ResumeEvent, undefined>(model, traversal, resumeMachine);
const pathLabel = (p: { steps: { event: { type: string } }[] }) =>
  p.steps.map((s) => s.event.type + ('lastSeq' in s.event ? `(${String(s.event.lastSeq)})` : '')).join(' -> ');
const paths = [...simple, ...covering.paths.filter((c) => !simple.some((p) => pathLabel(p) === pathLabel(c)))] as typeof simple;
const coverage = new TransitionCoverage(resumeMachine);

interface Sent {
  text: { type: string; [k: string]: unknown }[];
  binary: { seq: number; data: Buffer }[];
}

function recordingLink(): { link: ClientLink; sent: Sent } {
  const sent: Sent = { text: [], binary: [] };
  return {
    sent,
    link: {
      sendBinary: (frame) => sent.binary.push(decodeChunkFrame(frame)),
      sendText: (text) => sent.text.push(JSON.parse(text) as { type: string }),
      bufferedAmount: 0,
      close: () => undefined,
    },
  };
}

const describePath = (p: (typeof paths)[number]) =>
  p.steps.map((s) => s.event.type + ('lastSeq' in s.event ? `(${String(s.event.lastSeq)})` : '')).join(' -> ') +
  ` => ${JSON.stringify(p.state.value)}`;

describe('resume machine, model-based, against the real client actor', () => {
  it('reaches every state of the machine, by every kind of lastSeq', () => {
    expect(new Set(paths.map((p) => JSON.stringify(p.state.value)))).toEqual(
      new Set(['"connected"', '"snapshotting"', '"streaming"', '"failed"']),
    );
    // connected; streaming by delta (2 lastSeqs) and by snapshot (3); snapshotting (3); failed (3).
    expect(simple.length).toBe(1 + 2 + 3 + 3 + 3);
    expect(covering.unplanned.map(describeTransition), UNPLANNED).toEqual([]);
  });

  for (const path of paths) {
    it(describePath(path), async () => {
      const { stream, bytes } = filledStream();
      const base = stream.ring.end - bytes.length;
      const { link, sent } = recordingLink();
      let settle: { resolve: (v: { data: Buffer; position: number }) => void; reject: (e: unknown) => void } | null = null;
      const client = new StreamClient({
        sessionId: 'model',
        stream,
        frames: new ChunkFrames(),
        link,
        snapshot: () => new Promise((resolve, reject) => (settle = { resolve, reject })),
        onReleased: () => undefined,
        delays: { snapshotRetry: 60_000 },
        inspect: { id: 'client', inspect: coverage.inspect },
      });
      let lastSeq: number | null = null;
      for (const step of path.steps) {
        const e = step.event as ResumeEvent | { type: string; output?: { data: Buffer; position: number }; error?: unknown };
        if (e.type === 'client.resume') {
          lastSeq = (e as ResumeEvent).lastSeq;
          client.resume(lastSeq);
        } else if (e.type === 'xstate.done.actor.snapshot') {
          expect(settle).not.toBeNull();
          settle!.resolve((e as { output: { data: Buffer; position: number } }).output);
        } else if (e.type === 'xstate.error.actor.snapshot') {
          expect(settle).not.toBeNull();
          settle!.reject((e as { error: unknown }).error);
        }
        await new Promise((r) => setImmediate(r));
      }
      const joined = Buffer.concat(sent.binary.map((b) => b.data));
      switch (JSON.stringify(path.state.value)) {
        case '"connected"':
          expect(sent.text).toEqual([]);
          expect(sent.binary).toEqual([]);
          expect(client.state).toBe('"resuming"');
          break;
        case '"snapshotting"':
          expect(covered(lastSeq)).toBe(false);
          expect(settle).not.toBeNull();
          expect(sent.binary).toEqual([]);
          break;
        case '"streaming"':
          expect(client.state).toBe('"live"');
          if (covered(lastSeq)) {
            // Row 1: the chunks from lastSeq+1 on, exactly, even from the middle of a chunk.
            expect(sent.text).toEqual([]);
            expect(joined.equals(bytes.subarray(lastSeq! - base))).toBe(true);
            if (sent.binary.length > 0) expect(sent.binary[0]!.seq - sent.binary[0]!.data.length).toBe(lastSeq);
          } else {
            // Row 2: the snapshot first, with the position it covers, then the bytes after it.
            expect(sent.text[0]).toMatchObject({ type: 'snapshot', seq: SNAP_POSITION, data: Buffer.from('SNAP').toString('base64') });
            expect(joined.equals(bytes.subarray(SNAP_POSITION - base))).toBe(true);
          }
          expect(sent.binary.at(-1)?.seq ?? stream.ring.end).toBe(stream.ring.end);
          break;
        case '"failed"':
          expect(sent.text.map((t) => t.code)).toEqual(['snapshot-failed']);
          expect(sent.binary).toEqual([]);
          expect(client.state).toBe('"stalled"');
          break;
        default:
          throw new Error(`unexpected state ${JSON.stringify(path.state.value)}`);
      }
      // Live output after the resume continues the client's position without a gap.
      if (client.state === '"live"') {
        expectLiveOutputContinues(stream, sent);
      }
      client.closed();
    });
  }

  it('the real actors took every transition of the machine', () => {
    console.log(coverage.report());
    expect(coverage.uncovered().map(describeTransition), coverage.report()).toEqual([]);
  });
});
