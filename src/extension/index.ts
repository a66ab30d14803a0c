/**
 * The tether extension for pi: `pi -e <this file> --tether`. It reports what the agent does to
 * the tether daemon over the agent socket (events, slash commands, user messages, the usage
 * windows in its model API's answers), so phones see the agent's state, commands and account
 * limits and sessions get named. Started by a person inside their own tmux it makes that
 * session a tether session, starts the daemon when none runs and shows the URL; outside tmux it
 * says how to get there. A daemon of another tether version (started before an upgrade) is
 * pointed out once, with the fix: `tether restart`.
 *
 * Invariants: without `--tether` it does nothing; nothing it does can block or crash pi (every
 * handler is guarded, all I/O is asynchronous and unref'd); the extension instance of a
 * session (pi runs the factory again on /new and /reload) owns one connection, closed on
 * `session_shutdown`.
 */
import { createActor } from 'xstate';
import {
  AGENT_PROTOCOL_VERSION,
  AGENT_SOCKET_ENV,
  MAX_AGENT_COMMANDS,
  MAX_COMMAND_DESCRIPTION_CHARS,
  MAX_COMMAND_NAME_CHARS,
  MAX_HELLO_MESSAGES,
  MAX_USER_MESSAGE_CHARS,
  commandArgsJson,
  type EventMessage,
  type ReportedCommand,
} from '../agent/wire/extension-channel.js';
import { agentSocketPath } from '../agent/wire/socket-path.js';
import { resolvePaths } from '../config/paths.js';
import { packageVersion } from '../config/version.js';
import { agentStateMachine, agentStateTool, agentStateValue, type AgentStateEvent } from '../machines/agent-state.machine.js';
import { DaemonLink } from './daemon-link.js';
import { markSession, startDaemon, tmuxPlace } from './daemon-start.js';
import { agentPackageOf, hasSettledEvent, type PiApi, type PiContext, type PiEvent, type PiProviderResponseEvent } from './pi-api.js';
import { endingError, SettleWatcher } from './settle.js';
import { usageMessageOf } from './usage.js';

export const FLAG = 'tether';

/** A field that should be a string, or "" (pi's event shapes differ across versions). */
function textOf(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

/** The text of a user message's content (a string, or text parts). */
function messageText(message: unknown): string {
  const content = (message as { content?: unknown } | null)?.content;
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((p: unknown) =>
      p && typeof p === 'object' && (p as { type?: unknown }).type === 'text' ? textOf((p as { text?: unknown }).text) : '',
    )
    .join('');
}

/** pi's command list, within the protocol's limits. */
function reportedCommands(pi: PiApi): ReportedCommand[] {
  const list = pi.getCommands?.() ?? [];
  return list
    .filter((c) => typeof c.name === 'string' && c.name !== '' && !/\s/.test(c.name) && c.name.length <= MAX_COMMAND_NAME_CHARS)
    .slice(0, MAX_AGENT_COMMANDS)
    .map((c) => {
      const command = {
        name: c.name,
        description: (c.description ?? '').slice(0, MAX_COMMAND_DESCRIPTION_CHARS),
        source: String(c.source).slice(0, 64),
      };
      // An argument schema goes along when it is JSON within the limit; one that is not is left out.
      const args = c.args === undefined || c.args === null ? null : commandArgsJson(c.args);
      return args === null ? command : { ...command, args: JSON.parse(args) as unknown };
    });
}

export default function tetherExtension(pi: PiApi): void {
  pi.registerFlag(FLAG, { description: 'Mirror this session to your phone with tether (put it last)', type: 'boolean', default: false });
  const env = process.env;
  const local = createActor(agentStateMachine).start();
  local.send({ type: 'agent.hello', value: 'idle', ts: 0 });
  const first: string[] = [];
  let count = 0;
  let link: DaemonLink | null = null;
  let ui: PiContext['ui'] | null = null;
  let commandsJson = '';
  let welcomed = false;
  let toldVersion = false;
  const told = new Set<string>();

  const notify = (text: string, type: 'info' | 'warning' | 'error' = 'info'): void => {
    try {
      ui?.notify(text, type);
    } catch {
      // A stale UI after a reload: nothing to tell it.
    }
  };
  const report = (message: EventMessage): void => {
    const ts = 0;
    const event: AgentStateEvent =
      message.event === 'tool.start'
        ? { type: 'tool.start', id: message.id ?? '', tool: message.tool ?? 'tool', ts }
        : message.event === 'tool.end'
          ? { type: 'tool.end', id: message.id ?? '', ts }
          : message.event === 'agent.end'
            ? { type: 'agent.end', idle: message.idle === true, ts }
            : { type: message.event, ts };
    local.send(event);
    link?.send(message);
  };
  const sendCommands = (): void => {
    const commands = reportedCommands(pi);
    const json = JSON.stringify(commands);
    if (json === commandsJson) return;
    commandsJson = json;
    link?.send({ type: 'commands', commands });
  };
  const piPackage = agentPackageOf(process.argv[1]);
  /** The error pi's last turn ended on (it gave up on its model API), until the turn's verdict. */
  let endError: string | null = null;
  /** The daemon reads stops (one of this version; an older one would refuse the line). */
  let takesStops = false;
  const settle = new SettleWatcher({
    settledEvent: piPackage !== null && hasSettledEvent(piPackage.version),
    verdict: (idle) => {
      const error = idle && takesStops ? endError : null;
      endError = null;
      if (error === null) return report({ type: 'event', event: 'agent.end', idle });
      // pi gave up on its model API: the stop says why instead of a finished turn (docs/agents.md "Stops").
      local.send({ type: 'agent.end', idle: true, ts: 0 });
      link?.send({ type: 'stop', kind: 'error', message: error });
    },
  });

  /** The file pi keeps the current conversation in, as last seen at a session start. */
  let sessionFile: string | undefined;

  const begin = (ctx: PiContext): void => {
    const place = tmuxPlace(env);
    if (!place) {
      notify('tether needs tmux: run "tether attach" to start pi in a tether session, or start pi --tether inside tmux', 'warning');
      return;
    }
    const socketPath = env[AGENT_SOCKET_ENV] || agentSocketPath(resolvePaths(env).runDir);
    const startedByTether = Boolean(env[AGENT_SOCKET_ENV]);
    const current = (link = new DaemonLink({
      path: socketPath,
      hello: () => {
        const snap = local.getSnapshot();
        const tool = agentStateTool(snap.context);
        const value = agentStateValue(snap) ?? 'idle';
        return {
          type: 'hello',
          v: AGENT_PROTOCOL_VERSION,
          pane: place.pane,
          tmuxSocket: place.socket,
          pid: process.pid,
          state: value,
          ...(value === 'tool' && tool !== undefined ? { tool } : {}),
          userMessages: first,
          userMessageCount: count,
          ...(sessionFile !== undefined ? { sessionFile } : {}),
        };
      },
      onMessage: (message) => {
        if (message.type === 'refused') {
          if (!told.has(message.message)) notify(`tether: ${message.message}`, 'warning');
          told.add(message.message);
          return;
        }
        if (!welcomed && !startedByTether) notify(`tether: session ${message.session} is on your phone at ${message.url}`);
        welcomed = true;
        // A daemon of another version (started before an upgrade) keeps serving until restarted.
        const mine = packageVersion();
        takesStops = message.version === mine;
        if (message.version !== mine && !toldVersion) {
          toldVersion = true;
          notify(
            `tether: the running daemon is ${message.version === undefined ? 'an older tether' : `tether ${message.version}`}, this pi extension is tether ${mine}: run "tether restart" to serve with ${mine}`,
            'warning',
          );
        }
      },
      onNoDaemon: () => {
        // A pi that tether started belongs to that daemon, which may be restarting: starting
        // another from here would race it (and outlive the data dir it was started for).
        if (startedByTether) return;
        markSession(place.pane)
          .then(() =>
            startDaemon({
              runDir: resolvePaths(env).runDir,
              cwd: ctx.cwd,
              env,
              isUp: () => current.isConnected || welcomed,
              onFailed: (why) => notify(`tether could not start its daemon: ${why}`, 'error'),
            }),
          )
          .catch((err: Error) => notify(`tether: ${err.message}`, 'error'));
      },
    }));
    current.start();
    commandsJson = '';
    sendCommands();
  };

  /** Runs a handler so that nothing in it can reach pi. */
  const guarded =
    (fn: (event: PiEvent, ctx: PiContext) => void) =>
    (event: PiEvent, ctx: PiContext): void => {
      try {
        fn(event, ctx);
      } catch {
        // Reporting is best effort; pi must go on whatever happens here.
      }
    };
  const on = (name: string, fn: (event: PiEvent, ctx: PiContext) => void): void => {
    pi.on(
      name,
      guarded((event, ctx) => (link || name === 'session_start' ? fn(event, ctx) : undefined)),
    );
  };

  on('session_start', (_event, ctx) => {
    ui = ctx.ui;
    const enabled = pi.getFlag(FLAG);
    if (enabled !== true && enabled !== 'true') return;
    // The conversation's file: tether reopens it if the session has to be restored.
    const file = ctx.sessionManager?.getSessionFile?.();
    const changed = file !== undefined && file !== sessionFile;
    if (file !== undefined) sessionFile = file;
    if (!link) begin(ctx);
    else {
      report({ type: 'event', event: 'agent.ready' });
      sendCommands();
      if (changed) link.send({ type: 'session-file', path: file });
    }
  });
  on('agent_start', () => {
    settle.agentStart();
    report({ type: 'event', event: 'agent.start' });
  });
  on('tool_execution_start', (e) =>
    report({ type: 'event', event: 'tool.start', id: textOf(e.toolCallId), tool: (textOf(e.toolName) || 'tool').slice(0, 128) }),
  );
  on('tool_execution_end', (e) => report({ type: 'event', event: 'tool.end', id: textOf(e.toolCallId) }));
  on('agent_end', (e, ctx) => {
    endError = endingError(e.messages);
    settle.agentEnd(e.messages, ctx);
    sendCommands();
  });
  on('agent_settled', () => settle.agentSettled());
  on('session_tree', () => report({ type: 'event', event: 'session.tree' }));
  on('session_compact', () => report({ type: 'event', event: 'session.compact' }));
  on('message_end', (e) => {
    const message = e.message as { role?: unknown } | undefined;
    if (message?.role !== 'user') return;
    const text = messageText(message).slice(0, MAX_USER_MESSAGE_CHARS);
    count++;
    if (first.length < MAX_HELLO_MESSAGES) first.push(text);
    link?.send({ type: 'user-message', text });
  });
  // Every answer of the model API: a subscription's usage windows are in its headers (docs/agents.md "Usage").
  on('after_provider_response', (e) => {
    const usage = usageMessageOf((e as PiProviderResponseEvent).headers);
    if (usage) link?.send(usage);
  });
  on('session_shutdown', () => {
    settle.dispose();
    link?.close();
    link = null;
    local.stop();
  });
}
