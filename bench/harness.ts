/**
 * What every daemon benchmark starts: a real daemon (the built CLI, `tether serve`) on a private
 * tmux server, plain http or TLS as the bench config says, stopped whatever happens (a bench
 * interrupted stops its daemons on its way out). The figures are figures.ts's, the processes'
 * costs procs.ts's, the raw stream client raw-stream.ts's, the bare tmux side bare-tmux.ts's.
 *
 * Only processes started here are ever signalled; the tmux server lives on a socket in a temp
 * dir and is killed through it.
 */
import { execFile, spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { ClientOptions } from 'ws';
import { DAEMON_ENV, DAEMON_NODE_ARGS } from '../src/config/daemon-process.js';
import { CLI } from '../testkit/built-cli.js';
import { waitFor } from './figures.js';

/**
 * node's flags for the daemon: `byDefault` (tether's launchers' own, unless a bench starts it as
 * a user does, and a bench's own such as a probe's `--import`), with the launchers' own replaced
 * by `TETHER_BENCH_DAEMON_NODE_ARGS` ("none" for none) to compare.
 */
function daemonNodeArgs(byDefault: readonly string[] = DAEMON_NODE_ARGS): readonly string[] {
  const v = process.env.TETHER_BENCH_DAEMON_NODE_ARGS;
  if (v === undefined) return byDefault;
  const own = byDefault.filter((a) => !DAEMON_NODE_ARGS.includes(a));
  return [...(v === 'none' ? [] : v.split(' ').filter(Boolean)), ...own];
}

const run = promisify(execFile);

/** Whether the bench config asks for TLS (`TETHER_BENCH_TLS=1`). */
/**
 * One request to a daemon at `base` (its self-signed certificate taken) with the bearer `token`,
 * answered with its status and text.
 */
export function daemonRequest(
  base: string,
  token: string,
  method: string,
  path: string,
  body?: { readonly type: string; readonly data: Buffer },
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const url = new URL(path, base);
    const req = (url.protocol === 'https:' ? https : http).request(
      url,
      {
        method,
        rejectUnauthorized: false,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body ? { 'content-type': body.type, 'content-length': body.data.length } : {}),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', reject);
    req.end(body?.data);
  });
}

/** The CLI the benchmarks run: the build in dist/, or `TETHER_BENCH_CLI` (a copy a rebuild during a long run leaves alone). */
export const benchCli = (): string => process.env.TETHER_BENCH_CLI ?? CLI;

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
 * `TETHER_BENCH_CLI=<path>` runs another build of the CLI (a copy of dist/ that a rebuild during a
 * long run leaves alone).
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
    ...DAEMON_ENV,
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
    [...daemonNodeArgs(nodeArgs), ...(prof ? ['--cpu-prof', `--cpu-prof-dir=${prof}`] : []), benchCli(), 'serve'],
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
      let out: string | null = '';
      const timer = setTimeout(() => reject(new Error(`tether serve printed no URL in 30 s; stderr:\n${stderr}`)), 30_000);
      void exited.then(() => reject(new Error(`tether serve exited before listening; stderr:\n${stderr}`)));
      // TETHER_BENCH_DAEMON_STDOUT=<file>: what the daemon prints, kept (node's --trace-gc, say);
      // its address is the first line that is one.
      const keep = process.env.TETHER_BENCH_DAEMON_STDOUT;
      child.stdout.on('data', (d: Buffer) => {
        if (keep) appendFileSync(keep, d);
        if (out === null) return;
        out += d.toString();
        // Whole lines only: a chunk may end inside the address.
        const line = out
          .split('\n')
          .slice(0, -1)
          .find((l) => /^https?:\/\//.test(l));
        if (line === undefined) return;
        out = null;
        clearTimeout(timer);
        resolve(new URL(line));
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
    daemonRequest(
      daemon.base,
      daemon.token,
      method,
      path,
      body === undefined ? undefined : { type: 'application/json', data: Buffer.from(JSON.stringify(body)) },
    );
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
