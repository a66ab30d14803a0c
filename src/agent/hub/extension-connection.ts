/**
 * One connection of pi's tether extension, as the hub takes it: its `hello` is placed in a
 * session (pane -> session through tmux), then its events, commands, user messages and
 * conversation file count for that session until it closes.
 *
 * Invariants: a connection reports nothing until its `hello` was placed; messages that arrive
 * while it is being placed are applied after, in order; the most recent agent to register
 * reports for its session, earlier ones are ignored; a hook report on the connection is handed
 * to the hook intake and never makes the connection an owner.
 */
import type { AgentConnection, AgentHubDeps, AgentLink, PaneLocation } from './hub-types.js';
import { MAX_HELLO_MESSAGES, type AgentMessage, type HelloMessage, type HookReport } from '../wire/extension-channel.js';
import { toMachineEvent, type SessionAgents } from './session-agents.js';

/** Asks where a pane lives; a failing tmux becomes a refusal that says so. */
export function locateOrRefuse(deps: Pick<AgentHubDeps, 'locate'>, pane: string, tmuxSocket: string): Promise<PaneLocation> {
  return deps
    .locate(pane, tmuxSocket)
    .catch((err: Error): PaneLocation => ({ refused: `tether could not ask tmux about pane ${pane}: ${err.message}` }));
}

/** Takes one new connection: nothing counts until its hello is placed; hook reports go to `hook`. */
export function acceptConnection(
  agents: SessionAgents,
  deps: AgentHubDeps,
  link: AgentLink,
  hook: (report: HookReport, link: AgentLink) => void,
): AgentConnection {
  const token = {};
  let session: string | null = null;
  let placing = false;
  let closed = false;
  const pending: AgentMessage[] = [];
  const owns = () => session !== null && agents.get(session)?.owner === token;

  const handle = (message: AgentMessage): void => {
    if (!owns()) return;
    const agent = agents.get(session!)!;
    switch (message.type) {
      case 'event':
        agents.send(agent, toMachineEvent(message, deps.now()));
        return;
      case 'commands':
        agent.commands = message.commands;
        return;
      case 'user-message':
        agents.userMessage(session!, agent, message.text);
        return;
      case 'session-file':
        agents.setSessionFile(session!, agent, message.path);
        return;
      case 'stop':
        agents.stopped(session!, agent, message);
        return;
      case 'usage':
        agents.usage(session!, agent, message);
        return;
      case 'hello':
      case 'hook':
        return; // one hello per connection; hook reports are taken on their own
    }
  };

  const place = async (hello: HelloMessage): Promise<void> => {
    const where = await locateOrRefuse(deps, hello.pane, hello.tmuxSocket);
    if (closed) return;
    if ('refused' in where) {
      deps.log.warn({ pane: hello.pane, why: where.refused }, 'an agent was refused');
      link.send({ type: 'refused', message: where.refused });
      link.close();
      return;
    }
    session = where.session;
    const agent = agents.ensure(session);
    agent.owner = token;
    // Messages from an earlier run of this agent count once: keep the larger tally.
    if (hello.userMessageCount > agent.count) {
      agent.count = hello.userMessageCount;
      agent.first = hello.userMessages.slice(0, MAX_HELLO_MESSAGES);
    }
    const tool = hello.tool !== undefined ? { tool: hello.tool } : {};
    agents.send(agent, { type: 'agent.hello', value: hello.state, ...tool, ts: deps.now() });
    const version = deps.version !== undefined ? { version: deps.version } : {};
    link.send({ type: 'welcome', session, url: deps.url(), ...version });
    deps.log.info({ session, pane: hello.pane, agentPid: hello.pid }, 'an agent registered');
    if (hello.sessionFile !== undefined) agents.setSessionFile(session, agent, hello.sessionFile);
    deps.registered?.(session);
    for (const m of pending.splice(0)) handle(m);
    if (agent.count > 0) deps.userMessages?.(session, agent.first, agent.count);
  };

  return {
    message: (message) => {
      if (message.type === 'hook' || message.type === 'hello') {
        // One hello, or one hook report, per connection.
        if (placing || session !== null) return;
        placing = true;
        if (message.type === 'hook') hook(message, link);
        else void place(message);
      } else if (session === null) {
        if (placing) pending.push(message);
      } else handle(message);
    },
    closed: () => {
      closed = true;
      if (owns()) agents.gone(session!, agents.get(session!)!);
    },
  };
}
