/**
 * Disk-buffer writing (docs/contract.md "Disk-buffer writing", with the
 * limits of "Limits" and docs/configuration.md `[buffer]`): whether a session's output is appended to
 * its file `{data_dir}/buffers/<id>.log`.
 *
 * One actor per session, plus one for the sidecar as a whole (the `*` actor, which health
 * reads): they get the same watchdog checks and the same totals, so "off globally" is the same
 * state in all of them. States: `starting` (the start-up look at the file), `writing`,
 * `stopped` (this session's file reached its cap: final for the file, the stream goes on),
 * `off` (writing is off for every session: the global cap, or too little free disk) and
 * `deleted` (the file is gone: idle at start-up, or the session was deleted).
 *
 * Invariants: pure (no clock, no disk: every event carries what was measured, and the limits
 * come in as input); `off` is left only by a watchdog check that finds the disk above the
 * minimum plus a margin (hysteresis, so it does not flap) and the total below the global cap.
 */
import { assign, setup } from 'xstate';

/** The configured limits, in bytes and milliseconds. */
export interface DiskBufferLimits {
  readonly sessionCapBytes: number;
  readonly globalCapBytes: number;
  readonly minFreeBytes: number;
  /** Writing resumes only once free space is above `minFreeBytes + resumeMarginBytes`. */
  readonly resumeMarginBytes: number;
  readonly idleMs: number;
}

export type DiskBufferOffReason = 'global-cap' | 'low-disk';

export interface DiskBufferContext {
  readonly limits: DiskBufferLimits;
  /** Why writing is off (in `off`), else null. */
  readonly reason: DiskBufferOffReason | null;
}

export type DiskBufferEvent =
  /** At start-up: how long the session has had no output and no client. */
  | { type: 'buffer.startup'; idleMs: number }
  /** A batch was written: this session's file size and the total of all files after it. */
  | { type: 'output.written'; sessionBytes: number; totalBytes: number }
  /** The watchdog measured free disk space and the total of all files. */
  | { type: 'watchdog.check'; freeBytes: number; totalBytes: number }
  /** The session was deleted without keeping its buffer. */
  | { type: 'session.deleted' };

/** Writing off for every session because all files together reached the global cap (the table's second row). */
const offForGlobalCap = (description: string) => ({
  target: 'off' as const,
  guard: 'isAtGlobalCap' as const,
  actions: { type: 'offFor' as const, params: { reason: 'global-cap' as const } },
  description,
  meta: { row: 'writing --output written [total across sessions exceeds the global cap]--> off globally' },
});

export const diskBufferMachine = setup({
  types: {
    context: {} as DiskBufferContext,
    events: {} as DiskBufferEvent,
    input: {} as { limits: DiskBufferLimits },
  },
  guards: {
    isIdleTooLong: ({ context, event }) => event.type === 'buffer.startup' && event.idleMs > context.limits.idleMs,
    isAtSessionCap: ({ context, event }) => event.type === 'output.written' && event.sessionBytes >= context.limits.sessionCapBytes,
    // At, not only past: the buffers hold the global cap to the byte (a write is cut to the room
    // left), so output that does not fit leaves the total exactly at the cap.
    isAtGlobalCap: ({ context, event }) =>
      (event.type === 'output.written' || event.type === 'watchdog.check') && event.totalBytes >= context.limits.globalCapBytes,
    isDiskLow: ({ context, event }) => event.type === 'watchdog.check' && event.freeBytes < context.limits.minFreeBytes,
    hasRoomAgain: ({ context, event }) =>
      event.type === 'watchdog.check' &&
      event.freeBytes >= context.limits.minFreeBytes + context.limits.resumeMarginBytes &&
      event.totalBytes < context.limits.globalCapBytes,
  },
  actions: {
    offFor: assign({ reason: (_, params: { reason: DiskBufferOffReason }) => params.reason }),
    clearReason: assign({ reason: null }),
  },
}).createMachine({
  id: 'diskBuffer',
  description: 'docs/contract.md "Disk-buffer writing": a session\'s output appended to its file, with caps and a watchdog',
  context: ({ input }) => ({ limits: input.limits, reason: null }),
  initial: 'starting',
  on: {
    'session.deleted': {
      target: '.deleted',
      description: 'DELETE /sessions/:id without keepBuffer: the file is deleted',
      meta: { row: 'tether' },
    },
  },
  states: {
    starting: {
      description: 'The daemon looks at the file and the session once, at start-up',
      on: {
        'buffer.startup': [
          {
            target: 'deleted',
            guard: 'isIdleTooLong',
            description: 'No output and no client for longer than idle_days: the file is deleted',
            meta: { row: 'any --startup [session inactive for more than 30 days]--> buffer file deleted' },
          },
          { target: 'writing', description: 'A recent or new session: its file is appended to', meta: { row: 'tether' } },
        ],
      },
    },
    writing: {
      description: 'Output is appended to the file in batches',
      on: {
        'output.written': [
          {
            target: 'stopped',
            guard: 'isAtSessionCap',
            description: 'The file reached session_cap_mb: later bytes are missing from it, the stream goes on',
            meta: { row: 'writing --output written [per-session file reaches its cap]--> stopped for that session' },
          },
          offForGlobalCap('All files together reached global_cap_mb: writing is off for every session, health is degraded'),
        ],
        'watchdog.check': [
          {
            target: 'off',
            guard: 'isDiskLow',
            actions: { type: 'offFor', params: { reason: 'low-disk' } },
            description: 'Free disk below min_free_gb: writing is off for every session, health is degraded',
            meta: { row: 'writing --watchdog check [free disk below the minimum]--> off globally' },
          },
          offForGlobalCap("Another session's output took the total to global_cap_mb"),
        ],
      },
    },
    stopped: {
      description: "This session's file is at its cap: left untouched; snapshots still come from tmux",
    },
    off: {
      description: 'Writing is off for every session (global cap or low disk); health is degraded',
      on: {
        'watchdog.check': {
          target: 'writing',
          guard: 'hasRoomAgain',
          actions: 'clearReason',
          description: 'Free disk is back above the minimum plus a margin and the total below the cap: writing resumes',
          meta: { row: 'tether' },
        },
      },
    },
    deleted: {
      description: 'The file is gone',
      type: 'final',
    },
  },
});
