/**
 * Speaks the extension's side of the agent socket (JSON lines), as the tether extension in pi
 * does: a hello from a pane, then events. For tests that need agent states without a model.
 */
import { connect, type Socket } from 'node:net';
import type { AgentEventName } from '../../src/agent/wire/extension-channel.js';
import { AGENT_PROTOCOL_VERSION } from '../../src/agent/wire/extension-channel.js';
import { agentSocketPath } from '../../src/agent/wire/socket-path.js';
import { resolvePaths } from '../../src/config/paths.js';

export interface FakeAgent {
  /** The daemon's first answer: welcome or refused. */
  readonly welcomed: Promise<{ type: string; session?: string; message?: string }>;
  event(event: AgentEventName, extra?: { idle?: boolean; tool?: string; id?: string }): void;
  /** Reports that the agent stopped on a usage limit or an error, as the extension does (`resetsAt` epoch ms). */
  stop(kind: 'usage-limit' | 'error', message: string, extra?: { resetsAt?: number; limit?: string }): void;
  /** Reports a prompt the user submitted, as the extension does (pi's user message). */
  userMessage(text: string): void;
  /** Reports the account's usage windows, as the extension does (`resetsAt` epoch ms; a percent may be null or out of range). */
  usage(windows: readonly { name: string; usedPercent: number | null; resetsAt: number | null }[]): void;
  /** Sends any line (a malformed message, to see it refused). */
  raw(line: string): void;
  /** Reports the agent's slash commands, as the extension does. */
  commands(list: readonly { name: string; description?: string; source?: string; args?: unknown }[]): void;
  close(): void;
}

/** Connects as the agent running in `pane` of the tmux server at `tmuxSocket`. */
export function fakeAgent(dataDir: string, pane: string, tmuxSocket: string): FakeAgent {
  const socket: Socket = connect(agentSocketPath(resolvePaths({ TETHER_DATA_DIR: dataDir }).runDir));
  socket.on('error', () => undefined);
  const send = (m: object) => socket.write(`${JSON.stringify(m)}\n`);
  const welcomed = new Promise<{ type: string }>((resolve, reject) => {
    let buf = '';
    socket.on('data', (d: Buffer) => {
      buf += d.toString('utf8');
      const nl = buf.indexOf('\n');
      if (nl !== -1) resolve(JSON.parse(buf.slice(0, nl)) as { type: string });
    });
    socket.on('close', () => reject(new Error('the agent socket closed before an answer')));
  });
  socket.on('connect', () =>
    send({
      type: 'hello',
      v: AGENT_PROTOCOL_VERSION,
      pane,
      tmuxSocket,
      pid: process.pid,
      state: 'idle',
      userMessages: [],
      userMessageCount: 0,
    }),
  );
  return {
    welcomed,
    event: (event, extra = {}) => send({ type: 'event', event, ...extra }),
    commands: (list) => send({ type: 'commands', commands: list }),
    userMessage: (text) => send({ type: 'user-message', text }),
    usage: (windows) => send({ type: 'usage', windows }),
    raw: (line) => socket.write(`${line}\n`),
    stop: (kind, message, extra = {}) => send({ type: 'stop', kind, message, ...extra }),
    close: () => socket.destroy(),
  };
}
