/**
 * The least a sidecar can do, measured beside tether in the echo bench: a second node process
 * with a WebSocket server and one `tmux -C` client, which turns a `keys` frame into `send-keys
 * -H` and each `%output` into a binary frame of the same shape as tether's (8-byte position,
 * then the bytes). No sessions, no auth, no validation, no ring, no state: only the two hops
 * (client to sidecar, sidecar to client) and a WebSocket at each end, which every design that
 * puts a daemon between a phone and tmux pays. What tether takes over this relay is its own
 * work; what the relay takes over the bare `tmux -C` floor is the architecture's.
 *
 * The child is this file run with `child` as its first argument: it prints its port, then
 * serves until its stdin closes. Only the child started here is ever signalled.
 */
import { execFileSync, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import WebSocket, { WebSocketServer } from 'ws';
import { decodeChunkFrame, encodeChunkFrame } from '../src/protocol/frames.js';
import { ControlParser } from '../src/tmux/control/control-codec.js';
import { sendKeysHexCommands } from '../src/tmux/pane/input.js';

/** A relay serving one tmux session; `url` is its WebSocket. */
export interface RelayFloor {
  readonly url: string;
  stop(): Promise<void>;
}

/** Starts the relay child on `session` of the tmux server at `socket`. */
export async function startRelayFloor(socket: string, session: string): Promise<RelayFloor> {
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), 'child', socket, session], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4096)));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the relay printed no port in 30 s; stderr:\n${stderr}`)), 30_000);
    void exited.then(() => reject(new Error(`the relay exited before listening; stderr:\n${stderr}`)));
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (!out.includes('\n')) return;
      clearTimeout(timer);
      resolve(Number(out.trim()));
    });
  });
  return {
    url: `ws://127.0.0.1:${port}/`,
    stop: async () => {
      child.stdin.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** A client of the relay, read the way the bench reads tether's stream (`onData` per binary frame). */
export class RelayClient {
  readonly ws: WebSocket;
  onData: ((data: Buffer, seq: number) => void) | null = null;
  readonly opened: Promise<void>;

  constructor(url: string) {
    // permessage-deflate offered, as tether's measuring client does; small frames go uncompressed both ways.
    this.ws = new WebSocket(url, { perMessageDeflate: true });
    this.ws.binaryType = 'nodebuffer';
    this.opened = new Promise((resolve, reject) => {
      this.ws.once('open', () => resolve());
      this.ws.once('error', reject);
    });
    this.ws.on('message', (data: Buffer, isBinary) => {
      if (!isBinary) return;
      const chunk = decodeChunkFrame(data);
      this.onData?.(chunk.data, chunk.seq);
    });
  }

  send(frame: object): void {
    this.ws.send(JSON.stringify(frame), { compress: false });
  }

  close(): void {
    this.ws.terminate();
  }
}

function serveRelay(socket: string, session: string): void {
  // Keystrokes go to the pane as tether sends them: `send-keys -H` lines from the same builder.
  const paneId = execFileSync('tmux', ['-S', socket, 'display-message', '-p', '-t', `=${session}:`, '#{pane_id}'], {
    encoding: 'utf8',
  }).trim();
  const tmux: ChildProcessWithoutNullStreams = spawn('tmux', ['-S', socket, '-C', 'attach-session', '-t', `=${session}`], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const clients = new Set<WebSocket>();
  let position = 0;
  const parser = new ControlParser((event) => {
    if (event.type !== 'output' && event.type !== 'extended-output') return;
    position += event.data.length;
    const frame = encodeChunkFrame(position, event.data);
    for (const ws of clients) ws.send(frame, { binary: true, compress: false });
  });
  tmux.stdout.on('data', (d: Buffer) => parser.push(d));
  tmux.stderr.resume();
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: true }, () => {
    const address = wss.address();
    process.stdout.write(`${address !== null && typeof address === 'object' ? address.port : 0}\n`);
  });
  wss.on('connection', (ws) => {
    clients.add(ws);
    ws.on('close', () => clients.delete(ws));
    ws.on('message', (data: Buffer) => {
      const frame = JSON.parse(data.toString('utf8')) as { type?: unknown; data?: unknown };
      if (frame.type !== 'keys' || typeof frame.data !== 'string') return;
      for (const line of sendKeysHexCommands(paneId, Buffer.from(frame.data, 'utf8'))) tmux.stdin.write(`${line}\n`);
    });
  });
  // The bench closes stdin to stop it: detach from tmux (its session stays), close the server.
  process.stdin.on('end', () => {
    tmux.stdin.end();
    wss.close();
    for (const ws of clients) ws.terminate();
    setTimeout(() => process.exit(0), 200).unref();
  });
  process.stdin.resume();
}

if (process.argv[2] === 'child') serveRelay(process.argv[3]!, process.argv[4]!);
