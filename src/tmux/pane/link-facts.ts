/**
 * What a pane link reads from tmux and how it judges its own end: the facts read at set-up (the
 * server's pid, the recorded agent pane, the position reservation) in one control command, the
 * agent pane itself, and what a closed control client means for the session.
 *
 * Invariant: a link that ends is classified by asking tmux (has-session), never by guessing from
 * the control stream.
 */
import { processExists } from '../../process.js';
import type { ControlClient, ControlClose } from '../control/control-client.js';
import { isNoServerError, isNoServerListeningError, isNoSessionError, type TmuxCli } from '../exec.js';
import { PANE_ID_RE, SESSION_OPTIONS, optionFormat, parsePid } from '../layout.js';
import { buildControlCommand } from '../quote.js';

/** What a pane link tells its session: the link and the pane, as the session machine hears them. */
export type PaneLinkEvent =
  | { type: 'link.up'; paneId: string }
  | { type: 'link.down'; reason: string }
  | { type: 'session.gone' }
  | { type: 'server.lost'; reason: string }
  | { type: 'pane.exited'; status: number | null }
  | { type: 'pane.revived' };

/** What the link reads from tmux at set-up, in one control command (no tmux process started). */
export interface LinkFacts {
  readonly serverPid: number | null;
  /** `@tether-pane`, when set in a pane-id shape. */
  readonly recordedPane: string | null;
  /** `@tether-seq`: the position an earlier run reserved (0 when unset or malformed). */
  readonly reservedSeq: number;
}

export async function readLinkFacts(client: ControlClient, id: string): Promise<LinkFacts> {
  const format = `#{pid} ${optionFormat(SESSION_OPTIONS.pane)} ${optionFormat(SESSION_OPTIONS.seq)}`;
  const body = await client.run(buildControlCommand(['display-message', '-p', '-t', `=${id}:`, format]));
  const [pid = '', pane = '', seq = ''] = body.toString('utf8').trim().split(' ');
  const reserved = /^\d+$/.test(seq) ? Number(seq) : 0;
  return {
    serverPid: parsePid(pid),
    recordedPane: PANE_ID_RE.test(pane) ? pane : null,
    reservedSeq: Number.isSafeInteger(reserved) ? reserved : 0,
  };
}

/**
 * The pane tether mirrors: `@tether-pane` when it still belongs to the session, else the first;
 * with when its window last had output (`#{window_activity}`, epoch ms, whole seconds; null when
 * tmux did not say), which tmux keeps across daemon restarts.
 */
export async function findAgentPane(
  client: ControlClient,
  id: string,
  recorded: string | null,
): Promise<{ paneId: string; activityMs: number | null }> {
  const body = await client.run(buildControlCommand(['list-panes', '-s', '-t', `=${id}`, '-F', '#{pane_id} #{window_activity}']));
  const panes = new Map<string, number | null>();
  for (const line of body.toString('utf8').split('\n')) {
    const [pane = '', activity = '', ...rest] = line.split(' ');
    if (PANE_ID_RE.test(pane) && /^\d*$/.test(activity) && rest.length === 0) panes.set(pane, activity ? Number(activity) * 1000 : null);
  }
  if (panes.size === 0) throw new Error(`session ${id} has no panes`);
  const paneId = recorded !== null && panes.has(recorded) ? recorded : [...panes.keys()][0]!;
  const activityMs = panes.get(paneId) ?? null;
  return { paneId, activityMs: activityMs !== null && Number.isSafeInteger(activityMs) && activityMs > 0 ? activityMs : null };
}

/**
 * Why a link ended, as the session's event: server.lost when the tmux server died under the
 * client (tmux's client says so: a crash or a SIGKILL, not a kill on purpose); gone when tmux runs
 * but lacks the session, or when the server the session lived in has exited after a kill on
 * purpose (killing the last session ends the server too); a lost link otherwise, retried.
 */
export async function classifyClose(cli: TmuxCli, id: string, close: ControlClose, serverPid: number | null): Promise<PaneLinkEvent> {
  // The server died under us (a crash, a SIGKILL): whatever a server on the socket says now (a
  // restore of another session may already have started a new one), this session was lost with it.
  // tmux's client says so only when its connection broke; the dead server may not be reaped yet.
  if (close.serverLost) return { type: 'server.lost', reason: close.reason };
  if (close.sessionGone) return { type: 'session.gone' };
  try {
    await cli.run(['has-session', '-t', `=${id}`]);
    return { type: 'link.down', reason: close.reason };
  } catch (err) {
    if (isNoSessionError(err)) return { type: 'session.gone' };
    if (isNoServerError(err)) {
      // The server the session lived in has exited: the session went with it. A server still
      // alive (its socket deleted or moved, or too busy to accept) is worth waiting for. Not
      // linked yet, the session was seen moments ago; nothing listening means its server ended.
      if (serverPid !== null ? !processExists(serverPid) : isNoServerListeningError(err)) return { type: 'session.gone' };
      return { type: 'link.down', reason: 'the tmux server is not running' };
    }
    return { type: 'link.down', reason: `${close.reason}; tmux: ${(err as Error).message}` };
  }
}
