/**
 * The extension's end of the agent channel: a Unix-socket connection to the daemon that says
 * `hello` on every (re)connect, sends the latest command list again after it, and reconnects
 * with back-off when the daemon goes away.
 *
 * Invariants: nothing here ever throws into pi or keeps it alive (timers and the socket are
 * unref'd); while disconnected, messages are dropped (the next hello carries the state); a
 * daemon that does not read is dropped rather than buffered without bound.
 */
import { createConnection, type Socket } from 'node:net';
import {
  decodeDaemonMessage,
  type AgentMessage,
  type CommandsMessage,
  type DaemonMessage,
  type HelloMessage,
} from '../agent/wire/extension-channel.js';
import { JsonLineReader, encodeLine } from '../agent/wire/json-lines.js';

/** Reconnect back-off: 250 ms doubling to 5 s. */
export function reconnectDelayMs(failures: number): number {
  return Math.min(5000, 250 * 2 ** Math.max(0, failures - 1));
}
/** Most bytes queued towards the daemon before the connection is dropped. */
const MAX_QUEUED_BYTES = 1024 * 1024;

export interface DaemonLinkOptions {
  readonly path: string;
  /** The hello for a new connection (the agent's state right now). */
  readonly hello: () => HelloMessage;
  readonly onMessage: (message: DaemonMessage) => void;
  /** The first connection attempt found no daemon (no socket, or nobody listening). */
  readonly onNoDaemon?: () => void;
}

export class DaemonLink {
  private socket: Socket | null = null;
  private connected = false;
  private failures = 0;
  private attempts = 0;
  private timer: NodeJS.Timeout | null = null;
  private closed = false;
  private commands: CommandsMessage | null = null;

  constructor(private readonly opts: DaemonLinkOptions) {}

  start(): void {
    this.connect();
  }

  /** Whether a connection is open now. */
  get isConnected(): boolean {
    return this.connected;
  }

  /** Sends a message if connected; a command list is also kept and sent after each hello. */
  send(message: AgentMessage): void {
    if (message.type === 'commands') this.commands = message;
    if (!this.connected || !this.socket) return;
    this.write(message);
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.socket?.destroy();
    this.socket = null;
    this.connected = false;
  }

  private write(message: AgentMessage): void {
    const socket = this.socket;
    if (!socket || socket.destroyed) return;
    if (socket.writableLength > MAX_QUEUED_BYTES) {
      socket.destroy();
      return;
    }
    socket.write(encodeLine(message));
  }

  private connect(): void {
    if (this.closed) return;
    this.attempts++;
    const socket = createConnection(this.opts.path);
    this.socket = socket;
    const reader = new JsonLineReader();
    let down = false;
    socket.on('connect', () => {
      socket.unref();
      this.connected = true;
      this.failures = 0;
      try {
        this.write(this.opts.hello());
        if (this.commands) this.write(this.commands);
      } catch {
        socket.destroy();
      }
    });
    socket.on('data', (data: Buffer) => {
      try {
        for (const line of reader.push(data)) this.opts.onMessage(decodeDaemonMessage(line));
      } catch {
        socket.destroy();
      }
    });
    const onDown = (err?: NodeJS.ErrnoException): void => {
      if (down) return;
      down = true;
      const wasConnected = this.connected;
      this.connected = false;
      if (this.socket === socket) this.socket = null;
      if (!wasConnected && this.attempts === 1 && (err?.code === 'ENOENT' || err?.code === 'ECONNREFUSED')) {
        try {
          this.opts.onNoDaemon?.();
        } catch {
          // Starting the daemon is best effort; the reconnects below find it once it runs.
        }
      }
      this.retry();
    };
    socket.on('error', onDown);
    socket.on('close', () => onDown());
    socket.unref();
  }

  private retry(): void {
    if (this.closed || this.timer) return;
    this.failures++;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.connect();
    }, reconnectDelayMs(this.failures));
    this.timer.unref();
  }
}
