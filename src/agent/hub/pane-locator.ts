/**
 * Pane -> session: where an agent that registered or reported lives, on the daemon's own tmux
 * server. A session an agent registers from becomes a tether session (docs/configuration.md
 * "Start-up"; the marking is `markPaneSession`, src/tmux/layout.ts).
 *
 * Every hook report asks, so the answer costs no tmux process when it can (docs/architecture.md
 * "Session facts without a process per request"): a pane a linked session mirrors is answered
 * from what the sessions know; another pane is asked of tmux over one of the sessions' control
 * clients; a process runs only while no session is linked.
 *
 * Invariants: the pane id is trusted only when the agent's tmux socket is the daemon's (pane ids
 * are per server); a refusal is one sentence a person can act on; nothing but tether's own user
 * options is ever set.
 */
import { realpath } from 'node:fs/promises';
import type { TmuxCli } from '../../tmux/exec.js';
import { markPaneSession, panePlaceCommand, parsePanePlace, type PaneLocation, type PanePlace } from '../../tmux/layout.js';

/** What the daemon's sessions know of tmux (the actor system): the panes they mirror, and their control clients. */
export interface LinkedPanes {
  /** The session whose linked control client mirrors `pane`, and the pid of the server it reached; null when none does. */
  sessionOfPane(pane: string): { readonly session: string; readonly serverPid: number | null } | null;
  /** A server-wide tmux command over one of the sessions' control clients; rejects when none is linked. */
  queryTmux(command: readonly string[]): Promise<Buffer>;
}

/** The same file (a socket reached through different paths compares equal). */
async function samePath(a: string, b: string): Promise<boolean> {
  if (a === b) return true;
  const [ra, rb] = await Promise.all([realpath(a).catch(() => a), realpath(b).catch(() => b)]);
  return ra === rb;
}

/** The refusal of an agent on another tmux server than the daemon's. */
const otherServer = (tmuxSocket: string, served: string): PaneLocation => ({
  refused: `this agent runs on the tmux server at ${tmuxSocket}, but tether serves the one at ${served}: set [tmux] socket in tether's config to ${tmuxSocket}`,
});

/**
 * The refusal of a report from a tmux server that is not the daemon's any more (pane ids are per
 * server, and a new server numbers its panes again): an agent killed with its server may report
 * its end after the session was restored on a new one, with a pane id the new one uses.
 */
const goneServer = (pane: string, reported: number, served: number): PaneLocation => ({
  refused: `pane ${pane} was on the tmux server with pid ${reported}, which is not the one tether serves (pid ${served}): the report comes from a server that exited`,
});

/** Whether a report that names server `reported` may be placed on server `served` (either unknown: it may). */
const sameServer = (reported: number | undefined, served: number | null): boolean =>
  reported === undefined || served === null || reported === served;

/** Finds the session of a pane on the daemon's tmux server, and marks it as a tether session when it is not one yet. */
export class PaneLocator {
  private panes: LinkedPanes | null = null;
  /** The daemon's server's socket as tmux names it, once asked (the daemon's server is one socket for its life). */
  private served: string | null = null;

  constructor(
    private readonly cli: TmuxCli,
    /** Stamps `@created` of a session it marks. */
    private readonly now: () => number,
  ) {}

  /** Asks `panes` first from now on; returns the undo. */
  useLinkedPanes(panes: LinkedPanes): () => void {
    this.panes = panes;
    return () => {
      if (this.panes === panes) this.panes = null;
    };
  }

  /**
   * The session of `pane` for an agent that names `tmuxSocket` (and `serverPid`, when it knows it)
   * as its server, or why it cannot be served; never rejects.
   */
  async locate(pane: string, tmuxSocket: string, serverPid?: number): Promise<PaneLocation> {
    return await this.place(pane, tmuxSocket, serverPid).catch((err: Error): PaneLocation => ({
      refused: `tether could not ask tmux about pane ${pane}: ${err.message}`,
    }));
  }

  private async place(pane: string, tmuxSocket: string, serverPid: number | undefined): Promise<PaneLocation> {
    const mirrored = this.panes?.sessionOfPane(pane) ?? null;
    // A mirrored pane is in a tether session already: only the server is left to check.
    if (mirrored !== null && this.served !== null) {
      if (!(await samePath(this.served, tmuxSocket))) return otherServer(tmuxSocket, this.served);
      if (!sameServer(serverPid, mirrored.serverPid)) return goneServer(pane, serverPid!, mirrored.serverPid!);
      return { session: mirrored.session };
    }
    let place: PanePlace;
    try {
      place = parsePanePlace(await this.ask(panePlaceCommand(pane)));
    } catch {
      return unknownPane(pane, tmuxSocket);
    }
    if (place.socket !== '') this.served = place.socket;
    if (!(await samePath(place.socket, tmuxSocket))) return otherServer(tmuxSocket, place.socket);
    if (place.pane !== pane) return unknownPane(pane, tmuxSocket);
    if (!sameServer(serverPid, place.serverPid)) return goneServer(pane, serverPid!, place.serverPid!);
    return markPaneSession(place, (command) => this.ask(command), new Date(this.now()).toISOString());
  }

  /** Runs one command over a session's control client, or as a process when none can take it; answers its output. */
  private async ask(command: readonly string[]): Promise<string> {
    const linked = this.panes ? await this.panes.queryTmux(command).catch(() => null) : null;
    return (linked ?? (await this.cli.run(command)).stdout).toString('utf8');
  }
}

/** The refusal of a pane the daemon's tmux server does not have. */
function unknownPane(pane: string, tmuxSocket: string): PaneLocation {
  return {
    refused: `pane ${pane} is not on the tmux server tether serves: start the agent inside that server, or set [tmux] socket in tether's config to ${tmuxSocket}`,
  };
}
