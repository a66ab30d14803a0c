/**
 * The agents of every session, as the daemon sees them: one agent-state actor per session fed
 * by the extension's reports, the slash commands it reported, and its user messages (for
 * auto-naming). The stream and the REST routes read it through narrow views (`current`,
 * `subscribe`, `commands`).
 *
 * Invariants: a connection reports nothing until its `hello` was placed in a session (pane ->
 * session through tmux); the most recent agent to register reports for its session, earlier
 * ones are ignored; listeners hear a state only when its value or tool changed, and never
 * while no agent is there (`current` is null then).
 */
import { createActor, type Actor, type InspectionEvent } from 'xstate';
import type { Logger } from '../log.js';
import type { AgentStateFact } from '../protocol/frames.js';
import { agentStateMachine, agentStateTool, agentStateValue, type AgentStateEvent } from '../machines/agent-state.machine.js';
import type { HookOutcome } from './adapter.js';
import {
  MAX_HELLO_MESSAGES,
  type AgentMessage,
  type DaemonLine,
  type HelloMessage,
  type HookReport,
  type ReportedCommand,
} from './protocol.js';

/** Where a pane lives: its session, or why it cannot be served (said to the person). */
export type PaneLocation = { readonly session: string } | { readonly refused: string };

export interface AgentHubDeps {
  readonly now: () => number;
  readonly log: Logger;
  /** Finds the tether session of a pane on the daemon's tmux server (and marks it tether's). */
  readonly locate: (pane: string, tmuxSocket: string) => Promise<PaneLocation>;
  /** The URL a person opens (with the local token), told to the agent on welcome. */
  readonly url: () => string;
  /** The daemon's tether version, told to the agent on welcome (its extension may be newer). */
  readonly version?: string;
  /** A session got an agent: discovery should look at tmux now. */
  readonly registered?: (session: string) => void;
  /** The user messages of a session so far (the first few, and the count). */
  readonly userMessages?: (session: string, first: readonly string[], count: number) => void;
  /** XState inspection of a session's agent-state actor (the /ops view). */
  readonly inspect?: (session: string) => (ev: InspectionEvent) => void;
  /** The session's agent reported a new conversation file (the session record keeps it). */
  readonly sessionFile?: (session: string, path: string) => void;
  /** What a hook report of an agent means (its adapter's reading); absent: hook reports are refused. */
  readonly readHook?: (agent: HookReport['agent'], fields: Readonly<Record<string, string>>, conversation: string | null) => HookOutcome;
  /** The session's agent reported its conversation id (the session record keeps it). */
  readonly conversation?: (session: string, id: string) => void;
}

/** One open agent connection, as the socket server hands it over. */
export interface AgentLink {
  send(message: DaemonLine): void;
  close(): void;
}

/** What the socket server calls for one connection. */
export interface AgentConnection {
  message(message: AgentMessage): void;
  closed(): void;
}

interface SessionAgent {
  readonly actor: Actor<typeof agentStateMachine>;
  readonly listeners: Set<(state: AgentStateFact) => void>;
  last: AgentStateFact | null;
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
}

/** The owner of a session whose agent reports by hook programs: no connection stays open for it. */
const HOOK_OWNER = Object.freeze({ hooks: true });

const sameFact = (a: AgentStateFact | null, b: AgentStateFact | null) => a?.value === b?.value && a?.tool === b?.tool;

export class AgentHub {
  private readonly sessions = new Map<string, SessionAgent>();
  private readonly everyListeners = new Set<(sessionId: string, state: AgentStateFact) => void>();

  constructor(private readonly deps: AgentHubDeps) {}

  /** The agent state of a session, or null when no agent reports from it. */
  current(sessionId: string): AgentStateFact | null {
    return this.sessions.get(sessionId)?.last ?? null;
  }

  /** Calls `listener` on each change of the session's agent state; returns the unsubscribe. */
  subscribe(sessionId: string, listener: (state: AgentStateFact) => void): () => void {
    const agent = this.agent(sessionId);
    agent.listeners.add(listener);
    return () => agent.listeners.delete(listener);
  }

  /** Calls `listener` on each change of any session's agent state (push); returns the unsubscribe. */
  subscribeEvery(listener: (sessionId: string, state: AgentStateFact) => void): () => void {
    this.everyListeners.add(listener);
    return () => this.everyListeners.delete(listener);
  }

  /** The slash commands the session's agent reported, or null when none did. */
  commands(sessionId: string): readonly ReportedCommand[] | null {
    return this.sessions.get(sessionId)?.commands ?? null;
  }

  /** The conversation id the session's hook agent last reported (Claude Code, Codex); null when none did. */
  conversation(sessionId: string): string | null {
    return this.sessions.get(sessionId)?.conversation ?? null;
  }

  /** The file the session's agent keeps its conversation in, as it last reported; null when none did. */
  sessionFile(sessionId: string): string | null {
    return this.sessions.get(sessionId)?.sessionFile ?? null;
  }

  private setSessionFile(sessionId: string, agent: SessionAgent, path: string): void {
    if (agent.sessionFile === path) return;
    agent.sessionFile = path;
    this.deps.sessionFile?.(sessionId, path);
  }

  /** The hook agent (`claude`, `codex`) reporting from the session, or null (pi, or none). */
  hookAgent(sessionId: string): HookReport['agent'] | null {
    const agent = this.sessions.get(sessionId);
    return agent?.owner === HOOK_OWNER ? agent.hookAgent : null;
  }

  /** The directory the session's hook agent reported working in, or null. */
  agentCwd(sessionId: string): string | null {
    return this.sessions.get(sessionId)?.cwd ?? null;
  }

  /** What the session's agent asks while it waits (a permission), or null. */
  asks(sessionId: string): string | null {
    const agent = this.sessions.get(sessionId);
    return agent?.last?.value === 'awaiting-input' ? agent.asks : null;
  }

  /**
   * The session's agent pane exited: an agent that reports by hooks has no connection whose
   * close says so, so this does (a connected pi is told apart by its connection).
   */
  paneExited(sessionId: string): void {
    const agent = this.sessions.get(sessionId);
    if (agent?.owner !== HOOK_OWNER) return;
    this.hookGone(sessionId, agent);
  }

  private hookGone(sessionId: string, agent: SessionAgent): void {
    agent.owner = null;
    agent.commands = null;
    this.send(agent, { type: 'agent.gone', ts: this.deps.now() });
    this.deps.log.info({ session: sessionId }, 'an agent went away');
  }

  /** Whether an agent is connected for the session. */
  connected(sessionId: string): boolean {
    return (this.sessions.get(sessionId)?.owner ?? null) !== null;
  }

  /** Takes one new connection: nothing counts until its hello is placed. */
  accept(link: AgentLink): AgentConnection {
    const token = {};
    let session: string | null = null;
    let placing = false;
    let closed = false;
    const pending: AgentMessage[] = [];
    const owns = () => session !== null && this.sessions.get(session)?.owner === token;

    const handle = (message: AgentMessage): void => {
      if (!owns()) return;
      const agent = this.sessions.get(session!)!;
      const ts = this.deps.now();
      switch (message.type) {
        case 'event':
          this.send(agent, toMachineEvent(message, ts));
          return;
        case 'commands':
          agent.commands = message.commands;
          return;
        case 'user-message':
          agent.count++;
          if (agent.first.length < MAX_HELLO_MESSAGES) agent.first.push(message.text);
          this.deps.userMessages?.(session!, agent.first, agent.count);
          return;
        case 'session-file':
          this.setSessionFile(session!, agent, message.path);
          return;
        case 'hello':
        case 'hook':
          return; // one hello per connection; hook reports are taken on their own
      }
    };

    const place = async (hello: HelloMessage): Promise<void> => {
      const where = await this.deps
        .locate(hello.pane, hello.tmuxSocket)
        .catch((err: Error): PaneLocation => ({ refused: `tether could not ask tmux about pane ${hello.pane}: ${err.message}` }));
      if (closed) return;
      if ('refused' in where) {
        this.deps.log.warn({ pane: hello.pane, why: where.refused }, 'an agent was refused');
        link.send({ type: 'refused', message: where.refused });
        link.close();
        return;
      }
      session = where.session;
      const agent = this.agent(session);
      agent.owner = token;
      // Messages from an earlier run of this agent count once: keep the larger tally.
      if (hello.userMessageCount > agent.count) {
        agent.count = hello.userMessageCount;
        agent.first = hello.userMessages.slice(0, MAX_HELLO_MESSAGES);
      }
      this.send(agent, {
        type: 'agent.hello',
        value: hello.state,
        ...(hello.tool !== undefined ? { tool: hello.tool } : {}),
        ts: this.deps.now(),
      });
      link.send({
        type: 'welcome',
        session,
        url: this.deps.url(),
        ...(this.deps.version !== undefined ? { version: this.deps.version } : {}),
      });
      this.deps.log.info({ session, pane: hello.pane, agentPid: hello.pid }, 'an agent registered');
      if (hello.sessionFile !== undefined) this.setSessionFile(session, agent, hello.sessionFile);
      this.deps.registered?.(session);
      for (const m of pending.splice(0)) handle(m);
      if (agent.count > 0) this.deps.userMessages?.(session, agent.first, agent.count);
    };

    return {
      message: (message) => {
        if (message.type === 'hook') {
          // One report per connection; it never makes the connection an owner.
          if (placing || session !== null) return;
          placing = true;
          this.queueHook(message, link);
          return;
        }
        if (message.type === 'hello') {
          if (placing || session !== null) return;
          placing = true;
          void place(message);
        } else if (session === null) {
          if (placing) pending.push(message);
        } else handle(message);
      },
      closed: () => {
        closed = true;
        if (!owns()) return;
        const agent = this.sessions.get(session!)!;
        agent.owner = null;
        agent.commands = null;
        this.send(agent, { type: 'agent.gone', ts: this.deps.now() });
        this.deps.log.info({ session }, 'an agent went away');
      },
    };
  }

  private readonly hookQueues = new Map<string, Promise<void>>();

  /**
   * Hook reports of one pane are applied in the order they arrived: each is a connection of its
   * own, and placing one (asking tmux) takes a while.
   */
  private queueHook(report: HookReport, link: AgentLink): void {
    const key = `${report.tmuxSocket}\0${report.pane}`;
    const run = (this.hookQueues.get(key) ?? Promise.resolve())
      .then(() => this.applyHook(report, link))
      .catch((err: Error) => this.deps.log.warn({ pane: report.pane, err: err.message }, 'a hook report failed'));
    this.hookQueues.set(key, run);
    void run.finally(() => {
      if (this.hookQueues.get(key) === run) this.hookQueues.delete(key);
    });
  }

  private async applyHook(report: HookReport, link: AgentLink): Promise<void> {
    const read = this.deps.readHook;
    if (!read) {
      link.send({ type: 'refused', message: 'this tether daemon does not take hook reports' });
      link.close();
      return;
    }
    const where = await this.deps
      .locate(report.pane, report.tmuxSocket)
      .catch((err: Error): PaneLocation => ({ refused: `tether could not ask tmux about pane ${report.pane}: ${err.message}` }));
    if ('refused' in where) {
      this.deps.log.warn({ pane: report.pane, why: where.refused }, 'a hook report was refused');
      link.send({ type: 'refused', message: where.refused });
      link.close();
      return;
    }
    const conversation = this.sessions.get(where.session)?.conversation ?? null;
    this.takeOutcome(where.session, report, read(report.agent, report.fields, conversation));
    link.send({ type: 'ok' });
    link.close();
  }

  private takeOutcome(session: string, report: HookReport, outcome: HookOutcome): void {
    const agent = this.agent(session);
    const ts = this.deps.now();
    if (outcome.cwd !== undefined) agent.cwd = outcome.cwd;
    if (outcome.conversation !== undefined && agent.conversation !== outcome.conversation) {
      agent.conversation = outcome.conversation;
      this.deps.conversation?.(session, outcome.conversation);
    }
    if (outcome.gone) {
      if (agent.owner === HOOK_OWNER) this.hookGone(session, agent);
      return;
    }
    if (agent.owner !== HOOK_OWNER || agent.hookAgent !== report.agent) {
      // The first report of this agent (or the first since the daemon started): it is there, idle until told more.
      agent.owner = HOOK_OWNER;
      agent.hookAgent = report.agent;
      this.send(agent, { type: 'agent.hello', value: 'idle', ts });
      this.deps.log.info({ session, pane: report.pane, agent: report.agent }, 'an agent registered');
      this.deps.registered?.(session);
    }
    agent.asks = outcome.asks ?? null;
    for (const event of outcome.events) this.send(agent, toMachineEvent(event, ts));
    if (outcome.userMessage !== undefined) {
      agent.count++;
      if (agent.first.length < MAX_HELLO_MESSAGES) agent.first.push(outcome.userMessage);
      this.deps.userMessages?.(session, agent.first, agent.count);
    }
  }

  /** Forgets a session that ended (its actor stops; listeners hear nothing more). */
  forget(sessionId: string): void {
    const agent = this.sessions.get(sessionId);
    if (!agent) return;
    agent.actor.stop();
    this.sessions.delete(sessionId);
  }

  stop(): void {
    for (const id of [...this.sessions.keys()]) this.forget(id);
  }

  private agent(sessionId: string): SessionAgent {
    let agent = this.sessions.get(sessionId);
    if (agent) return agent;
    const actor = createActor(agentStateMachine, this.deps.inspect ? { id: 'agent', inspect: this.deps.inspect(sessionId) } : {});
    const created: SessionAgent = {
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
    };
    agent = created;
    actor.subscribe((snap) => {
      const value = agentStateValue(snap);
      const tool = value === 'tool' ? agentStateTool(snap.context) : undefined;
      const fact: AgentStateFact | null = value ? { value, ...(tool !== undefined ? { tool } : {}), ts: snap.context.ts } : null;
      if (sameFact(fact, created.last)) return;
      created.last = fact;
      if (!fact) return;
      for (const l of [...created.listeners, ...[...this.everyListeners].map((e) => (f: AgentStateFact) => e(sessionId, f))]) {
        try {
          l(fact);
        } catch (err) {
          this.deps.log.warn({ session: sessionId, err: String(err) }, 'an agent-state listener failed');
        }
      }
    });
    actor.start();
    this.sessions.set(sessionId, agent);
    return agent;
  }

  private send(agent: SessionAgent, event: AgentStateEvent): void {
    agent.actor.send(event);
  }
}

/** An extension event as the machine's event. */
function toMachineEvent(message: Extract<AgentMessage, { type: 'event' }>, ts: number): AgentStateEvent {
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
