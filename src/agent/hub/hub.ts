/**
 * The agents of every session, as the daemon sees them: one agent-state actor per session fed
 * by its agent's reports (an extension over a lasting connection; hook programs and plugins one
 * report at a time; a file of the agent's that the daemon follows as it grows; each agent's way
 * is in docs/agents.md), the slash
 * commands it reported, and its user messages (for auto-naming). The stream and the REST routes
 * read it through narrow views (`current`, `subscribe`, `commands`).
 *
 * The parts: src/agent/hub/session-agents.ts keeps each session's agent and its listeners,
 * extension-connection.ts takes pi's connections, hook-intake.ts takes hook reports.
 *
 * Invariants: listeners hear a state only when its value or tool changed, and never while no
 * agent is there (`current` is null then).
 */
import type { AnswerEffect } from '../../machines/agent-state.machine.js';
import type { AgentStateFact } from '../../protocol/frames.js';
import type { Stop } from '../../protocol/stop.js';
import type { AgentUsage } from '../../protocol/usage.js';
import type { HookOutcome } from '../contract/adapter.js';
import type { AskOpening } from '../asks/ask.js';
import type { Answerer, AskRecord, ClosedListener } from '../asks/asks.js';
import { acceptExtension, connectionByFirstMessage } from './extension-connection.js';
import { HookIntake } from './hook-intake.js';
import type { AgentConnection, AgentHubDeps, AgentLink } from './hub-types.js';
import type { HookReport, ReportedCommand } from '../wire/extension-channel.js';
import { HOOK_OWNER, SessionAgents } from './session-agents.js';
import { UsageBook } from './usage-book.js';
import type { ExitReport } from '../contract/stops.js';

export type { AgentConnection, AgentHubDeps, AgentLink } from './hub-types.js';

export class AgentHub {
  private readonly agents: SessionAgents;
  private readonly hooks: HookIntake;
  /** Every session's usage windows, and each account's. */
  readonly usage: UsageBook;

  constructor(private readonly deps: AgentHubDeps) {
    this.usage = new UsageBook(deps);
    this.agents = new SessionAgents(deps, this.usage);
    this.hooks = new HookIntake(this.agents, deps, {
      asked: (session, kind, opening) => this.asked(session, kind, opening),
      ended: (session, hint) => this.askEnded(session, hint),
    });
  }

  /** The agent state of a session, or null when no agent reports from it. */
  current(sessionId: string): AgentStateFact | null {
    return this.agents.get(sessionId)?.last ?? null;
  }

  /** Calls `listener` on each change of the session's agent state; returns the unsubscribe. */
  subscribe(sessionId: string, listener: (state: AgentStateFact) => void): () => void {
    const agent = this.agents.ensure(sessionId);
    agent.listeners.add(listener);
    return () => agent.listeners.delete(listener);
  }

  /** Calls `listener` on each change of any session's agent state (push); returns the unsubscribe. */
  subscribeEvery(listener: (sessionId: string, state: AgentStateFact) => void): () => void {
    this.agents.everyListeners.add(listener);
    return () => this.agents.everyListeners.delete(listener);
  }

  /** The slash commands the session's agent reported, or null when none did. */
  commands(sessionId: string): readonly ReportedCommand[] | null {
    return this.agents.get(sessionId)?.commands ?? null;
  }

  /** The conversation id the session's agent last reported one report at a time; null when none did. */
  conversation(sessionId: string): string | null {
    return this.agents.get(sessionId)?.conversation ?? null;
  }

  /** The file the session's agent keeps its conversation in, as it last reported; null when none did. */
  sessionFile(sessionId: string): string | null {
    return this.agents.get(sessionId)?.sessionFile ?? null;
  }

  /** The hook agent (`claude`, `codex`) reporting from the session, or null (pi, or none). */
  hookAgent(sessionId: string): HookReport['agent'] | null {
    const agent = this.agents.get(sessionId);
    return agent?.owner === HOOK_OWNER ? agent.hookAgent : null;
  }

  /** The directory the session's hook agent reported working in, or null. */
  agentCwd(sessionId: string): string | null {
    return this.agents.get(sessionId)?.cwd ?? null;
  }

  /** The usage windows the session's agent reported (docs/api.md "Usage"), or null. */
  usageOf(sessionId: string): AgentUsage | null {
    return this.usage.of(sessionId);
  }

  /** Why the session's agent stopped, while it is stopped (docs/api.md "Stops"), or null. */
  stopOf(sessionId: string): Stop | null {
    return this.agents.stopOf(sessionId);
  }

  /** The session's agent process ended: its `exited` stop (docs/api.md "Stops"). */
  exited(sessionId: string, exit: ExitReport): void {
    this.agents.exited(sessionId, exit);
  }

  /** What the session's agent asks while it waits, in words only (a notification's message), or null. */
  asks(sessionId: string): string | null {
    const agent = this.agents.get(sessionId);
    return agent?.last?.value === 'awaiting-input' ? agent.asks : null;
  }

  /** The ask the session's agent waits on, or null. */
  openAsk(sessionId: string): AskRecord | null {
    return this.agents.desk.current(sessionId);
  }

  /**
   * The session's agent asks `opening` and waits (what a report's `ask` does): the ask opens and
   * the state is awaiting-input with it. Null when no agent reports from the session or the
   * opening offers no valid choice.
   */
  asked(sessionId: string, agentKind: string, opening: AskOpening): AskRecord | null {
    const agent = this.agents.get(sessionId);
    return agent ? this.agents.openAsk(sessionId, agent, agentKind, opening) : null;
  }

  /**
   * The agent says its open ask is over (what a report's `askEnded` does): when tether typed an
   * answer to it, the agent took that answer and the state follows its choice; otherwise it was
   * answered at the terminal, or left (`hint` says which).
   */
  askEnded(sessionId: string, hint: NonNullable<AskRecord['hint']>): void {
    const agent = this.agents.get(sessionId);
    if (!agent || agent.askId === null) return;
    const record = this.agents.desk.current(sessionId);
    const ts = this.deps.now();
    if (record?.claim?.typed && record.open.ask.id === agent.askId) {
      this.agents.send(agent, { type: 'ask.answered', id: agent.askId, effect: record.claim.choice.effect, ts });
      return;
    }
    this.agents.desk.hint(sessionId, hint);
    this.agents.send(agent, { type: 'ask.ended', id: agent.askId, ts });
  }

  /** Claims an answer to ask `id` (docs/api.md "Asks"); throws `ask-not-found`, `invalid`, `ask-closed`. */
  claim(sessionId: string, id: string, choice: string, by: Answerer): AskRecord {
    return this.agents.desk.claim(sessionId, id, choice, by);
  }

  /** Gives up a claim none of whose keys reached the pane (even when marked typed before the first one left). */
  release(record: AskRecord): void {
    this.agents.desk.untyped(record);
    this.agents.desk.release(record);
  }

  /** The claimed answer's keys are typed (from now on the ask is the claimant's, whatever ends it). */
  typed(record: AskRecord): void {
    this.agents.desk.typed(record);
  }

  /** The agent was seen to take the typed answer of an ask: the state follows the choice. */
  answered(record: AskRecord, effect: AnswerEffect): void {
    const agent = this.agents.get(record.session);
    if (agent) this.agents.send(agent, { type: 'ask.answered', id: record.open.ask.id, effect, ts: this.deps.now() });
    // A machine that no longer held the ask closed it already; the desk is told in case it had not.
    this.agents.desk.ended(record.session, record.open.ask.id);
  }

  /** A typed answer the agent was not seen to take within its bound. */
  unconfirmed(record: AskRecord): void {
    this.agents.desk.unconfirmed(record);
  }

  /** Calls `listener` for each ask that closes (answered, at the terminal, left); returns the unsubscribe. */
  onAskClosed(listener: ClosedListener): () => void {
    return this.agents.desk.onClosed(listener);
  }

  /**
   * The session's agent pane exited: an agent that reports by hooks has no connection whose
   * close says so, so this does (a connected pi is told apart by its connection).
   */
  paneExited(sessionId: string): void {
    const agent = this.agents.get(sessionId);
    if (agent?.owner === HOOK_OWNER) this.agents.gone(sessionId, agent);
  }

  /** Whether an agent is connected for the session. */
  connected(sessionId: string): boolean {
    return (this.agents.get(sessionId)?.owner ?? null) !== null;
  }

  /** Takes one new connection: a hook report, or an extension whose messages count once its hello is placed. */
  accept(link: AgentLink): AgentConnection {
    return connectionByFirstMessage({
      hook: (report) => this.hooks.queue(report, link),
      hello: (hello) => acceptExtension(this.agents, this.deps, link, hello),
    });
  }

  /** Applies what the daemon read of a session's agent itself (a file it follows), as a hook report's outcome. */
  report(sessionId: string, agent: HookReport['agent'], outcome: HookOutcome): void {
    this.hooks.take(sessionId, agent, outcome);
  }

  /** Forgets a session that ended (its actor stops; listeners hear nothing more). */
  forget(sessionId: string): void {
    this.agents.forget(sessionId);
  }

  stop(): void {
    for (const id of this.agents.ids()) this.forget(id);
  }
}
