/**
 * Connecting a session's pane link: the control client attached to the session, set up (server
 * pid, agent pane, flow control, the position reservation), then the pane's output fed straight
 * to the session's stream, the pane watched, and the close judged.
 *
 * Invariants: the link tells its session only what changes the session's state (link.up,
 * link.down, pane.exited, pane.revived, session.gone, server.lost; its first look at the pane,
 * and each new program in it, always), never the bytes, and never throws into it; output of
 * panes other than the agent pane is ignored.
 */
import type { Logger } from '../../log.js';
import { ControlClient } from '../control/control-client.js';
import type { ControlEvent } from '../control/control-events.js';
import type { TmuxCli } from '../exec.js';
import { SESSION_OPTIONS } from '../layout.js';
import { classifyClose, findAgentPane, readLinkFacts, type PaneLinkEvent } from './link-facts.js';
import type { PaneLink } from './pane-link.js';
import { PaneWatch, type PaneState } from './pane-watch.js';
import { buildControlCommand } from '../quote.js';
import { setUserOption } from '../sessions/sessions.js';
import type { SnapshotMark } from '../screen/snapshot.js';
import type { TmuxTarget } from '../target.js';

/**
 * tmux pauses a pane for a control client whose output is this many seconds behind; tether
 * then continues it and resyncs clients with a snapshot. tmux's own queue stays bounded.
 */
export const PAUSE_AFTER_SECONDS = 10;

/** Where the link puts what the agent pane shows: the session's stream (src/stream/live-pane.ts). */
export interface PaneSink {
  /** The agent pane's bytes, in order. */
  output(data: Buffer): void;
  /** Bytes were lost, or tmux changed the screen itself: clients resync from a snapshot. */
  gap(): void;
  /** The screen changed without a byte in the stream (a resize, a death): a capture taken before is stale. */
  stale(): void;
  /** The stream position and tracked state now (stamped on each reply as it is parsed). */
  mark(): SnapshotMark;
  /** Positions start above `previous` (an earlier run's reservation) and are reserved ahead with `reserve`. */
  resume(previous: number, reserve: (position: number) => Promise<void>): Promise<void>;
  /** When tmux says the pane last had output (epoch ms): a session adopted after a restart. */
  noteEarlierOutput(ms: number): void;
  /** The link is up (a link after the first is a gap: the pane may have changed unseen). */
  linked(): void;
  /** The linked control client closed. */
  unlinked(): void;
}

export interface PaneConnectDeps {
  readonly cli: TmuxCli;
  readonly target: TmuxTarget;
  readonly log: Logger;
  /** A control client saw tmux's %sessions-changed: discovery should look again now. */
  readonly sessionsChanged: () => void;
  /** Every look at the agent pane (the exit witness hears them). */
  readonly paneSeen: (state: PaneState) => void;
}

/**
 * Attaches a control client to session `link.id` and keeps `link` and `sink` fed until it closes
 * (reported as the event `classifyClose` judges) or the returned stop is called.
 */
export function connectPaneLink(deps: PaneConnectDeps, link: PaneLink, sink: PaneSink, report: (event: PaneLinkEvent) => void): () => void {
  const id = link.id;
  const log = deps.log.child({ session: id });
  let stopped = false;
  let pane: string | null = null;
  let watch: PaneWatch | null = null;

  const onEvent = (event: ControlEvent): void => {
    switch (event.type) {
      case 'output':
      case 'extended-output':
        if (event.paneId === pane) sink.output(event.data);
        return;
      case 'pause':
        if (event.paneId !== pane) return;
        // Bytes were dropped for us: continue, and make clients resync from a snapshot.
        sink.gap();
        client.command(buildControlCommand(['refresh-client', '-A', `${event.paneId}:continue`])).catch(() => undefined);
        return;
      case 'sessions-changed':
        deps.sessionsChanged();
        return;
      case 'session-changed':
        // With detach-on-destroy off, tmux moves a client whose session died elsewhere.
        if (event.name !== id) client.close('tmux moved the control client to another session');
        return;
      case 'layout-change':
        // A resize changes the screen without a byte in the stream: a warm capture is stale.
        sink.stale();
        watch?.check();
        return;
      case 'window-renamed':
      case 'pane-mode-changed':
        // Things change when a pane dies or is respawned: look now rather than at the next tick.
        watch?.check();
        return;
      default:
    }
  };

  const detach = (): void => {
    watch?.stop();
    if (link.detach(client)) sink.unlinked();
  };

  const hold = link.linkHold;
  const client = ControlClient.attach({
    target: deps.target,
    session: id,
    mark: () => sink.mark(),
    onEvent,
    ...(hold ? { notBefore: hold } : {}),
    onClose: (close) => {
      detach();
      if (stopped) return;
      // Closed on purpose for a respawn (tmux 3.3a needs it): it comes back once the pane runs.
      if (link.linkHold) log.debug({ reason: close.reason }, 'tmux control link closed for a respawn');
      else log.warn({ reason: close.reason }, 'tmux control link closed');
      void classifyClose(deps.cli, id, close, link.serverPid).then((event) => {
        log.debug(
          { event: event.type, serverLost: close.serverLost, sessionGone: close.sessionGone },
          'tmux control link close classified',
        );
        if (!stopped) report(event);
      });
    },
  });
  link.linking(client);

  void (async () => {
    try {
      await client.attached;
      const facts = await readLinkFacts(client, id);
      if (facts.serverPid !== null) link.serverPid = facts.serverPid;
      const { paneId, activityMs } = await findAgentPane(client, id, facts.recordedPane);
      // Flow control and pane-death reports; an older tmux without them still streams.
      await client
        .run(buildControlCommand(['refresh-client', '-f', `pause-after=${PAUSE_AFTER_SECONDS}`]))
        .catch((err: Error) => log.warn({ err: err.message }, 'tmux has no pause-after; streaming without it'));
      if (stopped) return;
      // Positions continue above what any earlier run reserved for this session; the reservation
      // goes over the link while it is up (no tmux process per renewal).
      await sink.resume(facts.reservedSeq, (position) =>
        client.isClosed
          ? setUserOption(deps.cli, id, SESSION_OPTIONS.seq, String(position))
          : client.run(buildControlCommand(['set-option', '-t', `=${id}:`, SESSION_OPTIONS.seq, String(position)])).then(() => undefined),
      );
      if (stopped) return;
      pane = paneId;
      // Adopted after a restart, the pane's last output is what tmux knows of it (the list
      // keeps its order); output seen by this daemon always wins.
      if (activityMs !== null) sink.noteEarlierOutput(activityMs);
      link.attach(client, paneId);
      sink.linked();
      report({ type: 'link.up', paneId });
      watch = new PaneWatch({
        target: deps.target,
        client,
        paneId,
        serverPid: () => link.serverPid,
        seen: deps.paneSeen,
        died: () => {
          sink.gap();
          sink.stale();
        },
        report,
      });
      watch.start();
      log.debug({ paneId, pid: client.pid }, 'tmux control link up');
    } catch (err) {
      // The close handler reports it; make sure the client is really gone.
      if (!client.isClosed) client.close(`link setup failed: ${(err as Error).message}`);
    }
  })();

  return () => {
    stopped = true;
    detach();
    client.close();
  };
}
