/**
 * Resume (docs/contract.md "Resume"): what a stream client gets after its
 * `resume` message. Everything after `lastSeq` when the ring still covers it; otherwise a
 * snapshot first, with the position it covers as the new start, then the chunks after it.
 *
 * Invariant: the machine decides, the actor does the I/O. Whether the ring covers `lastSeq`
 * is a guard the actor provides (it reads the ring at that instant); sending and snapshotting
 * are provided actions and actors (the stubs here throw). A `lastSeq` of null (a fresh
 * client), from before a restart or from the future is not covered: it gets a snapshot.
 */
import { assign, fromPromise, setup } from 'xstate';

export type ResumeEvent = { type: 'client.resume'; lastSeq: number | null };

/** What a finished resume did, for the client machine and the logs. */
export interface ResumeOutput {
  readonly outcome: 'delta' | 'snapshot' | 'failed';
}

/** A snapshot taken at an exact stream position (see src/tmux/screen/snapshot.ts). */
export interface TakenSnapshot {
  readonly data: Buffer;
  readonly position: number;
  /**
   * The same position's screen without the history (a few KB where `data` holds 10000 lines):
   * sent first when much smaller, so the screen shows before the history arrives.
   */
  readonly screen?: Buffer;
}

const notProvided = (what: string) => () => {
  throw new Error(`resumeMachine: ${what} was not provided`);
};

export const resumeMachine = setup({
  types: {
    context: {} as { outcome: ResumeOutput['outcome'] },
    events: {} as ResumeEvent,
    output: {} as ResumeOutput,
  },
  actors: {
    /** Takes a snapshot of the pane; resolves with its bytes and the position it covers. */
    takeSnapshot: fromPromise<TakenSnapshot>(notProvided('takeSnapshot')),
  },
  guards: {
    /** The ring still holds every byte after the event's `lastSeq`. */
    isInRing: notProvided('isInRing'),
  },
  actions: {
    /** Sends the chunks from lastSeq+1 on, then forwards live output. */
    sendDelta: notProvided('sendDelta'),
    /** Sends the snapshot frame (seq = the position it covers), then the chunks after it. */
    sendSnapshot: notProvided('sendSnapshot'),
    /** Tells the client the snapshot could not be taken (`snapshot-failed`). */
    reportSnapshotFailed: notProvided('reportSnapshotFailed'),
  },
}).createMachine({
  id: 'resume',
  description: 'docs/contract.md "Resume": connected -> streaming, by delta or by snapshot',
  context: { outcome: 'failed' },
  initial: 'connected',
  states: {
    connected: {
      description: 'The socket is open; session-meta and state were sent; waiting for resume',
      on: {
        // Each transition led by the contract row it mirrors.
        'client.resume': [
          {
            meta: { row: 'connected --resume message [lastSeq within the ring]--> streaming' },
            description: 'lastSeq is still within the ring: chunks from lastSeq+1 on are sent',
            guard: 'isInRing',
            target: 'streaming',
            actions: ['sendDelta', assign({ outcome: 'delta' })],
          },
          {
            meta: { row: 'connected --resume message [lastSeq outside the ring]--> streaming' },
            description: 'lastSeq is outside the ring (a gap, null, before a restart, from the future)',
            target: 'snapshotting',
          },
        ],
      },
    },
    snapshotting: {
      description: 'A snapshot is taken over the control connection, at an exact stream position',
      invoke: {
        id: 'snapshot',
        src: 'takeSnapshot',
        onDone: {
          target: 'streaming',
          actions: ['sendSnapshot', assign({ outcome: 'snapshot' })],
          description: 'The snapshot plus its position as the new start sequence is sent first',
          meta: { row: 'connected --resume message [lastSeq outside the ring]--> streaming' },
        },
        onError: {
          target: 'failed',
          actions: ['reportSnapshotFailed', assign({ outcome: 'failed' })],
          description: 'tmux could not give a snapshot (link down, pane gone)',
          meta: { row: 'tether' },
        },
      },
    },
    streaming: {
      type: 'final',
      description: 'The client has a base; live chunks follow',
    },
    failed: {
      type: 'final',
      description: 'No base could be given; the client machine retries',
    },
  },
  output: ({ context }) => ({ outcome: context.outcome }),
});
