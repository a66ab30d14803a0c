/**
 * The daemon's agent side in one piece, for the composition root: the hub (agent states, asks,
 * commands, user messages), the pane locator, auto-naming, the agent socket, and the daemon-side
 * part of each agent's adapter (reading its hook reports, following its files, reading the
 * notices it writes to its terminal), started from the one adapter list.
 *
 * Invariant: the socket is served only once the daemon's URL is known (an agent is told it on
 * welcome); stopping closes every agent connection, then waits for running naming calls.
 */
import type { InspectionEvent } from 'xstate';
import { DEFAULT_AGENT_NAME } from '../../config/schema.js';
import type { Logger } from '../../log.js';
import type { TmuxCli } from '../../tmux/exec.js';
import { readSessionOptions } from '../../tmux/sessions/sessions.js';
import type { AgentRunner, TerminalNotice } from '../contract/adapter.js';
import { AGENT_ADAPTERS, DEFAULT_ADAPTER } from '../contract/adapters.js';
import { AutoNamer } from './auto-name.js';
import { AgentHub } from './hub.js';
import type { UsageBook } from './usage-book.js';
import { OTHER_KIND, type AgentKindResolved } from '../contract/kinds.js';
import { PaneLocator, type LinkedPanes } from './pane-locator.js';
import { AgentSocketServer } from './socket-server.js';
import type { ExitReport } from '../contract/stops.js';

/** Notices held per session while its agent's kind is not known yet (the newest kept). */
export const EARLY_NOTICES = 16;

export interface AgentServiceDeps {
  readonly cli: TmuxCli;
  readonly socketPath: string;
  /** The agent's argv without tether's extension, for the naming call. */
  readonly namingCommand: readonly string[];
  /** `[agent] naming_model`; "" = auto-naming off. */
  readonly namingModel: string;
  /** Environment of the naming call. */
  readonly env: NodeJS.ProcessEnv;
  readonly now: () => number;
  readonly log: Logger;
  /** XState inspection of each session's agent-state actor (the /ops view). */
  readonly inspect?: (session: string) => (ev: InspectionEvent) => void;
  /** The daemon's tether version, told to each agent on welcome. */
  readonly version?: string;
  /** The kind of the configured agent `name` (`default` for `[agent]`); null when it is not configured. */
  readonly agentKind?: (name: string) => AgentKindResolved | null;
  /** The conversation id the session's record keeps (a thread to follow after a daemon restart). */
  readonly storedConversation?: (session: string) => string | null;
}

/** What a session's agent told of its conversation: the file it writes, or the id it goes by. */
export type ConversationFact = { readonly sessionFile: string } | { readonly conversation: string };

/** Each session's agent state, its stop, its asks and commands, as the other rooms read them. */
export type AgentStates = Pick<
  AgentHub,
  'current' | 'subscribe' | 'subscribeEvery' | 'stopOf' | 'usageOf' | 'asks' | 'openAsk' | 'commands' | 'agentCwd'
>;

/** The desk where an ask's answer is claimed once, as the answer service uses it. */
export type AnswerDesk = Pick<AgentHub, 'claim' | 'release' | 'typed' | 'answered' | 'unconfirmed' | 'onAskClosed'>;

export class AgentService {
  private readonly hub: AgentHub;
  readonly namer: AutoNamer;
  /** The agents' states, for reading (the sessions, push, the stream). */
  readonly states: AgentStates;
  /** The asks' desk, for the answer service. */
  readonly desk: AnswerDesk;
  private readonly registeredListeners = new Set<(session: string) => void>();
  private readonly describedListeners = new Set<(session: string) => void>();
  private readonly conversationListeners = new Set<(session: string, fact: ConversationFact) => void>();
  private readonly userMessageListeners = new Set<(session: string, text: string) => void>();
  /** Each adapter's daemon-side part, by kind. */
  private readonly runners = new Map<string, AgentRunner>();
  /** The kind of each session's agent, as the daemon last looked it up. */
  private readonly kinds = new Map<string, string>();
  /**
   * Notices a session's agent wrote before the daemon knew its kind (an agent may write its first
   * state at start, while `sessionSeen` still asks tmux): handed to its adapter once it is known.
   */
  private readonly early = new Map<string, TerminalNotice[]>();
  private readonly locator: PaneLocator;
  private server: AgentSocketServer | null = null;
  private url = '';

  constructor(private readonly deps: AgentServiceDeps) {
    const log = deps.log.child({ part: 'agents' });
    this.namer = new AutoNamer({
      cli: deps.cli,
      command: deps.namingCommand,
      model: deps.namingModel,
      env: deps.env,
      log,
      described: (session) => this.describedListeners.forEach((l) => l(session)),
    });
    this.locator = new PaneLocator(deps.cli, deps.now);
    this.hub = new AgentHub({
      now: deps.now,
      log,
      locate: (pane, socket, serverPid) => this.locator.locate(pane, socket, serverPid),
      url: () => this.url,
      ...(deps.version !== undefined ? { version: deps.version } : {}),
      registered: (session) => this.registeredListeners.forEach((l) => l(session)),
      userMessages: (session, first, count) => this.namer.consider(session, first, count),
      userMessage: (session, text) => this.userMessageListeners.forEach((l) => l(session, text)),
      titled: (session, title) => this.namer.adopt(session, title),
      ...(deps.inspect ? { inspect: deps.inspect } : {}),
      sessionFile: (session, path) => this.conversationListeners.forEach((l) => l(session, { sessionFile: path })),
      conversation: (session, id) => this.conversationListeners.forEach((l) => l(session, { conversation: id })),
      kindOf: (session) => this.kinds.get(session) ?? DEFAULT_ADAPTER.kind,
      // The extension channel is the default agent's (pi's tether extension).
      extensionKind: DEFAULT_ADAPTER.kind,
      // Each agent's adapter reads its own reports (docs/agents.md "Adding an agent").
      readers: this.runners,
    });
    this.states = this.hub;
    this.desk = this.hub;
    for (const adapter of AGENT_ADAPTERS) {
      const runner = adapter.start?.({
        env: deps.env,
        now: deps.now,
        log,
        report: (session, outcome) => this.hub.report(session, adapter.kind, outcome),
      });
      if (runner) this.runners.set(adapter.kind, runner);
    }
  }

  /**
   * The daemon saw the session (new, or its agent linked again): its agent's adapter is told, with
   * the pane's directory and the conversation it is known by (Codex's rollout file is followed).
   * Asks tmux for the session's agent and the pane's directory; never throws.
   */
  async sessionSeen(session: string): Promise<void> {
    const kindOf = this.deps.agentKind;
    if (!kindOf) return;
    try {
      // As tether keeps it (no process once a listing saw the session), else read from tmux.
      const name = (await readSessionOptions(this.deps.cli, session)).agent ?? DEFAULT_AGENT_NAME;
      const kind = kindOf(name);
      if (kind === null) return void this.early.delete(session);
      this.kinds.set(session, kind);
      const runner = this.runners.get(kind);
      const held = this.early.get(session) ?? [];
      this.early.delete(session);
      for (const notice of held) runner?.notice?.(session, notice);
      if (!runner?.sessionSeen) return;
      const out = await this.deps.cli.run(['display-message', '-p', '-t', `=${session}:`, '#{pane_current_path}']);
      const cwd = out.stdout.toString('utf8').replace(/\n$/, '');
      const thread = this.hub.conversation(session) ?? this.deps.storedConversation?.(session) ?? null;
      runner.sessionSeen(session, cwd.startsWith('/') ? cwd : null, thread);
    } catch (err) {
      this.early.delete(session);
      this.deps.log.debug({ session, err: (err as Error).message }, "a session's agent could not be looked at");
    }
  }

  /** Places the panes that agents report from by what the sessions' control clients know (no tmux process); returns the undo. */
  locateThrough(panes: LinkedPanes): () => void {
    return this.locator.useLinkedPanes(panes);
  }

  /** Calls `listener` when a session got an agent (discovery should look now); returns the undo. */
  onRegistered(listener: (session: string) => void): () => void {
    this.registeredListeners.add(listener);
    return () => this.registeredListeners.delete(listener);
  }

  /** Calls `listener` when a session's description was set automatically (clients get session-meta). */
  onDescribed(listener: (session: string) => void): () => void {
    this.describedListeners.add(listener);
    return () => this.describedListeners.delete(listener);
  }

  /** Calls `listener` when a session's agent told of its conversation (its file or its id). */
  onConversation(listener: (session: string, fact: ConversationFact) => void): () => void {
    this.conversationListeners.add(listener);
    return () => this.conversationListeners.delete(listener);
  }

  /** The usage windows of every session's agent and of each account (docs/api.md "Usage"). */
  get usage(): UsageBook {
    return this.hub.usage;
  }

  /** Calls `listener` with each prompt a session's agent reported the user submitted (its hook, file or event); returns the undo. */
  onUserMessage(listener: (session: string, text: string) => void): () => void {
    this.userMessageListeners.add(listener);
    return () => this.userMessageListeners.delete(listener);
  }

  /**
   * Whether the program of `session` reports the prompts it takes: an agent reports from it, or it
   * runs an agent tether integrates with (true); another program (false, a plain shell); null while
   * the daemon does not know yet (the session not seen, and nothing reported from it).
   */
  reportsPrompts(session: string): boolean | null {
    if (this.hub.current(session) !== null) return true;
    const kind = this.kinds.get(session);
    return kind === undefined ? null : kind !== OTHER_KIND;
  }

  /** The conversation file the agent of `session` last reported, or null. */
  sessionFile(session: string): string | null {
    return this.hub.sessionFile(session);
  }

  /** The conversation id the agent of `session` last reported, or null. */
  conversation(session: string): string | null {
    return this.hub.conversation(session);
  }

  /** The pane of `session` shows its program exited: an agent that reports by hooks has no connection whose close says so. */
  paneExited(session: string): void {
    this.hub.paneExited(session);
  }

  /** The agent of `session` ended (its pane's program): its `exited` stop. */
  exited(session: string, exit: ExitReport): void {
    this.hub.exited(session, exit);
  }

  /** The OSC numbers some adapter reads (the panes hand their strings to `notice`). */
  static noticeNumbers(): ReadonlySet<number> {
    return new Set(AGENT_ADAPTERS.flatMap((a) => a.notices ?? []));
  }

  /**
   * A notice the agent of `session` wrote to its terminal (an OSC string): its adapter reads it,
   * once the session's kind is known (the last EARLY_NOTICES before that are held for it).
   */
  notice(session: string, notice: TerminalNotice): void {
    const kind = this.kinds.get(session);
    if (kind !== undefined) return void this.runners.get(kind)?.notice?.(session, notice);
    if (!this.deps.agentKind) return; // no kind will ever be known
    const held = this.early.get(session) ?? [];
    held.push(notice);
    if (held.length > EARLY_NOTICES) held.shift();
    this.early.set(session, held);
  }

  /** Forgets a session that was deleted. */
  forget(session: string): void {
    for (const runner of this.runners.values()) runner.forget?.(session);
    this.kinds.delete(session);
    this.early.delete(session);
    this.hub.forget(session);
  }

  /** Serves the agent socket; `url` is what agents are told to open. Throws `agent-socket-unusable`. */
  async listen(url: string): Promise<void> {
    this.url = url;
    this.server = await AgentSocketServer.listen(this.deps.socketPath, this.hub, this.deps.log.child({ part: 'agents' }));
  }

  async stop(): Promise<void> {
    await this.server?.close();
    this.server = null;
    for (const runner of this.runners.values()) runner.stop?.();
    this.hub.stop();
    await this.namer.settled();
  }
}
