/**
 * Speaks the agents' side of the daemon's agent socket (docs/agents.md "The agent socket"), for
 * benchmarks that need agents without a model: the lasting connection of pi's tether extension
 * (a `hello` naming the pane, then events, stops, user messages), and the one-line report of a
 * hook program (Claude Code's hooks), each a connection of its own. The protocol is
 * src/agent/wire/extension-channel.ts and hook-wire.ts. The tests' fake agent
 * (test/helpers/agent-socket.ts) is this one.
 */
import { connect, type Socket } from 'node:net';
import type { AgentEventName } from '../src/agent/wire/extension-channel.js';
import { AGENT_PROTOCOL_VERSION } from '../src/agent/wire/extension-channel.js';
import { HOOK_REPORT_VERSION } from '../src/agent/wire/hook-wire.js';
import { agentSocketPath } from '../src/agent/wire/socket-path.js';
import { resolvePaths } from '../src/config/paths.js';

/** The agent socket of the daemon whose data dir is `dataDir`. */
export const agentSocketOf = (dataDir: string): string => agentSocketPath(resolvePaths({ TETHER_DATA_DIR: dataDir }).runDir);

/** Reads the daemon's first answer line on `socket`. */
function firstLine(socket: Socket): Promise<{ type: string; session?: string; message?: string }> {
  return new Promise((resolve, reject) => {
    let buf = '';
    const onData = (d: Buffer): void => {
      buf += d.toString('utf8');
      const nl = buf.indexOf('\n');
      if (nl === -1) return;
      socket.off('data', onData);
      try {
        resolve(JSON.parse(buf.slice(0, nl)) as { type: string });
      } catch (err) {
        reject(err instanceof Error ? err : new Error(String(err)));
      }
    };
    socket.on('data', onData);
    socket.on('close', () => reject(new Error('the agent socket closed before an answer')));
  });
}

/** pi's tether extension, as the daemon hears it. */
export interface ExtensionAgent {
  /** The daemon's first answer: welcome or refused. */
  readonly welcomed: Promise<{ type: string; session?: string; message?: string }>;
  /** Resolves when the daemon closed the connection (or it failed). */
  readonly closed: Promise<void>;
  event(event: AgentEventName, extra?: { idle?: boolean; tool?: string; id?: string }): void;
  /** The agent stopped on a usage limit or an API error (`resetsAt` epoch ms). */
  stop(kind: 'usage-limit' | 'error', message: string, extra?: { resetsAt?: number; limit?: string }): void;
  /** A prompt the user submitted (pi's user message). */
  userMessage(text: string): void;
  /** The account's usage windows, as the extension reports them (`resetsAt` epoch ms; a percent may be null or out of range). */
  usage(windows: readonly { name: string; usedPercent: number | null; resetsAt: number | null }[]): void;
  /** The agent's slash commands, as the extension reports them. */
  commands(list: readonly { name: string; description?: string; source?: string; args?: unknown }[]): void;
  /** Sends any line (a malformed message, to see it refused). */
  raw(line: string): void;
  close(): void;
}

/** Connects as pi's extension running in `pane` (`%<n>`) of the tmux server at `tmuxSocket`. */
export function extensionAgent(dataDir: string, pane: string, tmuxSocket: string, pid = process.pid): ExtensionAgent {
  const socket: Socket = connect(agentSocketOf(dataDir));
  socket.on('error', () => undefined);
  const send = (m: object): void => {
    if (!socket.destroyed) socket.write(`${JSON.stringify(m)}\n`);
  };
  const welcomed = firstLine(socket);
  welcomed.catch(() => undefined);
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.on('connect', () =>
    send({ type: 'hello', v: AGENT_PROTOCOL_VERSION, pane, tmuxSocket, pid, state: 'idle', userMessages: [], userMessageCount: 0 }),
  );
  return {
    welcomed,
    closed,
    event: (event, extra = {}) => send({ type: 'event', event, ...extra }),
    stop: (kind, message, extra = {}) => send({ type: 'stop', kind, message, ...extra }),
    userMessage: (text) => send({ type: 'user-message', text }),
    usage: (windows) => send({ type: 'usage', windows }),
    commands: (list) => send({ type: 'commands', commands: list }),
    raw: (line) => {
      if (!socket.destroyed) socket.write(`${line}\n`);
    },
    close: () => socket.destroy(),
  };
}

/**
 * One hook program's report (a connection of its own, as Claude Code's hook program sends it):
 * resolves with the daemon's answer (`ok`, or `refused` with why).
 */
export async function hookReport(
  dataDir: string,
  agent: string,
  pane: string,
  tmuxSocket: string,
  fields: Readonly<Record<string, string>>,
  pid = process.pid,
): Promise<{ type: string; message?: string }> {
  const socket: Socket = connect(agentSocketOf(dataDir));
  socket.on('error', () => undefined);
  const answer = firstLine(socket);
  socket.on('connect', () =>
    socket.write(`${JSON.stringify({ type: 'hook', v: HOOK_REPORT_VERSION, agent, pane, tmuxSocket, pid, fields })}\n`),
  );
  try {
    return await answer;
  } finally {
    socket.destroy();
  }
}
