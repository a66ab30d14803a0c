/**
 * What the stream benchmarks share: a real daemon (the built CLI, `tether serve`) on a private
 * tmux server, plain http or TLS as the bench config says, a raw stream socket that only counts
 * and looks for markers (so the measuring side costs as little CPU as the bare `tmux -C` reader
 * it is compared with), a bare control-mode reader on the same tmux, and the statistics.
 *
 * Only processes started here are ever signalled; the tmux server lives on a socket in a temp
 * dir and is killed through it.
 */
import { execFile, spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import WebSocket, { type ClientOptions } from 'ws';
import { DAEMON_NODE_ARGS } from '../src/config/daemon-process.js';
import { decodeChunkFrame } from '../src/protocol/frames.js';
import { CLIENT_DEFLATE_MIN_BYTES } from '../src/reference-client/session-stream.js';
import { CLI } from '../testkit/built-cli.js';

/**
 * node's flags for the daemon: `TETHER_BENCH_DAEMON_NODE_ARGS` ("none" for none) to compare,
 * else `byDefault` (tether's launchers' own, unless a bench starts it as a user does).
 */
function daemonNodeArgs(byDefault: readonly string[] = DAEMON_NODE_ARGS): readonly string[] {
  const v = process.env.TETHER_BENCH_DAEMON_NODE_ARGS;
  if (v === undefined) return byDefault;
  return v === 'none' ? [] : v.split(' ').filter(Boolean);
}

const run = promisify(execFile);

/** One line of the report. Every value is set against a baseline measured in the same run. */
export interface Row {
  readonly name: string;
  readonly value: string;
  readonly baseline: string;
  readonly ratio: string;
  readonly target: string;
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A number from the environment, or the default. */
export function envNumber(name: string, def: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return def;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} must be a positive number, not "${raw}"`);
  return n;
}

/** Nearest-rank percentile (p in 0..100) of unsorted samples. */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1]!;
}

export const median = (samples: readonly number[]): number => percentile(samples, 50);

export const ms = (v: number): string => (v < 10 ? `${v.toFixed(2)} ms` : `${v.toFixed(0)} ms`);

/** Waits until `fn` is truthy, polling. */
export async function waitFor<T>(what: string, fn: () => T | Promise<T>, timeoutMs = 30_000, everyMs = 20): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

/** A process's CPU seconds (user + system) and resident memory, from /proc. */
export function procUsage(pid: number): { cpuSeconds: number; rssMb: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces) start after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]); // utime, stime (fields 14, 15)
  const rss = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return { cpuSeconds: ticks / CLOCK_TICKS, rssMb: Number(rss ?? 0) / 1024 };
}
/** USER_HZ: 100 on every Linux this runs on (getconf CLK_TCK). */
const CLOCK_TICKS = 100;

/** The direct children of a process (every thread's `children` list). */
export function childPids(pid: number): number[] {
  const out: number[] = [];
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      out.push(...readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number));
    } catch {
      // thread gone
    }
  }
  return out;
}

/** One of `procUsage`'s figures summed over a set of processes (gone ones count 0). */
export function sumOfProcs(pids: readonly number[], figure: 'cpuSeconds' | 'rssMb'): number {
  let total = 0;
  for (const pid of pids) {
    try {
      total += procUsage(pid)[figure];
    } catch {
      // exited
    }
  }
  return total;
}

/** CPU seconds of a set of processes (gone ones count 0). */
export const cpuOf = (pids: readonly number[]): number => sumOfProcs(pids, 'cpuSeconds');

/** Whether the bench config asks for TLS (`TETHER_BENCH_TLS=1`). */
export const benchWantsTls = (): boolean => process.env.TETHER_BENCH_TLS === '1' || process.env.TETHER_BENCH_TLS === 'true';

export interface BenchTmux {
  readonly dir: string;
  readonly socket: string;
  tmux(...args: string[]): Promise<string>;
  /** The pid of the tmux server. */
  serverPid(): Promise<number>;
}

export interface BenchDaemon {
  readonly tmux: BenchTmux;
  readonly child: ChildProcessWithoutNullStreams;
  readonly base: string;
  readonly token: string;
  /** Whether the daemon actually serves TLS (its URL is https). */
  readonly tls: boolean;
  readonly pid: number;
  /** The daemon's data dir (its run file holds the port and the certificate's fingerprint). */
  readonly dataDir: string;
  /** An authenticated JSON request (TLS with the daemon's self-signed certificate accepted). */
  request(method: string, path: string, body?: unknown): Promise<{ status: number; text: string }>;
  /** ws client options for this daemon (the certificate accepted when it is TLS). */
  wsOptions(deflate: boolean): ClientOptions;
  /** Creates a tether session (201) and waits until its stream can be opened. */
  createSession(name: string): Promise<void>;
  /** Types a shell line into a pane with tmux send-keys (not through tether). */
  typeLine(target: string, line: string): Promise<void>;
  stop(): Promise<void>;
}

/**
 * A daemon for a benchmark: its own tmux server, data dir and config (`tls` as the bench
 * config asks), `/bin/sh` as the agent, `defaultSession` created at start; `extraEnv` is added
 * to its environment (a variable set to undefined is removed). Logs at warn only,
 * so logging is not measured. `TETHER_BENCH_CPU_PROF=<dir>` profiles it (node --cpu-prof).
 */
export async function benchDaemon(
  defaultSession: string,
  extraToml = '',
  wantTls = benchWantsTls(),
  nodeArgs: readonly string[] = DAEMON_NODE_ARGS,
  extraEnv: NodeJS.ProcessEnv = {},
): Promise<BenchDaemon> {
  const dir = mkdtempSync(join(tmpdir(), 'tether-bench-'));
  const socket = join(dir, 'tmux.sock');
  const dataDir = join(dir, 'data');
  mkdirSync(dataDir, { recursive: true });
  const configFile = join(dir, 'config.toml');
  writeFileSync(
    configFile,
    `bindAddress = "127.0.0.1:0"\ntls = ${wantTls}\n${extraToml}\n[agent]\ncommand = "/bin/sh"\ndefault_session = ${JSON.stringify(defaultSession)}\n\n[tmux]\nsocket = ${JSON.stringify(socket)}\n`,
  );
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    TETHER_CONFIG: configFile,
    TETHER_DATA_DIR: dataDir,
    TETHER_LOG_LEVEL: 'warn',
    PI_OFFLINE: '1',
    ENV: '',
    PS1: '$ ',
    ...extraEnv,
  };
  delete env.TMUX;
  for (const [k, v] of Object.entries(extraEnv)) if (v === undefined) delete env[k];
  const prof = process.env.TETHER_BENCH_CPU_PROF;
  const cleanup = () => rmSync(dir, { recursive: true, force: true });
  const tmux = async (...args: string[]): Promise<string> => (await run('tmux', ['-S', socket, ...args])).stdout;
  const benchTmux: BenchTmux = { dir, socket, tmux, serverPid: async () => Number((await tmux('display-message', '-p', '#{pid}')).trim()) };
  const child = spawn(
    process.execPath,
    [...daemonNodeArgs(nodeArgs), ...(prof ? ['--cpu-prof', `--cpu-prof-dir=${prof}`] : []), CLI, 'serve'],
    {
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-8192)));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  let url: URL;
  try {
    url = await new Promise<URL>((resolve, reject) => {
      let out = '';
      const timer = setTimeout(() => reject(new Error(`tether serve printed no URL in 30 s; stderr:\n${stderr}`)), 30_000);
      void exited.then(() => reject(new Error(`tether serve exited before listening; stderr:\n${stderr}`)));
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        const nl = out.indexOf('\n');
        if (nl < 0) return;
        clearTimeout(timer);
        resolve(new URL(out.slice(0, nl)));
      });
    });
  } catch (err) {
    child.kill('SIGKILL');
    cleanup();
    throw err;
  }
  child.stdout.resume();
  const daemon = { url, token: url.searchParams.get('token') ?? '', base: `${url.protocol}//${url.host}` };
  const tls = daemon.url.protocol === 'https:';
  const request = (method: string, path: string, body?: unknown) =>
    new Promise<{ status: number; text: string }>((resolve, reject) => {
      const url = new URL(path, daemon.base);
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const req = (tls ? https : http).request(
        url,
        {
          method,
          rejectUnauthorized: false,
          headers: { authorization: `Bearer ${daemon.token}`, ...(payload ? { 'content-type': 'application/json' } : {}) },
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (d: string) => (text += d));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
  const bd: BenchDaemon = {
    tmux: benchTmux,
    child,
    base: daemon.base,
    token: daemon.token,
    tls,
    pid: child.pid!,
    dataDir,
    request,
    wsOptions: (deflate) => ({
      headers: { authorization: `Bearer ${daemon.token}` },
      perMessageDeflate: deflate,
      rejectUnauthorized: false,
    }),
    createSession: async (name) => {
      const res = await request('POST', '/sessions', { name });
      if (res.status !== 201) throw new Error(`creating session ${name}: HTTP ${res.status} ${res.text}`);
    },
    typeLine: async (target, line) => {
      await tmux('send-keys', '-t', target, '-l', line);
      await tmux('send-keys', '-t', target, 'Enter');
    },
    stop: async () => {
      running.delete(bd);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
      await tmux('kill-server').catch(() => undefined);
      cleanup();
    },
  };
  stopOnInterrupt(bd, dir);
  // The default session is made at start; wait until tether serves it.
  try {
    await waitFor(`session ${defaultSession}`, async () => (await request('GET', '/sessions')).text.includes(`"${defaultSession}"`));
  } catch (err) {
    await bd.stop();
    throw err;
  }
  return bd;
}

/** Accumulates a byte stream's last bytes to find a marker that may straddle chunks. */
export class MarkerScan {
  private tail = '';
  constructor(private readonly marker: string) {}
  /** True once the marker has been seen in what was fed since the last reset. */
  feed(bytes: Buffer): boolean {
    const s = this.tail + bytes.toString('latin1', Math.max(0, bytes.length - 4096));
    if (s.includes(this.marker)) {
      this.tail = '';
      return true;
    }
    this.tail = s.slice(-this.marker.length);
    return false;
  }
  reset(): void {
    this.tail = '';
  }
}

/** A fresh stream client on `session`, once it has its first snapshot (the screen to follow from). */
export async function streamWithBase(bd: BenchDaemon, session: string, deflate = true): Promise<RawStream> {
  const client = new RawStream(bd, session, null, deflate);
  await client.opened;
  await waitFor('the first snapshot', () => client.snapshots > 0);
  return client;
}

/**
 * A stream client that does the minimum a client must (resume, follow seq, decode a
 * snapshot) and nothing else: the measuring side of the tether runs.
 */
export class RawStream {
  readonly ws: WebSocket;
  lastSeq: number | null;
  /** When the socket was created (before the TCP connect and any TLS handshake). */
  readonly startedAt = performance.now();
  openedAt = 0;
  dataBytes = 0;
  snapshots = 0;
  onData: ((data: Buffer, seq: number) => void) | null = null;
  onSnapshot: ((bytes: Buffer, seq: number, frameBytes: number) => void) | null = null;
  readonly opened: Promise<void>;
  readonly closed: Promise<void>;
  /** When the first frame of any kind arrived. */
  readonly firstFrame: Promise<number>;

  constructor(bd: BenchDaemon, session: string, lastSeq: number | null, deflate = true, path = 'stream') {
    this.lastSeq = lastSeq;
    const url = `${bd.base.replace(/^http/, 'ws')}/sessions/${session}/${path}`;
    this.ws = new WebSocket(url, bd.wsOptions(deflate));
    this.ws.binaryType = 'nodebuffer';
    this.opened = new Promise((resolve, reject) => {
      this.ws.once('open', () => {
        this.openedAt = performance.now();
        if (path === 'stream') this.ws.send(JSON.stringify({ type: 'resume', lastSeq: this.lastSeq }));
        resolve();
      });
      this.ws.once('error', reject);
    });
    this.closed = new Promise((resolve) => this.ws.once('close', () => resolve()));
    this.ws.on('error', () => undefined);
    this.firstFrame = new Promise((resolve) => this.ws.once('message', () => resolve(performance.now())));
    this.ws.on('message', (data: Buffer, isBinary) => {
      if (isBinary) {
        const { seq, data: bytes } = decodeChunkFrame(data);
        this.dataBytes += bytes.length;
        this.lastSeq = seq;
        this.onData?.(bytes, seq);
        return;
      }
      const text = data.toString('utf8');
      if (!text.startsWith('{"type":"snapshot"')) return;
      const frame = JSON.parse(text) as { seq: number; data: string };
      const bytes = Buffer.from(frame.data, 'base64');
      this.snapshots++;
      this.lastSeq = frame.seq;
      this.onSnapshot?.(bytes, frame.seq, data.length);
    });
  }

  /** As the reference client sends: small frames uncompressed. */
  send(frame: object): void {
    const text = JSON.stringify(frame);
    this.ws.send(text, { compress: text.length >= CLIENT_DEFLATE_MIN_BYTES });
  }

  /** Bytes read from the network so far (the wire, after compression). */
  get wireBytesRead(): number {
    return (this.ws as unknown as { _socket?: { bytesRead: number } })._socket?.bytesRead ?? 0;
  }

  close(): Promise<void> {
    this.ws.terminate();
    return this.closed;
  }
}

/** A bare `tmux -C` client on the bench tmux: raw stdout, commands written on stdin. */
export class BareControlReader {
  readonly child: ChildProcessWithoutNullStreams;
  onData: ((bytes: Buffer) => void) | null = null;
  readonly exited: Promise<void>;

  constructor(tmux: BenchTmux, session: string) {
    this.child = spawn('tmux', ['-S', tmux.socket, '-C', 'attach-session', '-t', `=${session}`], { stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stdout.on('data', (d: Buffer) => this.onData?.(d));
    this.child.stderr.resume();
    this.exited = new Promise((r) => this.child.once('exit', () => r()));
  }

  command(line: string): void {
    this.child.stdin.write(`${line}\n`);
  }

  async close(): Promise<void> {
    this.child.stdin.end();
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 2000);
    await this.exited;
    clearTimeout(timer);
  }
}

/** A detached session on the bench tmux that tether does not know about (the baseline's pane). */
export async function baselineSession(tmux: BenchTmux, name: string): Promise<void> {
  // history-limit applies to panes made after it is set: the same 10000 lines tether gives its panes.
  await tmux.tmux('set-option', '-g', 'history-limit', '10000');
  await tmux.tmux('new-session', '-d', '-s', name, '-x', '120', '-y', '40', '/bin/sh');
}

/** Daemons started and not yet stopped: a bench interrupted (Ctrl-C, a timeout's SIGTERM) stops them on its way out. */
const running = new Map<BenchDaemon, () => void>();
let exitHooked = false;

function stopOnInterrupt(bd: BenchDaemon, dir: string): void {
  running.set(bd, () => {
    bd.child.kill('SIGKILL');
    spawnSync('tmux', ['-S', bd.tmux.socket, 'kill-server'], { stdio: 'ignore', timeout: 5000 });
    rmSync(dir, { recursive: true, force: true });
  });
  if (exitHooked) return;
  exitHooked = true;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      for (const stop of running.values()) stop();
      process.exit(130);
    });
  }
}

/** Runs `fn` with a benchmark daemon, stopping it whatever happens. */
export async function withBenchDaemon<T>(
  defaultSession: string,
  fn: (bd: BenchDaemon) => Promise<T>,
  extraToml = '',
  tls = benchWantsTls(),
  nodeArgs: readonly string[] = DAEMON_NODE_ARGS,
  extraEnv: NodeJS.ProcessEnv = {},
): Promise<T> {
  const bd = await benchDaemon(defaultSession, extraToml, tls, nodeArgs, extraEnv);
  try {
    return await fn(bd);
  } finally {
    await bd.stop();
  }
}

/** `<a> / <b>` formatted as a ratio. */
export const ratio = (a: number, b: number, digits = 2): string => `${(a / b).toFixed(digits)}x`;
