/**
 * The daemon's health report (`GET /health`, `tether status`): what runs, what is degraded and
 * why, in one object (docs/api.md "Health"). Built from the parts' own status on each request.
 *
 * Invariant: `ok` is true exactly when `status` is 'ok', and only a disk buffer that stopped
 * writing degrades it; every other problem is a warning a person can act on.
 */
import { GIB, MIB, type DiskBufferStatus } from '../../actors/disk-buffer.actor.js';
import type { SidecarStatus } from '../../actors/system-status.js';
import type { MdnsStatus } from '../../mdns/advertiser.js';
import type { PushStatus } from '../../push/push.service.js';
import type { UnrestorableSession } from '../../restore/at-start.js';

/**
 * One live client connection as an operator sees it (docs/api.md "GET /health", `connections`):
 * its link as the keepalive measures it, its device's comings and goings, and its stream
 * client's state.
 */
export interface ClientConnection {
  readonly session: string;
  readonly kind: 'stream' | 'side';
  /** Its stream client in the actor tree (`session:pi-main/client#3`); null for a side channel. */
  readonly actor: string | null;
  /** The name of the token it opened with (one token per paired device). */
  readonly device: string;
  readonly tokenId: string;
  /** When it connected (ISO 8601), and for how many seconds (monotonic). */
  readonly connectedAt: string;
  readonly connectedS: number;
  /** Round trip of the last ping and its smoothed value, in ms; null until the first pong. */
  readonly rttMs: number | null;
  readonly srttMs: number | null;
  /** Bytes written to it since it connected. */
  readonly bytesSent: number;
  /** Its stream client's state (`live`, `behind`, `resyncing`, ...); null for a side channel. */
  readonly state: string | null;
  /** True while it is too far behind to be sent live output (it gets a snapshot once drained). */
  readonly behind: boolean;
  /** How often its device came back after having no connection left, and for how long it was away (ms). */
  readonly reconnects: number;
  readonly awayMs: number;
  readonly lastAwayMs: number | null;
}

export interface HealthReport {
  /** True exactly when `status` is 'ok'. */
  ok: boolean;
  status: 'ok' | 'degraded';
  version: string;
  /** The daemon's id: made once, kept in the data dir, never changed (docs/pairing.md "Which daemon is which"). */
  id: string;
  /** The daemon's name: config `name`, else the host name. */
  name: string;
  /** Whether the daemon is advertised on the local network (mDNS), and why not. */
  mdns: MdnsStatus;
  /** Seconds since the daemon started. */
  uptime: number;
  sessions: number;
  sessionIds: string[];
  /**
   * Live stream and side-channel clients, all sessions together: a socket that stopped answering
   * pings is closed within its deadline and is not counted.
   */
  clients: number;
  /** Each of those clients, with its link's figures. */
  connections: ClientConnection[];
  bufferMb: number;
  diskFreeGb: number;
  watchdog: { state: string; reason: string | null };
  warnings: string[];
  /** https/wss served directly, and the certificate's SHA-256 fingerprint (what phones pin). */
  tls: { enabled: boolean; fingerprint: string | null };
  /** Push notifications: configured or why not, counts and the last failure. */
  push: PushStatus;
  /** How the running sessions' snapshots were made: tmux asked for a client, ahead while quiet, or served warm. */
  snapshots: { cold: number; warmCaptures: number; warmServed: number; warmBytes: number };
  /**
   * Sessions lost with their tmux server: whether they are brought back (`[agent] restore`), those
   * being restored now, and those that could not be, with the reason (kept until deleted).
   */
  restore: { enabled: boolean; restoring: string[]; unrestorable: UnrestorableSession[] };
}

/** Who the daemon is, and its advertisement on the local network. */
export interface Presence {
  readonly id: string;
  readonly name: string;
  readonly mdns: MdnsStatus;
}

export interface HealthDeps {
  readonly version: string;
  readonly presence: () => Presence;
  readonly startedAt: number;
  readonly now: () => number;
  readonly system: { status(): SidecarStatus };
  readonly buffers: { status(): DiskBufferStatus };
  readonly push: { status(): PushStatus };
  /** The live stream and side-channel clients. */
  readonly connections: () => readonly ClientConnection[];
  /** Warnings fixed at start (configuration); read on every report, so later ones show too. */
  readonly startWarnings: readonly string[];
  readonly tls: { enabled: boolean; fingerprint: string | null };
  readonly restore?: { readonly enabled: boolean; unrestorable(): readonly UnrestorableSession[] };
}

/** Builds the report from each part's status, now. */
export function healthReport(deps: HealthDeps): HealthReport {
  const status = deps.system.status();
  const warnings = [...deps.startWarnings];
  if (status.tmuxProblem) warnings.push(status.tmuxProblem);
  for (const s of status.sessions) if (!s.linked && s.lastError) warnings.push(`session ${s.id}: ${s.lastError}`);
  const disk = deps.buffers.status();
  const degraded = disk.state === 'off';
  if (disk.reason) warnings.push(disk.reason);
  warnings.push(...disk.warnings);
  const push = deps.push.status();
  const connections = [...deps.connections()];
  const snapshots = { cold: 0, warmCaptures: 0, warmServed: 0, warmBytes: 0 };
  for (const s of status.sessions) {
    snapshots.cold += s.snapshots.cold;
    snapshots.warmCaptures += s.snapshots.warmCaptures;
    snapshots.warmServed += s.snapshots.warmServed;
    snapshots.warmBytes += s.warmBytes;
  }
  if (!push.configured && push.reason) warnings.push(push.reason);
  const unrestorable = [...(deps.restore?.unrestorable() ?? [])];
  for (const u of unrestorable) warnings.push(`session ${u.id} could not be restored: ${u.reason}`);
  const { id, name, mdns } = deps.presence();
  if (mdns.state === 'retrying' && mdns.reason) warnings.push(mdns.reason);
  return {
    ok: !degraded,
    status: degraded ? 'degraded' : 'ok',
    version: deps.version,
    id,
    name,
    mdns,
    uptime: Math.round((deps.now() - deps.startedAt) / 1000),
    sessions: status.sessions.length,
    sessionIds: status.sessions.map((s) => s.id),
    clients: connections.length,
    connections,
    bufferMb: Math.round((disk.totalBytes / MIB) * 100) / 100,
    diskFreeGb: disk.freeBytes === null ? 0 : Math.round((disk.freeBytes / GIB) * 100) / 100,
    watchdog: { state: disk.state, reason: disk.reason },
    warnings,
    tls: deps.tls,
    push,
    snapshots,
    restore: {
      enabled: deps.restore?.enabled ?? false,
      restoring: status.sessions.filter((s) => s.state === 'restoring').map((s) => s.id),
      unrestorable,
    },
  };
}
