/**
 * The daemon's agent side in one piece, for the composition root: the hub (agent states,
 * commands, user messages), the pane locator, auto-naming, the agent socket, and each hook
 * agent's adapter reading its reports.
 *
 * Invariant: the socket is served only once the daemon's URL is known (an agent is told it on
 * welcome); stopping closes every agent connection, then waits for running naming calls.
 */
import type { InspectionEvent } from 'xstate';
import { DEFAULT_AGENT_NAME } from '../config/schema.js';
import type { Logger } from '../log.js';
import type { TmuxCli } from '../tmux/exec.js';
import { AGENT_OPTION, readUserOption } from '../tmux/sessions.js';
import type { HookOutcome } from './adapter.js';
import { AutoNamer } from './auto-name.js';
import { readClaudeHook } from './claude/events.js';
import { readCodexNotify } from './codex/events.js';
import { codexSessionsDir } from './codex/rollout.js';
import { CodexRolloutWatch } from './codex/rollout-watch.js';
import { AgentHub } from './hub.js';
import type { AgentKindResolved } from './kinds.js';
import { locatePane } from './pane-locator.js';
import { AgentSocketServer } from './socket-server.js';

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
  /** A session got an agent (discovery should look now). */
  readonly registered: (session: string) => void;
  /** A session's description was set automatically (clients get session-meta). */
  readonly described: (session: string) => void;
  /** XState inspection of each session's agent-state actor (the /ops view). */
  readonly inspect?: (session: string) => (ev: InspectionEvent) => void;
  /** A session's agent reported a new conversation file. */
  readonly sessionFile?: (session: string, path: string) => void;
  /** A session's agent (Claude Code, Codex) reported its conversation id. */
  readonly conversation?: (session: string, id: string) => void;
  /** The daemon's tether version, told to each agent on welcome. */
  readonly version?: string;
  /** The kind of the configured agent `name` (`default` for `[agent]`); null when it is not configured. */
  readonly agentKind?: (name: string) => AgentKindResolved | null;
  /** The conversation id the session's record keeps (a Codex thread to follow after a daemon restart). */
  readonly storedConversation?: (session: string) => string | null;
}

export class AgentService {
  readonly hub: AgentHub;
  readonly namer: AutoNamer;
  /** Codex sessions' rollout files, followed for their turns (src/agent/codex/rollout-watch.ts). */
  readonly rollouts: CodexRolloutWatch;
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
      described: deps.described,
    });
    this.rollouts = new CodexRolloutWatch({
      sessionsDir: codexSessionsDir(deps.env),
      now: deps.now,
      log,
      report: (session, outcome) => this.hub.report(session, 'codex', outcome),
    });
    this.hub = new AgentHub({
      now: deps.now,
      log,
      locate: (pane, socket) => locatePane(deps.cli, pane, socket, deps.now),
      url: () => this.url,
      ...(deps.version !== undefined ? { version: deps.version } : {}),
      registered: deps.registered,
      userMessages: (session, first, count) => this.namer.consider(session, first, count),
      ...(deps.inspect ? { inspect: deps.inspect } : {}),
      ...(deps.sessionFile ? { sessionFile: deps.sessionFile } : {}),
      ...(deps.conversation ? { conversation: deps.conversation } : {}),
      // Each hook agent's adapter reads its reports (docs/agents.md "Adding an agent").
      readHook: (agent, fields, conversation, session) =>
        agent === 'claude' ? readClaudeHook(fields) : this.readCodex(session, fields, conversation),
    });
  }

  /**
   * A Codex notify: the turn's end, unless the session's rollout file is followed, whose own
   * record of the end is then read at once (a notify may come before the records of its turn).
   */
  private readCodex(session: string, fields: Readonly<Record<string, string>>, conversation: string | null): HookOutcome {
    const outcome = readCodexNotify(fields, conversation);
    if (outcome.conversation !== undefined && this.rollouts.notified(session, outcome.conversation)) return { ...outcome, events: [] };
    return outcome;
  }

  /**
   * The daemon saw the session (new, or its agent linked again): when it runs Codex, its rollout
   * file is followed. Asks tmux for the session's agent and the pane's directory; never throws.
   */
  async sessionSeen(session: string): Promise<void> {
    const kindOf = this.deps.agentKind;
    if (!kindOf) return;
    try {
      const name = (await readUserOption(this.deps.cli, session, AGENT_OPTION)) ?? DEFAULT_AGENT_NAME;
      if (kindOf(name) !== 'codex') return;
      const out = await this.deps.cli.run(['display-message', '-p', '-t', `=${session}:`, '#{pane_current_path}']);
      const cwd = out.stdout.toString('utf8').replace(/\n$/, '');
      const thread = this.hub.conversation(session) ?? this.deps.storedConversation?.(session) ?? null;
      this.rollouts.watch(session, cwd.startsWith('/') ? cwd : null, thread);
    } catch (err) {
      this.deps.log.debug({ session, err: (err as Error).message }, 'a session could not be looked at for its Codex');
    }
  }

  /** Forgets a session that was deleted. */
  forget(session: string): void {
    this.rollouts.forget(session);
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
    this.rollouts.stop();
    this.hub.stop();
    await this.namer.settled();
  }
}
