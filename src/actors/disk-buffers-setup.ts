/**
 * The disk buffers as `[buffer]` configures them (docs/disk-buffer.md), watched by `/ops`, and
 * their set-up at a daemon's start: measured, and what the idle clean-up finds removed (buffers
 * idle longer than `idle_days`, tether sessions that ended that long ago).
 *
 * Invariant: making them touches no file; a data dir that cannot hold buffers never keeps the
 * sessions from being served (that is logged, and the start goes on); only tether's own sessions
 * are ever removed.
 */
import { statfs } from 'node:fs/promises';
import type { TetherConfig } from '../config/schema.js';
import type { Logger } from '../log.js';
import { sessionActorId } from '../machines/sidecar.machine.js';
import type { OpsInspector } from '../ops/inspector.js';
import type { TmuxCli } from '../tmux/exec.js';
import { killSession } from '../tmux/sessions/sessions.js';
import { listSessions, sessionActivity } from '../tmux/sessions/session-list.js';
import { DiskBuffers, GIB, MIB, type SessionActivity } from './disk-buffer.actor.js';

/** Free bytes on the file system of `dir`, for the watchdog. */
export async function statfsFree(dir: string): Promise<number> {
  const s = await statfs(dir);
  return s.bavail * s.bsize;
}

/**
 * The disk buffers as `[buffer]` configures them, watched by `/ops`; `parts` are what a test
 * injects (a free-space source, a clock days ahead). Making them touches no file.
 */
export function makeDiskBuffers(
  config: TetherConfig,
  dir: string,
  ops: OpsInspector,
  parts: { readonly freeBytes?: ((dir: string) => Promise<number>) | undefined; readonly now?: (() => number) | undefined },
  log: Logger,
): DiskBuffers {
  const minFreeBytes = Math.round(config.buffer.min_free_gb * GIB);
  return new DiskBuffers({
    inspect: (id) =>
      ops.observer(id === null ? { label: 'diskBuffer', parent: 'sidecar' } : { label: 'buffer', parent: sessionActorId(id) }),
    dir,
    limits: {
      sessionCapBytes: config.buffer.session_cap_mb * MIB,
      globalCapBytes: config.buffer.global_cap_mb * MIB,
      minFreeBytes,
      // Hysteresis: writing resumes only a tenth above the minimum (at least 1 MB), so it does not flap.
      resumeMarginBytes: Math.max(MIB, Math.round(minFreeBytes / 10)),
      idleMs: config.buffer.idle_days * 86_400_000,
    },
    freeBytes: () => (parts.freeBytes ?? statfsFree)(dir),
    watchdogIntervalMs: config.buffer.watchdog_interval_s * 1000,
    now: parts.now ?? Date.now,
    log,
  });
}

/** What the start-up cleanup needs to know of each tmux session. */
async function activityOf(cli: TmuxCli): Promise<Map<string, SessionActivity>> {
  const [activity, sessions] = await Promise.all([sessionActivity(cli), listSessions(cli)]);
  const out = new Map<string, SessionActivity>();
  for (const s of sessions) {
    const a = activity.get(s.name);
    // Only tether's own sessions are ever removed; a user's session is never touched.
    out.set(s.name, {
      lastActivityMs: a?.lastActivityMs ?? 0,
      attached: (a?.attachedClients ?? s.attachedClients) > 0,
      ended: s.isTether && s.paneDead,
    });
  }
  return out;
}

/**
 * Measures the disk buffers and removes what the idle cleanup finds: buffers idle longer than
 * `idle_days`, and tether sessions that ended that long ago. A data dir that cannot hold buffers
 * must not keep the sessions from being served: that is logged, and the start goes on.
 */
export async function setUpBuffers(buffers: DiskBuffers, cli: TmuxCli, log: Logger): Promise<void> {
  try {
    await buffers.start();
    const { endedSessions } = await buffers.cleanupIdle(await activityOf(cli).catch(() => new Map<string, SessionActivity>()));
    for (const id of endedSessions) {
      await killSession(cli, id).catch(() => undefined);
      log.info({ session: id }, 'removed a session that had ended and was idle longer than idle_days');
    }
  } catch (err) {
    log.error({ err: (err as Error).message }, 'the disk buffers could not be set up');
  }
}
