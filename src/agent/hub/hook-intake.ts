/**
 * Reports of agents integrated by hook programs or plugins, one report at a time, and of agents
 * read from their files as the daemon follows them, as the hub takes them: each is placed in its
 * session, read by its agent's adapter into a `HookOutcome`, and applied.
 *
 * Invariants: reports of one pane are applied in the order they arrived (each is a connection of
 * its own, and placing one asks tmux); a report never opens a lasting connection: the agent
 * counts as present from its first report until an outcome says it is gone or its pane exits.
 */
import type { HookOutcome } from '../contract/adapter.js';
import type { AskOpening } from '../asks/ask.js';
import type { AgentHubDeps, AgentLink } from './hub-types.js';
import type { HookReport } from '../wire/extension-channel.js';
import { HOOK_OWNER, type SessionAgents } from './session-agents.js';
import { hasControlChar } from '../../protocol/text.js';

/** Whether a reported working directory can be one: absolute, no control character (a NUL, a newline). */
const isReportedDirectory = (cwd: string): boolean => cwd.startsWith('/') && !hasControlChar(cwd);

export class HookIntake {
  private readonly queues = new Map<string, Promise<void>>();

  constructor(
    private readonly agents: SessionAgents,
    private readonly deps: AgentHubDeps,
    /** Where an outcome's ask opens and ends (the hub's `asked` and `askEnded`). */
    private readonly asks: {
      asked(session: string, agentKind: string, opening: AskOpening): unknown;
      ended(session: string, hint: { readonly why: 'terminal' | 'moved-on'; readonly answered?: string }): void;
    },
  ) {}

  /** Applies `report` after the earlier reports of its pane; the link gets `ok` or `refused`. */
  queue(report: HookReport, link: AgentLink): void {
    const key = `${report.tmuxSocket}\0${report.pane}`;
    const run = (this.queues.get(key) ?? Promise.resolve())
      .then(() => this.apply(report, link))
      .catch((err: Error) => this.deps.log.warn({ pane: report.pane, err: err.message }, 'a hook report failed'));
    this.queues.set(key, run);
    void run.finally(() => {
      if (this.queues.get(key) === run) this.queues.delete(key);
    });
  }

  private async apply(report: HookReport, link: AgentLink): Promise<void> {
    const readers = this.deps.readers;
    if (!readers) {
      link.send({ type: 'refused', message: 'this tether daemon does not take hook reports' });
      link.close();
      return;
    }
    const where = await this.deps.locate(report.pane, report.tmuxSocket, report.server);
    if ('refused' in where) {
      this.deps.log.warn({ pane: report.pane, why: where.refused }, 'a hook report was refused');
      link.send({ type: 'refused', message: where.refused });
      link.close();
      return;
    }
    const conversation = this.agents.get(where.session)?.conversation ?? null;
    const outcome = readers.get(report.agent)?.readHook?.(where.session, report.fields, conversation);
    if (outcome === undefined) {
      link.send({ type: 'refused', message: `this tether daemon reads no reports of an agent of kind "${report.agent}"` });
      link.close();
      return;
    }
    this.take(where.session, report.agent, outcome, { pane: report.pane });
    link.send({ type: 'ok' });
    link.close();
  }

  /** Applies what one report of `agent` in `session` means; `about` is logged when it registers. */
  take(session: string, agentKind: HookReport['agent'], outcome: HookOutcome, about: Record<string, string> = {}): void {
    const agent = this.agents.ensure(session);
    const ts = this.deps.now();
    // A directory is taken as reported only when it is one: an absolute path with no control character.
    if (outcome.cwd !== undefined && isReportedDirectory(outcome.cwd)) agent.cwd = outcome.cwd;
    if (outcome.conversation !== undefined && agent.conversation !== outcome.conversation) {
      agent.conversation = outcome.conversation;
      this.deps.conversation?.(session, outcome.conversation);
    }
    if (outcome.gone) {
      if (agent.owner === HOOK_OWNER) this.agents.gone(session, agent);
      return;
    }
    if (agent.owner !== HOOK_OWNER || agent.hookAgent !== agentKind) {
      // The first report of this agent (or the first since the daemon started): it is there, idle until told more.
      agent.owner = HOOK_OWNER;
      agent.hookAgent = agentKind;
      this.agents.send(agent, { type: 'agent.hello', value: 'idle', ts });
      this.deps.log.info({ session, ...about, agent: agentKind }, 'an agent registered');
      this.deps.registered?.(session);
    }
    // What the agent asks in words: said again by each report that moves it; one that only carries
    // figures (usage windows) leaves it.
    if (outcome.events.length > 0 || outcome.asks !== undefined || outcome.ask !== undefined) agent.asks = outcome.asks ?? null;
    // The open ask ended at the terminal or by the agent's own move: said before the events that move the state.
    if (outcome.askEnded !== undefined) this.asks.ended(session, outcome.askEnded);
    for (const event of outcome.events) this.agents.reported(agent, event, ts);
    if (outcome.stop !== undefined) this.agents.stopped(session, agent, outcome.stop);
    if (outcome.ask !== undefined) this.asks.asked(session, agentKind, outcome.ask);
    if (outcome.userMessage !== undefined) this.agents.userMessage(session, agent, outcome.userMessage);
    if (outcome.usage !== undefined) this.agents.usage(session, agent, outcome.usage);
    if (outcome.title !== undefined) this.deps.titled?.(session, outcome.title);
  }
}
