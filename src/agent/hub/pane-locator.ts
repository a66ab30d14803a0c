/**
 * Pane -> session: where an agent that registered lives, asked of the daemon's own tmux
 * server. A session an agent registers from becomes a tether session (docs/configuration.md
 * "Start-up"): it gets `@created` and, as its mirrored pane, the agent's pane.
 *
 * Invariants: the pane id is trusted only when the agent's tmux socket is the daemon's (pane
 * ids are per server); a refusal is one sentence a person can act on; nothing but tether's own
 * user options is ever set.
 */
import { realpath } from 'node:fs/promises';
import type { TmuxCli } from '../../tmux/exec.js';
import { isValidSessionName } from '../../protocol/session-name.js';
import { setUserOption } from '../../tmux/sessions.js';
import type { PaneLocation } from './hub-types.js';

const SEP = '\x1f';
const FORMAT = ['#{socket_path}', '#{pane_id}', '#{session_name}', '#{?@created,1,0}'].join(SEP);

/** The same file (a socket reached through different paths compares equal). */
async function samePath(a: string, b: string): Promise<boolean> {
  if (a === b) return true;
  const [ra, rb] = await Promise.all([realpath(a).catch(() => a), realpath(b).catch(() => b)]);
  return ra === rb;
}

/**
 * Finds the session of `pane` on the server `cli` talks to; marks it as a tether session when
 * it is not one yet. `now` stamps `@created`.
 */
export async function locatePane(cli: TmuxCli, pane: string, tmuxSocket: string, now: () => number): Promise<PaneLocation> {
  const unknown: PaneLocation = {
    refused: `pane ${pane} is not on the tmux server tether serves: start the agent inside that server, or set [tmux] socket in tether's config to ${tmuxSocket}`,
  };
  let out: string;
  try {
    out = (await cli.run(['display-message', '-p', '-t', pane, FORMAT])).stdout.toString('utf8').replace(/\n$/, '');
  } catch {
    return unknown;
  }
  const [socket = '', found = '', session = '', tether] = out.split(SEP);
  if (!(await samePath(socket, tmuxSocket))) {
    return {
      refused: `this agent runs on the tmux server at ${tmuxSocket}, but tether serves the one at ${socket}: set [tmux] socket in tether's config to ${tmuxSocket}`,
    };
  }
  // tmux 3.3a answers for a pane it does not have (with empty fields) instead of failing.
  if (found !== pane) return unknown;
  if (!isValidSessionName(session)) {
    return {
      refused: `the tmux session name "${session.slice(0, 64)}" cannot be a tether session (1-64 letters, digits, "_" or "-"): rename it with tmux rename-session`,
    };
  }
  if (tether !== '1') {
    await setUserOption(cli, session, '@tether-pane', pane);
    await setUserOption(cli, session, '@created', new Date(now()).toISOString());
  }
  return { session };
}
