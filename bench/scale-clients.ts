/**
 * The scale bench's live clients, in a process of their own (forked by bench/scale.bench.ts):
 * one reference client (src/reference-client) per busy session, as many phones would hold, so
 * their work does not sit in the event loop of the process that times keystrokes and requests.
 * The parent sends `connect` (more sessions to follow), `stats` and `close` over IPC; the
 * answer to `stats` counts what a person would notice: snapshots after the first (resyncs),
 * reconnects, error frames.
 */
import { SessionStream } from '../src/reference-client/session-stream.js';

export type ClientsRequest =
  | { readonly type: 'connect'; readonly base: string; readonly token: string; readonly sessions: readonly string[] }
  | { readonly type: 'stats' }
  | { readonly type: 'close' };

export interface ClientsStats {
  readonly type: 'stats';
  readonly clients: number;
  /** Clients that hold a screen (their first snapshot came). */
  readonly based: number;
  /** Snapshots beyond each client's first: the stream could not continue and the client was given the screen again. */
  readonly resyncs: number;
  readonly reconnects: number;
  readonly errorFrames: number;
  readonly dataBytes: number;
}

interface Client {
  readonly stream: SessionStream;
  snapshots: number;
  reconnects: number;
  errorFrames: number;
  dataBytes: number;
}

const clients: Client[] = [];

function connect(base: string, token: string, session: string): void {
  const stream = new SessionStream({ baseUrl: base, token, session, ws: { rejectUnauthorized: false } });
  const client: Client = { stream, snapshots: 0, reconnects: 0, errorFrames: 0, dataBytes: 0 };
  stream.on('snapshot', () => client.snapshots++);
  stream.on('data', (bytes) => (client.dataBytes += bytes.length));
  stream.on('errorFrame', () => client.errorFrames++);
  stream.on('status', (status) => {
    if (status === 'reconnecting') client.reconnects++;
  });
  clients.push(client);
  stream.connect();
}

function stats(): ClientsStats {
  let based = 0;
  let resyncs = 0;
  let reconnects = 0;
  let errorFrames = 0;
  let dataBytes = 0;
  for (const c of clients) {
    if (c.snapshots > 0) based++;
    resyncs += Math.max(0, c.snapshots - 1);
    reconnects += c.reconnects;
    errorFrames += c.errorFrames;
    dataBytes += c.dataBytes;
  }
  return { type: 'stats', clients: clients.length, based, resyncs, reconnects, errorFrames, dataBytes };
}

// The bench gone (or done): so are its clients.
process.on('disconnect', () => process.exit(0));

process.on('message', (msg: ClientsRequest) => {
  switch (msg.type) {
    case 'connect':
      for (const s of msg.sessions) connect(msg.base, msg.token, s);
      process.send?.(stats());
      return;
    case 'stats':
      process.send?.(stats());
      return;
    case 'close':
      for (const c of clients) c.stream.close();
      process.disconnect();
      return;
  }
});
