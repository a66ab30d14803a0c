/**
 * The daemon's end of the agent channel: a Unix socket under the data dir that only the user
 * can open (its directory 0700, the socket 0600), JSON lines, one connection per agent, each
 * handed to the `AgentHub`.
 *
 * Invariants: a connection that sends a bad line is told why (`refused`) and closed, and
 * nothing it sent counts; the socket file is removed on close; a socket another live daemon
 * answers on is never taken over, a stale one is.
 */
import { chmodSync, existsSync, lstatSync, mkdirSync, unlinkSync } from 'node:fs';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { dirname } from 'node:path';
import { DomainError } from '../../errors.js';
import type { Logger } from '../../log.js';
import type { AgentHub } from './hub.js';
import { decodeAgentMessage, type DaemonLine } from '../wire/extension-channel.js';
import { JsonLineReader, encodeLine } from '../wire/json-lines.js';
import { MAX_SOCKET_PATH_BYTES } from '../wire/socket-path.js';

/** Most agent connections at once; more are closed at once. */
export const MAX_AGENT_CONNECTIONS = 256;
/** Most bytes queued towards one agent before it is dropped (it is not reading). */
const MAX_QUEUED_BYTES = 1024 * 1024;

/** The socket cannot be served: too long a path, or another daemon answers on it. */
const unusable = (message: string): DomainError => new DomainError('agent-socket-unusable', message);

/** Resolves true when something accepts a connection on `path`. */
function answers(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createConnection(path);
    probe.once('connect', () => {
      probe.destroy();
      resolve(true);
    });
    probe.once('error', () => resolve(false));
  });
}

export class AgentSocketServer {
  private readonly sockets = new Set<Socket>();

  private constructor(
    readonly path: string,
    private readonly server: Server,
    private readonly hub: AgentHub,
    private readonly log: Logger,
  ) {
    server.on('connection', (socket) => this.serve(socket));
  }

  /** Listens on `path`; `agent-socket-unusable` when it cannot. */
  static async listen(path: string, hub: AgentHub, log: Logger): Promise<AgentSocketServer> {
    if (Buffer.byteLength(path) > MAX_SOCKET_PATH_BYTES) {
      throw unusable(
        `the agent socket path ${path} is longer than ${MAX_SOCKET_PATH_BYTES} bytes: set TETHER_DATA_DIR to a shorter directory`,
      );
    }
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    const dir = lstatSync(dirname(path));
    if (!dir.isDirectory() || (typeof process.getuid === 'function' && dir.uid !== process.getuid())) {
      throw unusable(`${dirname(path)} is not a directory of this user: remove it, or set a shorter TETHER_DATA_DIR`);
    }
    chmodSync(dirname(path), 0o700);
    if (existsSync(path)) {
      if (await answers(path)) throw unusable(`another tether daemon is serving agents at ${path}: stop it first`);
      unlinkSync(path);
    }
    const server = createServer({ allowHalfOpen: false });
    server.maxConnections = MAX_AGENT_CONNECTIONS;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(path, () => {
        server.off('error', reject);
        resolve();
      });
    });
    chmodSync(path, 0o600);
    return new AgentSocketServer(path, server, hub, log);
  }

  private serve(socket: Socket): void {
    this.sockets.add(socket);
    const reader = new JsonLineReader();
    let ended = false;
    const send = (message: DaemonLine): void => {
      if (ended || socket.destroyed) return;
      if (socket.writableLength > MAX_QUEUED_BYTES) {
        socket.destroy();
        return;
      }
      socket.write(encodeLine(message));
    };
    const conn = this.hub.accept({ send, close: () => socket.end() });
    const finish = (): void => {
      if (ended) return;
      ended = true;
      this.sockets.delete(socket);
      conn.closed();
    };
    socket.on('data', (data: Buffer) => {
      if (ended) return;
      try {
        for (const line of reader.push(data)) conn.message(decodeAgentMessage(line));
      } catch (err) {
        const why = err instanceof DomainError ? err.message : String(err);
        this.log.warn({ err: why }, 'an agent sent a bad line: closing its connection');
        send({ type: 'refused', message: `tether could not read a message: ${why}` });
        finish();
        socket.end();
      }
    });
    socket.on('close', finish);
    socket.on('error', () => finish());
  }

  /** Closes every connection (each agent's state goes absent) and removes the socket file. */
  async close(): Promise<void> {
    for (const s of [...this.sockets]) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    try {
      unlinkSync(this.path);
    } catch {
      // Already gone (node removes it on close on some platforms).
    }
  }
}
