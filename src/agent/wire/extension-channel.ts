/**
 * The extension channel: the wire protocol of pi's tether extension (src/extension/), JSON lines
 * over the agent socket between the extension inside pi and the daemon, one lasting connection per
 * agent. The hook programs' one-line report (hook-wire.ts) shares the socket and is one more
 * message of the same union. The extension speaks first
 * (`hello`, naming its tmux pane), then reports events, its slash commands and user messages;
 * the daemon answers `welcome` (the session and the URL) or `refused` (why, for a person).
 *
 * Invariants: every line and field has a named limit, checked before anything is kept; a line
 * that does not decode is a typed `DomainError` (`agent-*`), never a crash; decoding copies only the
 * fields it knows, so nothing else a peer sends travels further.
 */
import { AGENT_STATE_VALUES, type AgentStateValue } from '../../machines/agent-state.machine.js';
import { PANE_ID_RE } from '../../tmux/layout.js';
import { decodeHookReport } from './hook-decode.js';
import type { HookReport } from './hook-wire.js';
import { decodeUsageMessage, type UsageMessage } from './usage-message.js';
import { absolutePath, bad, MAX_PATH_CHARS, MAX_SHORT_CHARS, positiveInt, str } from './wire-fields.js';

export const AGENT_PROTOCOL_VERSION = 1;
/** Longest line either side may send (a large command list fits many times over): json-lines.ts holds the reader to it. */
export const MAX_AGENT_LINE_BYTES = 1024 * 1024;
/** Most slash commands one agent may report. */
export const MAX_AGENT_COMMANDS = 2000;
/** Longest command name and description kept. */
export const MAX_COMMAND_NAME_CHARS = 128;
export const MAX_COMMAND_DESCRIPTION_CHARS = 1024;
/** Largest argument schema of one command, as JSON text. */
export const MAX_COMMAND_ARGS_CHARS = 4096;
/** Longest user message kept (for auto-naming only the start matters). */
export const MAX_USER_MESSAGE_CHARS = 2000;
/** User messages a hello may carry (what auto-naming needs). */
export const MAX_HELLO_MESSAGES = 3;
/** Longest tool name, pane id, socket path. */
export { AGENT_SOCKET_ENV } from './hook-wire.js';

export type AgentEventName = 'agent.ready' | 'agent.start' | 'tool.start' | 'tool.end' | 'agent.end' | 'session.tree' | 'session.compact';
const EVENT_NAMES: readonly AgentEventName[] = [
  'agent.ready',
  'agent.start',
  'tool.start',
  'tool.end',
  'agent.end',
  'session.tree',
  'session.compact',
];

/** One slash command as the agent reports it. */
export interface ReportedCommand {
  readonly name: string;
  readonly description: string;
  /** `extension`, `prompt` or `skill` (pi's source names). */
  readonly source: string;
  /** The command's argument schema, when the agent has one: any JSON, passed on as it is. */
  readonly args?: unknown;
}

/** `args` as JSON text when it is JSON that fits the limit, else null (too large, or not JSON). */
export function commandArgsJson(args: unknown): string | null {
  let json: string | undefined;
  try {
    json = JSON.stringify(args);
  } catch {
    return null;
  }
  return json === undefined || json.length > MAX_COMMAND_ARGS_CHARS ? null : json;
}

export interface HelloMessage {
  readonly type: 'hello';
  readonly v: number;
  /** `$TMUX_PANE`: `%<n>`. */
  readonly pane: string;
  /** The tmux server's socket path (the first field of `$TMUX`). */
  readonly tmuxSocket: string;
  readonly pid: number;
  /** What the agent is doing right now (it may reconnect mid-turn). */
  readonly state: AgentStateValue;
  readonly tool?: string;
  /** The first user messages of this agent run, and how many there were. */
  readonly userMessages: readonly string[];
  readonly userMessageCount: number;
  /** The file pi keeps this conversation in (`pi --session <file>` reopens it), when it has one. */
  readonly sessionFile?: string;
}

export interface EventMessage {
  readonly type: 'event';
  readonly event: AgentEventName;
  /** Tool call id (`tool.start`, `tool.end`). */
  readonly id?: string;
  readonly tool?: string;
  /** `agent.end`: the agent context reported idle with nothing pending. */
  readonly idle?: boolean;
}

export interface CommandsMessage {
  readonly type: 'commands';
  readonly commands: readonly ReportedCommand[];
}

export interface UserMessage {
  readonly type: 'user-message';
  readonly text: string;
}

/** pi moved to another conversation file (`/new`, `/resume`, `/fork`, a reload). */
export interface SessionFileMessage {
  readonly type: 'session-file';
  readonly path: string;
}

/** The agent stopped on a usage limit or an API error it gave up on (docs/agents.md "Stops"). */
export interface StopMessage {
  readonly type: 'stop';
  readonly kind: 'usage-limit' | 'error';
  /** The agent's own words (the daemon cuts them to the stop's limit). */
  readonly message: string;
  /** A usage limit's reset (epoch ms), when the agent says. */
  readonly resetsAt?: number;
  readonly limit?: string;
}

export type { HookReport } from './hook-wire.js';
export type { UsageMessage } from './usage-message.js';

/** Extension (or a hook program) -> daemon. */
export type AgentMessage =
  HelloMessage | EventMessage | CommandsMessage | UserMessage | SessionFileMessage | StopMessage | UsageMessage | HookReport;

/** Daemon -> extension. */
export type DaemonMessage =
  | {
      readonly type: 'welcome';
      readonly session: string;
      readonly url: string;
      /** The daemon's tether version (absent from daemons before it was sent). */
      readonly version?: string;
    }
  | { readonly type: 'refused'; readonly message: string };

/** Daemon -> anyone on the agent socket: what the extension hears, or `ok` (a hook report was taken). */
export type DaemonLine = DaemonMessage | { readonly type: 'ok' };

function decodeCommands(v: unknown): ReportedCommand[] {
  if (!Array.isArray(v)) throw bad('commands: must be an array');
  if (v.length > MAX_AGENT_COMMANDS) throw bad(`commands: more than ${MAX_AGENT_COMMANDS}`);
  return v.map((c: unknown, i) => {
    if (!c || typeof c !== 'object') throw bad(`commands/${i}: must be an object`);
    const o = c as Record<string, unknown>;
    const name = str(o, 'name', MAX_COMMAND_NAME_CHARS)!;
    if (name === '' || /\s/.test(name)) throw bad(`commands/${i}/name: must be one word`);
    const description = (str(o, 'description', MAX_COMMAND_DESCRIPTION_CHARS, true) ?? '').slice(0, MAX_COMMAND_DESCRIPTION_CHARS);
    const source = str(o, 'source', MAX_SHORT_CHARS, true) ?? 'extension';
    if (o.args === undefined || o.args === null) return { name, description, source };
    const json = commandArgsJson(o.args);
    if (json === null) throw bad(`commands/${i}/args: larger than ${MAX_COMMAND_ARGS_CHARS} characters as JSON`);
    // A copy: nothing of the peer's object travels further than its JSON.
    return { name, description, source, args: JSON.parse(json) as unknown };
  });
}

function decodeHello(o: Record<string, unknown>): HelloMessage {
  if (o.v !== AGENT_PROTOCOL_VERSION) throw bad(`v: this daemon speaks version ${AGENT_PROTOCOL_VERSION}`);
  const pane = str(o, 'pane', MAX_SHORT_CHARS)!;
  if (!PANE_ID_RE.test(pane)) throw bad('pane: must look like %<number>');
  const state = o.state;
  if (typeof state !== 'string' || !(AGENT_STATE_VALUES as readonly string[]).includes(state))
    throw bad(`state: must be one of ${AGENT_STATE_VALUES.join(', ')}`);
  const pid = positiveInt(o, 'pid', '')!;
  const messages = o.userMessages;
  if (!Array.isArray(messages) || messages.length > MAX_HELLO_MESSAGES || messages.some((m) => typeof m !== 'string')) {
    throw bad(`userMessages: must be at most ${MAX_HELLO_MESSAGES} strings`);
  }
  const count = o.userMessageCount;
  if (typeof count !== 'number' || !Number.isSafeInteger(count) || count < 0) throw bad('userMessageCount: must be a count');
  const tool = str(o, 'tool', MAX_SHORT_CHARS, true);
  const sessionFile = absolutePath(o, 'sessionFile', true);
  return {
    type: 'hello',
    v: AGENT_PROTOCOL_VERSION,
    pane,
    tmuxSocket: str(o, 'tmuxSocket', MAX_PATH_CHARS)!,
    pid,
    state: state as AgentStateValue,
    ...(tool !== undefined ? { tool } : {}),
    userMessages: (messages as string[]).map((m) => m.slice(0, MAX_USER_MESSAGE_CHARS)),
    userMessageCount: count,
    ...(sessionFile !== undefined ? { sessionFile } : {}),
  };
}

function decodeEvent(o: Record<string, unknown>): EventMessage {
  const event = o.event;
  if (typeof event !== 'string' || !(EVENT_NAMES as readonly string[]).includes(event))
    throw bad(`event: must be one of ${EVENT_NAMES.join(', ')}`);
  const id = str(o, 'id', MAX_SHORT_CHARS, true);
  const tool = str(o, 'tool', MAX_SHORT_CHARS, true);
  if (event === 'tool.start' && (id === undefined || tool === undefined)) throw bad('tool.start: needs id and tool');
  if (event === 'tool.end' && id === undefined) throw bad('tool.end: needs id');
  if (event === 'agent.end' && typeof o.idle !== 'boolean') throw bad('agent.end: needs idle (boolean)');
  return {
    type: 'event',
    event: event as AgentEventName,
    ...(id !== undefined ? { id } : {}),
    ...(tool !== undefined ? { tool } : {}),
    ...(typeof o.idle === 'boolean' ? { idle: o.idle } : {}),
  };
}

function decodeStop(o: Record<string, unknown>): StopMessage {
  if (o.kind !== 'usage-limit' && o.kind !== 'error') throw bad('kind: must be usage-limit or error');
  const message = str(o, 'message', MAX_USER_MESSAGE_CHARS)!;
  const limit = str(o, 'limit', MAX_SHORT_CHARS, true);
  const resetsAt = o.resetsAt;
  if (resetsAt !== undefined && (typeof resetsAt !== 'number' || !Number.isSafeInteger(resetsAt) || resetsAt < 0))
    throw bad('resetsAt: must be epoch milliseconds');
  return {
    type: 'stop',
    kind: o.kind,
    message,
    ...(resetsAt !== undefined ? { resetsAt } : {}),
    ...(limit !== undefined ? { limit } : {}),
  };
}

/** Decodes one line from an agent. */
export function decodeAgentMessage(line: string): AgentMessage {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    throw bad('not JSON');
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw bad('must be a JSON object');
  const o = parsed as Record<string, unknown>;
  switch (o.type) {
    case 'hello':
      return decodeHello(o);
    case 'event':
      return decodeEvent(o);
    case 'commands':
      return { type: 'commands', commands: decodeCommands(o.commands) };
    case 'user-message':
      return { type: 'user-message', text: str(o, 'text', MAX_AGENT_LINE_BYTES)!.slice(0, MAX_USER_MESSAGE_CHARS) };
    case 'session-file':
      return { type: 'session-file', path: absolutePath(o, 'path')! };
    case 'stop':
      return decodeStop(o);
    case 'usage':
      return decodeUsageMessage(o);
    case 'hook':
      return decodeHookReport(o);
    default:
      throw bad('type: unknown message type');
  }
}

/** Decodes one line from the daemon (the extension's side). */
export function decodeDaemonMessage(line: string): DaemonMessage {
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(line) as Record<string, unknown>;
  } catch {
    throw bad('not JSON');
  }
  if (o?.type === 'welcome') {
    const version = str(o, 'version', MAX_SHORT_CHARS, true);
    return {
      type: 'welcome',
      session: str(o, 'session', MAX_SHORT_CHARS)!,
      url: str(o, 'url', MAX_PATH_CHARS)!,
      ...(version !== undefined ? { version } : {}),
    };
  }
  if (o?.type === 'refused') return { type: 'refused', message: str(o, 'message', MAX_COMMAND_DESCRIPTION_CHARS)! };
  throw bad('type: unknown message type');
}
