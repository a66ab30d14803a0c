/**
 * The agent of each session as the hub keeps it: one agent-state actor per session, who owns its
 * reports (a plugin's connection, or hook programs), what it reported (commands, user messages,
 * its conversation file or id, its directory), its asks (the desk, src/agent/asks/asks.ts) and the
 * listeners of its state, and why it stopped (the machine holds the stop's id and kind, the
 * agent its record: src/agent/contract/stops.ts).
 *
 * Invariants: listeners hear a state only when its value, tool, ask or stop changed, and never while
 * no agent is there; a failing listener is logged and the others still hear it; an ask is open
 * on the desk exactly while the session's machine holds it.
 */
import { createActor, type Actor } from 'xstate';
import { agentStateMachine, agentStateTool, agentStateValue, type AgentStateEvent } from '../../machines/agent-state.machine.js';
import type { AgentStateFact } from '../../protocol/frames.js';
import type { Stop } from '../../protocol/stop.js';
import type { AskOpening } from '../asks/ask.js';
import { AskDesk, type AskRecord } from '../asks/asks.js';
import type { AgentHubDeps } from './hub-types.js';
import { MAX_HELLO_MESSAGES, type EventMessage, type HookReport, type ReportedCommand } from '../wire/extension-channel.js';
import { doneStop, exitStop, sameStop, stopOf, type ExitReport, type StopReport } from '../contract/stops.js';
import type { UsageReport } from '../contract/usage.js';
import type { UsageBook } from './usage-book.js';

/** One session's agent. */
export interface SessionAgent {
  /** The session's id. */
  readonly id: string;
  readonly actor: Actor<typeof agentStateMachine>;
  readonly listeners: Set<(state: AgentStateFact) => void>;
  last: AgentStateFact | null;
  /** Who reports for the session: a pi connection's token, `HOOK_OWNER`, or null (no agent). */
  owner: object | null;
  commands: readonly ReportedCommand[] | null;
  first: string[];
  count: number;
  /** The conversation file the agent last reported. */
  sessionFile: string | null;
  /** Hook agents: which one, its conversation id, its directory, and what it asks while it waits. */
  hookAgent: HookReport['agent'] | null;
  conversation: string | null;
  cwd: string | null;
  asks: string | null;
  /** The id of the ask the machine holds, as last seen. */
  askId: string | null;
  /** The record of the stop the machine last held (or is about to hold). */
  stop: Stop | null;
}

/** What the session agents keep of the usage windows (the book, src/agent/hub/usage-book.ts). */
export type UsageKeeper = Pick<UsageBook, 'apply' | 'of' | 'forget'>;

/** The owner of a session whose agent reports by hook programs: no connection stays open for it. */
export const HOOK_OWNER = Object.freeze({ hooks: true });

const sameFact = (a: AgentStateFact | null, b: AgentStateFact | null) =>
  a?.value === b?.value && a?.tool === b?.tool && a?.ask?.id === b?.ask?.id && a?.stop?.id === b?.stop?.id && a?.usage === b?.usage;

export class SessionAgents {
  private readonly sessions = new Map<string, SessionAgent>();
  readonly everyListeners = new Set<(sessionId: string, state: AgentStateFact) => void>();
  /** Every session's asks, and who answered them. */
  readonly desk: AskDesk;

  constructor(
    private readonly deps: Pick<
      AgentHubDeps,
      'now' | 'log' | 'inspect' | 'sessionFile' | 'userMessages' | 'userMessage' | 'kindOf' | 'extensionKind'
    >,
    /** The usage windows of every session's agent. */
    private readonly usageBook: UsageKeeper,
  ) {
    this.desk = new AskDesk(deps.now);
  }

  /** The session's agent, or undefined when nothing was ever known of it. */
  get(sessionId: string): SessionAgent | undefined {
    return this.sessions.get(sessionId);
  }

  /** The session's agent, made (with its actor started) on first use. */
  ensure(sessionId: string): SessionAgent {
    const known = this.sessions.get(sessionId);
    if (known) return known;
    const inspect = this.deps.inspect;
    const actor = createActor(agentStateMachine, inspect ? { id: 'agent', inspect: inspect(sessionId) } : {});
    const agent: SessionAgent = {
      id: sessionId,
      actor,
      listeners: new Set(),
      last: null,
      owner: null,
      commands: null,
      first: [],
      count: 0,
      sessionFile: null,
      hookAgent: null,
      conversation: null,
      cwd: null,
      asks: null,
      askId: null,
      stop: null,
    };
    actor.subscribe((snap) => {
      const value = agentStateValue(snap);
      const held = snap.context.ask?.id ?? null;
      if (agent.askId !== null && agent.askId !== held) this.desk.ended(sessionId, agent.askId, value === null);
      agent.askId = held;
      const tool = value === 'tool' ? agentStateTool(snap.context) : undefined;
      const record = held !== null ? this.desk.current(sessionId) : null;
      const ask = record !== null && record.open.ask.id === held ? { ask: record.open.ask } : {};
      const stop = snap.context.stop !== null && agent.stop?.id === snap.context.stop.id ? { stop: agent.stop } : {};
      const usage = this.usageBook.of(sessionId);
      const fact: AgentStateFact | null = value
        ? { value, ...(tool !== undefined ? { tool } : {}), ts: snap.context.ts, ...ask, ...stop, ...(usage ? { usage } : {}) }
        : null;
      if (sameFact(fact, agent.last)) return;
      agent.last = fact;
      if (fact) this.tell(sessionId, agent, fact);
    });
    actor.start();
    this.sessions.set(sessionId, agent);
    return agent;
  }

  private tell(sessionId: string, agent: SessionAgent, fact: AgentStateFact): void {
    const every = [...this.everyListeners].map((e) => (f: AgentStateFact) => e(sessionId, f));
    for (const l of [...agent.listeners, ...every]) {
      try {
        l(fact);
      } catch (err) {
        this.deps.log.warn({ session: sessionId, err: String(err) }, 'an agent-state listener failed');
      }
    }
  }

  /** Sends `event` to the session's machine, as it is. */
  send(agent: SessionAgent, event: AgentStateEvent): void {
    agent.actor.send(event);
  }

  /**
   * An event the agent reported (its extension's, or a hook report's): a turn that ended idle is
   * the agent's `done` stop (`turnEnded`); any other goes to the machine as it is.
   */
  reported(agent: SessionAgent, message: EventMessage, ts: number): void {
    const event = toMachineEvent(message, ts);
    if (event.type === 'agent.end' && event.idle) this.turnEnded(agent, event);
    else this.send(agent, event);
  }

  /** The agent's turn ended and it waits for its human: its `done` stop, held once the machine takes the end. */
  private turnEnded(agent: SessionAgent, end: Extract<AgentStateEvent, { type: 'agent.end' }>): void {
    this.sendStop(agent, doneStop(this.kindOf(agent), end.ts), end);
  }

  /**
   * Sends an event that makes `stop` the held one: its record is kept only when the machine takes
   * the event (before it does: its listeners read the record), so the record and the machine's
   * stop never part.
   */
  private sendStop(agent: SessionAgent, stop: Stop, event: AgentStateEvent): void {
    const withId: AgentStateEvent = event.type === 'agent.end' ? { ...event, stop: stop.id } : event;
    if (agent.actor.getSnapshot().can(withId)) agent.stop = stop;
    agent.actor.send(withId);
  }

  /** The stop the session's machine holds, or null. */
  stopOf(sessionId: string): Stop | null {
    const agent = this.sessions.get(sessionId);
    return agent && this.heldStop(agent) ? agent.stop : null;
  }

  /** The agent stopped on a usage limit or an API error (`report`); a second report of the stop it holds changes nothing. */
  stopped(sessionId: string, agent: SessionAgent, report: StopReport): void {
    if (sameStop(this.stopOf(sessionId), report)) return;
    const stop = stopOf(this.kindOf(agent), report, this.deps.now());
    this.sendStop(agent, stop, { type: 'agent.stop', id: stop.id, kind: report.kind, ts: this.deps.now() });
  }

  /** The session's agent process ended (`exit`, as tmux tells it). */
  exited(sessionId: string, exit: ExitReport): void {
    const agent = this.ensure(sessionId);
    const stop = exitStop(this.kindOf(agent), exit, this.deps.now());
    this.sendStop(agent, stop, { type: 'agent.stop', id: stop.id, kind: 'exited', ts: this.deps.now() });
  }

  private heldStop(agent: SessionAgent): boolean {
    const held = agent.actor.getSnapshot().context.stop;
    return held !== null && agent.stop !== null && held.id === agent.stop.id;
  }

  /** The kind of the session's agent, for its stops and usage: the hook agent reporting, the extension's, else what the daemon knows. */
  private kindOf(agent: SessionAgent): string {
    const viaExtension = agent.owner !== null && agent.owner !== HOOK_OWNER ? this.deps.extensionKind : undefined;
    return agent.hookAgent ?? viaExtension ?? this.deps.kindOf?.(agent.id) ?? 'agent';
  }

  /** The agent stopped reporting (its connection closed, its session ended, its pane exited). */
  gone(sessionId: string, agent: SessionAgent): void {
    agent.owner = null;
    agent.commands = null;
    this.send(agent, { type: 'agent.gone', ts: this.deps.now() });
    this.deps.log.info({ session: sessionId }, 'an agent went away');
  }

  /** One more user message of the session (for auto-naming). */
  userMessage(sessionId: string, agent: SessionAgent, text: string): void {
    agent.count++;
    if (agent.first.length < MAX_HELLO_MESSAGES) agent.first.push(text);
    this.deps.userMessages?.(sessionId, agent.first, agent.count);
    this.deps.userMessage?.(sessionId, text);
  }

  /** The agent reported its account's usage windows: kept checked; a change is told with the state it is in. */
  usage(sessionId: string, agent: SessionAgent, report: UsageReport): void {
    const usage = this.usageBook.apply(sessionId, this.kindOf(agent), report);
    if (usage === null || agent.last === null) return;
    agent.last = { ...agent.last, usage };
    this.tell(sessionId, agent, agent.last);
  }

  setSessionFile(sessionId: string, agent: SessionAgent, path: string): void {
    if (agent.sessionFile === path) return;
    agent.sessionFile = path;
    this.deps.sessionFile?.(sessionId, path);
  }

  /** The agent asks `opening` and waits: the desk opens the ask, the machine holds it. Null when it offers no valid choice. */
  openAsk(sessionId: string, agent: SessionAgent, agentKind: string, opening: AskOpening): AskRecord | null {
    const record = this.desk.opened(sessionId, agentKind, opening);
    if (record === null) return null;
    const { id, tool } = record.open.ask;
    this.send(agent, { type: 'ask.open', id, ...(tool !== undefined ? { tool } : {}), ts: this.deps.now() });
    // A machine that did not take it (no agent reports) holds no ask: it is over at once.
    if (agent.actor.getSnapshot().context.ask?.id !== id) this.desk.ended(sessionId, id, true);
    return record;
  }

  /** Forgets a session that ended (its actor stops; listeners hear nothing more). */
  forget(sessionId: string): void {
    const agent = this.sessions.get(sessionId);
    if (!agent) return;
    agent.actor.stop();
    this.sessions.delete(sessionId);
    this.desk.forget(sessionId);
    this.usageBook.forget(sessionId);
  }

  ids(): string[] {
    return [...this.sessions.keys()];
  }
}

/** An agent's event (as the protocol writes it) as the machine's event. */
function toMachineEvent(message: EventMessage, ts: number): AgentStateEvent {
  switch (message.event) {
    case 'tool.start':
      return { type: 'tool.start', id: message.id ?? '', tool: message.tool ?? 'tool', ts };
    case 'tool.end':
      return { type: 'tool.end', id: message.id ?? '', ts };
    case 'agent.end':
      return { type: 'agent.end', idle: message.idle === true, ts };
    default:
      return { type: message.event, ts };
  }
}
