/**
 * One agent connection, as the hub takes it. Its first message says what it is: a hook report
 * (one per connection, handed to the hook intake; it never makes the connection an owner), or
 * the `hello` of an extension (pi's tether extension), which is placed in a session (pane ->
 * session) and whose events, commands, user messages and conversation file then count for that
 * session until it closes.
 *
 * Invariants: a connection reports nothing until its `hello` was placed; messages that arrive
 * while it is being placed are applied after, in order; the most recent agent to register
 * reports for its session, earlier ones are ignored; a second hello or a hook report after the
 * first message changes nothing.
 */
import type { AgentConnection, AgentHubDeps, AgentLink } from './hub-types.js';
import { MAX_HELLO_MESSAGES, type AgentMessage, type HelloMessage, type HookReport } from '../wire/extension-channel.js';
import type { SessionAgents } from './session-agents.js';

/** A connection by its first message: a hook report goes to `hook`; a hello opens the connection `hello` makes; anything before either is dropped. */
export function connectionByFirstMessage(opening: {
  hook(report: HookReport): void;
  hello(hello: HelloMessage): AgentConnection;
}): AgentConnection {
  let opened: AgentConnection | null = null;
  let reported = false;
  return {
    message: (message) => {
      if (opened !== null) opened.message(message);
      else if (reported) return;
      else if (message.type === 'hello') opened = opening.hello(message);
      else if (message.type === 'hook') {
        reported = true;
        opening.hook(message);
      }
    },
    closed: () => opened?.closed(),
  };
}

/** Places the extension's `hello`, then takes its messages for its session. */
export function acceptExtension(agents: SessionAgents, deps: AgentHubDeps, link: AgentLink, hello: HelloMessage): AgentConnection {
  const token = {};
  let session: string | null = null;
  let closed = false;
  const pending: AgentMessage[] = [];
  const owns = () => session !== null && agents.get(session)?.owner === token;

  const handle = (message: AgentMessage): void => {
    if (!owns()) return;
    const agent = agents.get(session!)!;
    switch (message.type) {
      case 'event':
        agents.reported(agent, message, deps.now());
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
        return; // one hello per connection, and a hook report only as the first message of one
    }
  };

  const place = async (hello: HelloMessage): Promise<void> => {
    const where = await deps.locate(hello.pane, hello.tmuxSocket);
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

  void place(hello);
  return {
    message: (message) => {
      if (session === null) pending.push(message);
      else handle(message);
    },
    closed: () => {
      closed = true;
      if (owns()) agents.gone(session!, agents.get(session!)!);
    },
  };
}
