/**
 * Model-based test of the client machine (one /stream client): the shortest path to every
 * state and then every transition out of it, plus every simple path and a path for every
 * transition of the machine (test/helpers/transitions.ts), generated with
 * xstate/graph from the machine itself, each run against the REAL client actor (`StreamClient`, with the Resume machine
 * inside it) over a real pane stream. Each event is produced the way it happens for real: a
 * resume frame, output while the socket's send buffer is over the high watermark, the buffer
 * draining, a snapshot request, a gap in the stream, a snapshot that fails, the socket closing,
 * the session ending. The actor must pass through the path's states in order, and what the
 * client got at the end must be what that state promises, and the actor must have taken every
 * transition of the machine.
 */
import { describe, expect, it } from 'vitest';
import type { SnapshotFrom } from 'xstate';
import { getAdjacencyMap, getShortestPaths, getSimplePaths, type AdjacencyValue } from 'xstate/graph';
import { ChunkFrames } from '../../src/stream/chunk-frames.js';
import { StreamClient, type ClientLink } from '../../src/stream/stream-client.actor.js';
import { PaneStream } from '../../src/stream/pane-stream.js';
import { streamClientMachine, type StreamClientEvent } from '../../src/machines/stream-client.machine.js';
import { decodeChunkFrame } from '../../src/protocol/frames.js';
import { eventually } from '../helpers/tmux.js';
import { expectLiveOutputContinues } from '../helpers/stream.js';
import { describeTransition, TransitionCoverage, transitionCoveringPaths, UNPLANNED } from '../helpers/transitions.js';

type Snap = SnapshotFrom<typeof streamClientMachine>;
type ModelEvent = { type: string; [k: string]: unknown };

const WATERMARKS = { high: 64 * 1024, low: 1024, maxLagMs: 60_000 };
// The events xstate makes for the snapshot actor and the timers, named after the machine's state nodes.
const ID = streamClientMachine.id;
const SNAPSHOT_DONE = `xstate.done.actor.0.${ID}.resyncing`;
const SNAPSHOT_ERROR = `xstate.error.actor.0.${ID}.resyncing`;
const DRAIN_POLL = `xstate.after.drainPoll.${ID}.behind`;
const SNAPSHOT_RETRY = `xstate.after.snapshotRetry.${ID}.stalled`;

/** Every event the machine reacts to, including the ones the actor raises by itself. */
const MODEL_EVENTS: ModelEvent[] = [
  { type: 'client.resume', lastSeq: null },
  { type: 'xstate.done.actor.resume', output: { outcome: 'delta' } },
  { type: 'xstate.done.actor.resume', output: { outcome: 'failed' } },
  { type: 'client.behind' },
  { type: DRAIN_POLL, drained: true },
  { type: DRAIN_POLL, drained: false },
  { type: 'client.snapshot-request' },
  { type: 'stream.gap' },
  { type: SNAPSHOT_DONE, output: { data: Buffer.from('SNAP'), position: 0 } },
  { type: SNAPSHOT_ERROR, error: new Error('tmux is gone') },
  { type: SNAPSHOT_RETRY },
  { type: 'socket.closed' },
  { type: 'session.ended' },
];

const key = (s: { value: unknown }) => JSON.stringify(s.value);
const eventKey = (e: ModelEvent) =>
  e.type +
  ('output' in e ? `(${(e.output as { outcome?: string }).outcome ?? 'snapshot'})` : '') +
  ('drained' in e ? `(drained=${String(e.drained)})` : '');

// The model decides its guards from the event; the actor decides them from the link and ring.
const model = streamClientMachine.provide({
  guards: { isDrained: ({ event }) => (event as { drained?: boolean }).drained === true },
  actions: {
    startForwarding: () => undefined,
    stopForwarding: () => undefined,
    sendSnapshot: () => undefined,
    reportSnapshotFailed: () => undefined,
    closeSessionEnded: () => undefined,
    release: () => undefined,
  },
});

const traversal = { events: MODEL_EVENTS as StreamClientEvent[], serializeState: (s: Snap) => key(s) as never };
const toStates = getShortestPaths(model, traversal);
const adjacency = getAdjacencyMap(model, traversal) as Record<string, AdjacencyValue<Snap, StreamClientEvent>>;

/**
 * Every transition that changes the state (the shortest path to its source, then its event),
 * and every simple path (no state twice): the graph is small enough for all of them.
 */
const covering = transitionCoveringPaths<Snap, StreamClientEvent, undefined>(model, traversal, streamClientMachine);
const coverage = new TransitionCoverage(streamClientMachine);
const seen = new Set<string>();
const paths = [
  ...toStates.flatMap((p) => [
    { steps: p.steps, state: p.state },
    ...Object.values(adjacency[key(p.state)]?.transitions ?? {})
      .filter((t) => key(t.state) !== key(p.state))
      .map((t) => ({ steps: [...p.steps, { state: t.state, event: t.event }], state: t.state })),
  ]),
  ...getSimplePaths(model, traversal).map((p) => ({ steps: p.steps, state: p.state })),
  ...covering.paths.map((p) => ({ steps: p.steps, state: p.state })),
].filter((p) => {
  const id = p.steps.map((s) => eventKey(s.event as ModelEvent)).join(' -> ');
  if (seen.has(id)) return false;
  seen.add(id);
  return true;
});

interface Sent {
  text: { type: string; code?: string; seq?: number }[];
  binary: { seq: number; data: Buffer }[];
  closed: { code: number; reason: string } | null;
}

describe('client machine, model-based, against the real client actor', () => {
  it('reaches every state of the machine, and plans every transition', () => {
    expect(covering.unplanned.map(describeTransition), UNPLANNED).toEqual([]);
    expect(new Set(toStates.map((p) => key(p.state)))).toEqual(
      new Set(['"resuming"', '"live"', '"behind"', '"resyncing"', '"stalled"', '"closed"']),
    );
  });

  paths.forEach((path, n) => {
    it(`path ${n}: ${path.steps.map((s) => eventKey(s.event as ModelEvent)).join(' -> ') || '(initial)'} => ${key(path.state)}`, async () => {
      const stream = new PaneStream({ ringBytes: 4096, now: () => Date.UTC(2026, 0, 1) });
      stream.append(Buffer.from('hello '));
      stream.flush();
      const sent: Sent = { text: [], binary: [], closed: null };
      let buffered = 0;
      const link: ClientLink = {
        sendBinary: (f) => sent.binary.push(decodeChunkFrame(f)),
        sendText: (t) => sent.text.push(JSON.parse(t) as Sent['text'][number]),
        get bufferedAmount() {
          return buffered;
        },
        close: (code, reason) => (sent.closed = { code, reason }),
      };
      let snapshotFails = false;
      let released = 0;
      const client = new StreamClient({
        sessionId: 'model',
        stream,
        frames: new ChunkFrames(),
        link,
        watermarks: WATERMARKS,
        snapshot: () =>
          snapshotFails
            ? Promise.reject(new Error('tmux is gone'))
            : Promise.resolve({ data: Buffer.from('SNAP'), position: stream.position }),
        onReleased: () => released++,
        delays: { drainPoll: 10, snapshotRetry: 40 },
        inspect: { id: 'client', inspect: coverage.inspect },
      });
      const visited: Snap[] = [client.actor.getSnapshot()];
      client.actor.subscribe((s) => visited.push(s));
      let cursor = 0;
      const reach = async (expected: { value: unknown }) =>
        eventually(
          () => {
            const at = visited.findIndex((s, i) => i >= cursor && key(s) === key(expected));
            if (at < 0) return false;
            cursor = at;
            return true;
          },
          15_000,
          5,
        );

      let resumeSent = false;
      try {
        await reach(visited[0]!);
        for (let i = 0; i < path.steps.length; i++) {
          const step = path.steps[i]!;
          const e = step.event as ModelEvent;
          const next = path.steps[i + 1]?.event as ModelEvent | undefined;
          // Whether the snapshot the actor takes next must fail: the model's next step says so.
          snapshotFails =
            next?.type === SNAPSHOT_ERROR ||
            (next?.type === 'xstate.done.actor.resume' && (next.output as { outcome: string }).outcome === 'failed');
          switch (e.type) {
            case 'client.resume':
              // A fresh client (null) gets a snapshot; the actor resumes at once.
              client.resume(null);
              resumeSent = true;
              break;
            case 'xstate.done.actor.resume':
              if (!resumeSent) {
                const failed = (e.output as { outcome: string }).outcome === 'failed';
                snapshotFails = failed;
                client.resume(failed ? null : stream.ring.end);
              }
              break;
            case 'client.behind':
              buffered = WATERMARKS.high + 1;
              stream.append(Buffer.from('output while the socket is full'));
              stream.flush();
              break;
            case DRAIN_POLL:
              if (e.drained === true) buffered = 0;
              else {
                // Still over the watermark: the next poll finds it so and stays behind.
                const polled = visited.length;
                await eventually(() => visited.length > polled, 15_000, 5);
              }
              break;
            case 'client.snapshot-request':
              client.requestSnapshot();
              break;
            case 'stream.gap':
              stream.gap();
              break;
            case 'socket.closed':
              client.closed();
              break;
            case 'session.ended':
              client.sessionEnded();
              break;
            case 'xstate.init':
            case SNAPSHOT_DONE:
            case SNAPSHOT_ERROR:
            case SNAPSHOT_RETRY:
              break; // the actor's own snapshot and timer, arranged by the step before
            default:
              throw new Error(`no way to produce ${e.type} for real`);
          }
          if (e.type !== 'client.resume') resumeSent = false;
          if (e.type === 'client.resume' && next?.type !== 'xstate.done.actor.resume') resumeSent = false;
          await reach(step.state);
        }
        await eventually(() => visited.length > cursor, 15_000, 5);

        // What the client got is what the state it reached promises.
        const state = key(path.state);
        if (state === '"closed"') {
          expect(released).toBe(1);
          const ended = path.steps.at(-1)!.event.type === 'session.ended';
          expect(sent.closed).toEqual(ended ? { code: 4404, reason: 'session ended' } : null);
          if (ended) expect(sent.text.at(-1)).toMatchObject({ type: 'error', code: 'session-ended' });
          const count = sent.binary.length;
          stream.append(Buffer.from('after the end'));
          stream.flush();
          expect(sent.binary).toHaveLength(count);
        }
        if (state === '"stalled"') {
          await eventually(() => sent.text.some((t) => t.code === 'snapshot-failed'), 15_000, 5);
        }
        if (state === '"behind"') {
          const count = sent.binary.length;
          stream.append(Buffer.from('dropped while behind'));
          stream.flush();
          expect(sent.binary).toHaveLength(count);
        }
        if (client.state === '"live"') {
          // Live output continues the client's position exactly.
          expectLiveOutputContinues(stream, sent);
        }
      } finally {
        if (client.actor.getSnapshot().status === 'active') client.closed();
      }
    });
  });

  it('the real actor took every transition of the machine', () => {
    console.log(coverage.report());
    expect(coverage.uncovered().map(describeTransition), coverage.report()).toEqual([]);
  });
});
