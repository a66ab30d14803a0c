/**
 * What follows a session's events in the daemon, written once: agents' panes are placed in their
 * sessions by what the sessions' links know (no tmux process per report); a pane that appears is
 * fed to its disk buffer, its record follows its position and link, its agent's adapter reads its
 * notices and is told of it; an agent that registers makes discovery look now; an automatic description and an
 * exited agent reach the clients; a session that ends or is deleted takes its record, its agent's
 * memory, its continue, its prompts, its uploads and (unless kept) its buffer with it: what a
 * deleted session takes with it is said here, and nowhere else (docs/architecture.md "Actors",
 * docs/reliability.md "Restoring sessions").
 *
 * The composition root constructs the parts and calls `connectSessionEvents` once, before the
 * system starts; every rule of "when this, then that" between them is here, where a test reaches it.
 */
import type { CreatedPane } from '../../stream/live-pane.js';
import type { SidecarSystem } from '../../actors/system.js';
import type { AgentService } from '../../agent/hub/agent-service.js';
import type { RecordKeeper } from '../../restore/record-keeper.js';
import type { SessionsService } from './sessions.service.js';

export interface SessionEventsDeps {
  readonly system: Pick<
    SidecarSystem,
    | 'onPaneCreated'
    | 'onSessionEnded'
    | 'onSessionFinal'
    | 'onAttention'
    | 'onMetaChanged'
    | 'requestRescan'
    | 'metaChanged'
    | 'session'
    | 'hasSession'
    | 'sessionOfPane'
    | 'queryTmux'
  >;
  readonly agents: Pick<
    AgentService,
    'onRegistered' | 'onDescribed' | 'onConversation' | 'notice' | 'sessionSeen' | 'forget' | 'exited' | 'paneExited' | 'locateThrough'
  >;
  readonly keeper: Pick<RecordKeeper, 'note' | 'sync' | 'forget'>;
  readonly sessions: Pick<SessionsService, 'onDeleted'>;
  /** The disk buffers: a pane's stream is written to its session's file. */
  readonly buffers: { attach(id: string, stream: CreatedPane['stream']): () => void; delete(id: string): Promise<void> };
  /** The session's uploads (they go with a deleted session). */
  readonly uploads: { sessionDeleted(id: string): void };
  /** The count of live panes (V8's young generation is sized by it). */
  readonly livePanes: { added(): void; removed(): void };
  /** What else holds something of a session and forgets it when the session is deleted (its continue, its limit's reset, its prompts). */
  readonly forgets?: readonly { forget(id: string): void }[];
}

/** Connects the parts; returns the undo (every listener removed). */
export function connectSessionEvents(d: SessionEventsDeps): () => void {
  const undos = [
    // Agents' reports are placed in their sessions by what the sessions' control clients know, not by a tmux process each.
    d.agents.locateThrough(d.system),
    d.agents.onRegistered(() => d.system.requestRescan()),
    d.agents.onDescribed((id) => d.system.metaChanged(id)),
    d.agents.onConversation((id, fact) => d.keeper.note(id, fact)),
    d.system.onPaneCreated((pane) => followPane(d, pane)),
    d.system.onSessionEnded((id, why) => {
      if (why !== 'deleted') return void d.keeper.sync(id); // the agent exited: the record says so, and it is not restored
      // What a deleted session takes with it, all of it: its agent's memory, its continue, its limit's reset, its prompts.
      d.agents.forget(id);
      for (const part of d.forgets ?? []) part.forget(id);
    }),
    // A session that ended (deleted, killed on purpose, or lost with restoring off) is not to come
    // back; one that could not be restored keeps its record, which says why.
    d.system.onSessionFinal((id, final) => {
      if (final === 'ended') d.keeper.forget(id);
    }),
    d.system.onAttention((id, a) => {
      if (a.kind === 'agent-exited') d.agents.exited(id, a); // its `exited` stop
    }),
    d.system.onMetaChanged((id) => {
      // An agent that reports by hooks has no connection whose close says it exited: this does.
      if (d.system.session(id)?.exited) d.agents.paneExited(id);
      void d.keeper.sync(id);
    }),
    d.sessions.onDeleted((id, keepBuffer) => {
      d.keeper.forget(id);
      d.uploads.sessionDeleted(id);
      // An unrestorable session has no actor to delete its buffer.
      if (!keepBuffer && !d.system.hasSession(id)) void d.buffers.delete(id).catch(() => undefined);
    }),
  ];
  return () => undos.forEach((undo) => undo());
}

/** A session's live pane, followed while it lives: the returned function stops following it. */
function followPane(d: SessionEventsDeps, pane: CreatedPane): () => void {
  d.livePanes.added();
  const unbuffer = d.buffers.attach(pane.id, pane.stream);
  const unnotice = pane.onNotice((n) => d.agents.notice(pane.id, n));
  const unwatch = pane.onChange((what) => {
    if (what !== 'linked') return d.keeper.note(pane.id, { reservedSeq: pane.reservedSeq });
    void d.keeper.sync(pane.id);
    void d.agents.sessionSeen(pane.id); // a Codex session's rollout file is followed
  });
  return () => {
    d.livePanes.removed();
    for (const stop of [unwatch, unbuffer, unnotice]) stop();
  };
}
