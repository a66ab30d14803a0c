/**
 * The daemon's agent side in one piece, for the composition root: the hub (agent states,
 * commands, user messages), the pane locator, auto-naming, the agent socket, and each hook
 * agent's adapter reading its reports.
 *
 * Invariant: the socket is served only once the daemon's URL is known (an agent is told it on
 * welcome); stopping closes every agent connection, then waits for running naming calls.
 */
import type { InspectionEvent } from 'xstate';
import type { Logger } from '../log.js';
import type { TmuxCli } from '../tmux/exec.js';
import { AutoNamer } from './auto-name.js';
import { readClaudeHook } from './claude/events.js';
import { readCodexNotify } from './codex/events.js';
import { AgentHub } from './hub.js';
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
}

export class AgentService {
  readonly hub: AgentHub;
  readonly namer: AutoNamer;
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
      readHook: (agent, fields, conversation) => (agent === 'claude' ? readClaudeHook(fields) : readCodexNotify(fields, conversation)),
    });
  }

  /** Serves the agent socket; `url` is what agents are told to open. Throws `agent-socket-unusable`. */
  async listen(url: string): Promise<void> {
    this.url = url;
    this.server = await AgentSocketServer.listen(this.deps.socketPath, this.hub, this.deps.log.child({ part: 'agents' }));
  }

  async stop(): Promise<void> {
    await this.server?.close();
    this.server = null;
    this.hub.stop();
    await this.namer.settled();
  }
}
