/**
 * One connected stream client (docs/api.md "WebSocket"): it resumes (the Resume machine), then
 * gets live chunks; when its send buffer passes the high watermark it stops getting chunks
 * (`behind`) and, once drained, is resynced with a snapshot; it ends when the socket closes or
 * the session ends.
 *
 * Invariant: a chunk reaches the client only in `live` (the actor forwards while the machine
 * is there), so the bytes it gets always continue its base exactly: a gap, a snapshot request
 * or falling behind all go through a new snapshot. Memory per client is bounded because
 * nothing is queued for a client that is not `live`.
 */
import { fromPromise, raise, sendTo, setup } from 'xstate';
import { resumeMachine, type ResumeEvent, type ResumeOutput, type TakenSnapshot } from './resume.machine.js';

export type StreamClientEvent =
  | ResumeEvent
  | { type: 'client.snapshot-request' }
  | { type: 'client.behind' }
  | { type: 'stream.gap' }
  | { type: 'socket.closed' }
  | { type: 'session.ended' };

const notProvided = (what: string) => () => {
  throw new Error(`streamClientMachine: ${what} was not provided`);
};

export const streamClientMachine = setup({
  types: {
    events: {} as StreamClientEvent,
  },
  actors: {
    /** The Resume machine; its own stubs throw until the actor provides this client's I/O. */
    resume: resumeMachine,
    /** Takes a snapshot of the pane at an exact stream position. */
    takeSnapshot: fromPromise<TakenSnapshot>(notProvided('takeSnapshot')),
  },
  guards: {
    /** The resume ended without a base (the snapshot failed). */
    isResumeFailed: ({ event }) => (event as { output?: ResumeOutput }).output?.outcome === 'failed',
    /** The send buffer is back under the low watermark. */
    isDrained: notProvided('isDrained'),
  },
  actions: {
    /** Chunks go to the client as they come (entered with `live`). */
    startForwarding: notProvided('startForwarding'),
    stopForwarding: notProvided('stopForwarding'),
    /** Sends the snapshot frame, then the chunks after its position. */
    sendSnapshot: notProvided('sendSnapshot'),
    reportSnapshotFailed: notProvided('reportSnapshotFailed'),
    /** `error session-ended`, then close 4404. */
    closeSessionEnded: notProvided('closeSessionEnded'),
    /** Lets go of the stream and the session (the socket is closed or closing). */
    release: notProvided('release'),
  },
  delays: {
    /** How often a client that fell behind is checked for having drained. */
    drainPoll: 25,
    /** How long after a failed snapshot the next one is tried. */
    snapshotRetry: 1000,
  },
}).createMachine({
  id: 'streamClient',
  description: 'One /stream client: resuming, live, behind, resyncing, closed',
  initial: 'resuming',
  on: {
    'socket.closed': { target: '.closed', description: 'The client went away', meta: { row: 'tether' } },
    'session.ended': {
      target: '.closed',
      actions: 'closeSessionEnded',
      description: 'The session was deleted or its pane died: error session-ended, close 4404',
      meta: { row: 'tether' },
    },
  },
  states: {
    resuming: {
      description: "The Resume machine runs: delta or snapshot, from the client's lastSeq",
      invoke: {
        id: 'resume',
        src: 'resume',
        onDone: [
          { target: 'stalled', guard: 'isResumeFailed', meta: { row: 'tether' } },
          { target: 'live', description: 'The client has a base', meta: { row: 'tether' } },
        ],
      },
      on: {
        'client.resume': {
          actions: sendTo('resume', ({ event }) => event),
          description: 'Handed to the Resume machine',
          meta: { row: 'tether' },
        },
      },
    },
    live: {
      description: 'Chunks are forwarded as they come',
      entry: 'startForwarding',
      exit: 'stopForwarding',
      on: {
        'client.behind': { target: 'behind', description: 'The send buffer passed the high watermark', meta: { row: 'tether' } },
        'client.snapshot-request': {
          target: 'resyncing',
          description: 'snapshot-request: a snapshot at any time',
          meta: { row: 'tether' },
        },
        'stream.gap': { target: 'resyncing', description: 'Bytes were lost upstream (link re-established)', meta: { row: 'tether' } },
        'client.resume': {
          target: 'resuming',
          actions: raise(({ event }) => event),
          description: 'A new resume starts over from its lastSeq',
          meta: { row: 'tether' },
        },
      },
    },
    behind: {
      description: 'Chunks are dropped for this client until its send buffer drains',
      after: {
        drainPoll: [
          { target: 'resyncing', guard: 'isDrained', description: 'Drained below the low watermark', meta: { row: 'tether' } },
          { target: 'behind', reenter: true, meta: { row: 'tether' } },
        ],
      },
    },
    resyncing: {
      description: 'A snapshot replaces the bytes the client missed',
      invoke: {
        src: 'takeSnapshot',
        onDone: { target: 'live', actions: 'sendSnapshot', meta: { row: 'tether' } },
        onError: { target: 'stalled', actions: 'reportSnapshotFailed', meta: { row: 'tether' } },
      },
    },
    stalled: {
      description: 'No snapshot could be taken; try again shortly',
      after: { snapshotRetry: { target: 'resyncing', meta: { row: 'tether' } } },
      on: {
        'client.resume': { target: 'resuming', actions: raise(({ event }) => event), meta: { row: 'tether' } },
        'client.snapshot-request': { target: 'resyncing', meta: { row: 'tether' } },
      },
    },
    closed: {
      type: 'final',
      entry: 'release',
      description: 'The socket is closed; nothing more is sent',
    },
  },
});
