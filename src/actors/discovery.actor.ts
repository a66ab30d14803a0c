/**
 * Discovery of tether sessions in tmux, for the sidecar machine: at start, whenever a control
 * client relays tmux's %sessions-changed, and by a slow rescan as a safety net (fast while no
 * session is linked, since then no control client can tell us anything).
 *
 * Invariant: at most one scan runs at a time; a request during a scan runs one more after it.
 */
import { fromCallback } from 'xstate';
import type { SidecarEvent, TmuxScan } from '../machines/sidecar.machine.js';
import { isNoServerError, type TmuxCli } from '../tmux/exec.js';
import { listSessions } from '../tmux/sessions/session-list.js';

/** Rescan period while no session is linked (a session made by `tether attach` shows up within it). */
export const RESCAN_IDLE_MS = 1000;
/** Rescan period while control clients relay tmux's own notices. */
export const RESCAN_LINKED_MS = 10_000;

export interface DiscoveryDeps {
  readonly cli: TmuxCli;
  /** How many sessions have a live control link right now. */
  readonly linkedCount: () => number;
  /** The sessions whose actor runs (their tmux session exists) right now. */
  readonly runningIds: () => readonly string[];
  /** The pid of the tmux server a session's link last reached, or null when it never linked. */
  readonly serverPidOf: (id: string) => number | null;
  /** A mark of the session actors removed so far, and the sessions removed after a mark. */
  readonly removalMark: () => number;
  readonly removedSince: (mark: number) => ReadonlySet<string>;
  /** Registers the listener for "look again now"; returns its removal. */
  readonly onRescanRequest: (listener: () => void) => () => void;
  /** Runs the listing over a linked control client (no process); rejects when none is linked. */
  readonly query?: (command: readonly string[]) => Promise<Buffer>;
}

/**
 * One look at tmux: is a server running, and which sessions are tether sessions. The listing goes
 * over a linked control client when `query` is given and one is (a scan every 10 s would fork
 * the daemon as often); the options tether does not hold yet, free text, are read by a process,
 * and with `refresh` every description again (one set by hand in tmux shows within a scan).
 */
export async function scanTmux(cli: TmuxCli, query?: (command: readonly string[]) => Promise<Buffer>, refresh = true): Promise<TmuxScan> {
  const sessions = await listSessions(cli, { refresh, query: query ?? null });
  if (sessions.length === 0) {
    try {
      await cli.run(['list-sessions', '-F', '#{session_id}']);
    } catch (err) {
      if (isNoServerError(err)) return { serverRunning: false, sessionIds: [], serverPid: null };
    }
  }
  return {
    serverRunning: true,
    sessionIds: sessions.filter((s) => s.isTether).map((s) => s.name),
    serverPid: sessions[0]?.serverPid ?? null,
  };
}

export function discoveryLogic(deps: DiscoveryDeps) {
  return fromCallback<SidecarEvent>(({ sendBack }) => {
    let stopped = false;
    let running = false;
    let again = false;
    let againRefresh = false;
    let timer: NodeJS.Timeout | null = null;

    const schedule = (): void => {
      if (stopped) return;
      if (timer) clearTimeout(timer);
      timer = setTimeout(() => void scan(true), deps.linkedCount() > 0 ? RESCAN_LINKED_MS : RESCAN_IDLE_MS);
      timer.unref();
    };

    /**
     * `refresh`: the periodic scan (and the first) reads every description again; a requested
     * one (a session made or ended, seen by a control client) reads only what is new, so that a
     * hundred sessions made at once do not read every description a hundred times.
     */
    const scan = async (refresh: boolean): Promise<void> => {
      if (stopped) return;
      if (running) {
        again = true;
        againRefresh ||= refresh;
        return;
      }
      running = true;
      try {
        const runningAtStart = deps.runningIds();
        const mark = deps.removalMark();
        const scanned = await scanTmux(deps.cli, deps.query, refresh);
        // A session whose actor ended while the scan ran (killed, deleted) may still be in its
        // answer: tmux was asked before it went. Adopting it again would make a ghost session.
        const removed = deps.removedSince(mark);
        const result = removed.size === 0 ? scanned : { ...scanned, sessionIds: scanned.sessionIds.filter((id) => !removed.has(id)) };
        // Only a session of the server that answered can be missing from it: one whose server died
        // is being brought back (or ended) by its own link, whatever a new server on the socket holds.
        const judged = runningAtStart.filter((id) => {
          const pid = deps.serverPidOf(id);
          return pid === null || result.serverPid === null || result.serverPid === undefined || pid === result.serverPid;
        });
        if (!stopped) sendBack({ type: 'tmux.scanned', scan: { ...result, runningAtStart: judged } });
      } catch (err) {
        if (!stopped) sendBack({ type: 'tmux.unreachable', reason: (err as Error).message });
      } finally {
        running = false;
        if (again) {
          const next = againRefresh;
          again = againRefresh = false;
          void scan(next);
        } else schedule();
      }
    };

    const off = deps.onRescanRequest(() => void scan(false));
    void scan(true);
    return () => {
      stopped = true;
      off();
      if (timer) clearTimeout(timer);
    };
  });
}
