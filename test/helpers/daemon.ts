/**
 * A real tether daemon for a test: the built CLI (`dist/cli/main.js serve`) as a child
 * process with its own data dir and config, bound to 127.0.0.1 on a random port, talking to a
 * private tmux server. Only processes started here are ever signalled.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DAEMON_ENV, DAEMON_NODE_ARGS } from '../../src/config/daemon-process.js';
import { CLI } from '../../testkit/built-cli.js';

// Shared with the benchmarks (testkit/); re-exported so a test imports its daemon helpers from one place.
export { CLI, ROOT } from '../../testkit/built-cli.js';
export { freePort } from '../../testkit/ports.js';

export interface DaemonHome {
  readonly dir: string;
  readonly dataDir: string;
  readonly configFile: string;
  readonly env: NodeJS.ProcessEnv;
  cleanup(): void;
}

/** A temp home: data dir and a config file (TOML text given, defaults suited to tests). */
export function daemonHome(socket: string, toml = '', extraEnv: NodeJS.ProcessEnv = {}): DaemonHome {
  const dir = mkdtempSync(join(tmpdir(), 'tether-home-'));
  const dataDir = join(dir, 'data');
  mkdirSync(dataDir, { recursive: true });
  const configFile = join(dir, 'config.toml');
  // Tests serve plain http unless their TOML says otherwise (the pairing tests turn TLS on).
  const base = `${/^bindAddress\s*=/m.test(toml) ? '' : 'bindAddress = "127.0.0.1:0"\n'}${/^tls\s*=/m.test(toml) ? '' : 'tls = false\n'}`;
  const hasTmux = /^\[tmux\]/m.test(toml);
  writeFileSync(configFile, base + toml + (hasTmux ? '' : `\n[tmux]\nsocket = ${JSON.stringify(socket)}\n`));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    TETHER_CONFIG: configFile,
    TETHER_DATA_DIR: dataDir,
    TETHER_LOG_LEVEL: 'debug',
    PI_OFFLINE: '1',
    TMUX: '',
    ...extraEnv,
  };
  delete env.TMUX;
  return { dir, dataDir, configFile, env, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** What every test daemon offers, built (a child process) or in this process. */
export interface TestDaemon {
  readonly url: URL;
  readonly token: string;
  readonly base: string;
  stderr(): string;
  /** fetch with the token in the Authorization header. */
  get(path: string, init?: RequestInit): Promise<Response>;
  /** A clean stop (SIGTERM for a child), waited for. */
  stop(): Promise<unknown>;
  /** SIGKILL and wait (a daemon in this process can only be stopped). */
  kill(): Promise<void>;
}

/**
 * The daemon's last `n` log lines of every level, for a failure message: request lines left out,
 * but for a refused one (a 404 for a session a test had just seen listed once told the story).
 */
export function logTailOf(d: TestDaemon, n = 60): string {
  return d
    .stderr()
    .split('\n')
    .filter((l) => !l.includes('"reqId"') || /"statusCode":[45]\d\d/.test(l))
    .slice(-n)
    .join('\n');
}

/** `p`, or its failure with the tail of the daemon's log added (what a failing test prints). */
export async function explainedBy<T>(d: TestDaemon, p: Promise<T>, lines = 60): Promise<T> {
  try {
    return await p;
  } catch (err) {
    throw new Error(`${(err as Error).message}\n--- daemon log (tail) ---\n${logTailOf(d, lines)}`, { cause: err });
  }
}

/** The daemon's last `n` warning and error log lines, for a failure message that says what it said. */
export function warningsOf(d: TestDaemon, n = 10): string {
  return d
    .stderr()
    .split('\n')
    .filter((l) => /"level":[45]0/.test(l))
    .slice(-n)
    .join('\n');
}

/** The built daemon (`tether serve`) as a child process. */
export interface RunningTestDaemon extends TestDaemon {
  readonly child: ChildProcessWithoutNullStreams;
  /** SIGTERM and wait for the exit code. */
  stop(): Promise<number | null>;
}

/**
 * A program that runs node in another setting: `['ip', 'netns', 'exec', ns]` runs it in a network
 * namespace. The program must exec node (so that its pid is node's), as `ip netns exec` does.
 */
export type Wrap = readonly string[];

/** [file, args] for node with `args`, under `wrap` when given. */
function nodeCommand(args: readonly string[], wrap: Wrap): [string, string[]] {
  return wrap.length === 0 ? [process.execPath, [...args]] : [wrap[0]!, [...wrap.slice(1), process.execPath, ...args]];
}

/** Runs a tether CLI command to completion (in `cwd` when given): exit code, stdout, stderr. */
export function runCli(
  args: string[],
  env: NodeJS.ProcessEnv,
  timeoutMs = 45_000,
  wrap: Wrap = [],
  cwd?: string,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  ensureBuilt();
  return new Promise((resolvePromise, reject) => {
    const child = spawn(...nodeCommand([CLI, ...args], wrap), { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`tether ${args.join(' ')} did not finish in ${timeoutMs} ms: ${stderr}`));
    }, timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolvePromise({ code, stdout, stderr });
    });
  });
}

function ensureBuilt(): void {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run "npm run build" first (npm test does)`);
}

/** Starts `tether serve` and resolves once it printed its URL line. */
export function startDaemon(home: DaemonHome, timeoutMs = 45_000, wrap: Wrap = []): Promise<RunningTestDaemon> {
  ensureBuilt();
  const child = spawn(...nodeCommand([...DAEMON_NODE_ARGS, CLI, 'serve'], wrap), {
    env: { ...DAEMON_ENV, ...home.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  return new Promise((resolvePromise, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`tether serve printed no URL in ${timeoutMs} ms; stderr:\n${err}`));
    }, timeoutMs);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`tether serve exited with ${code} before listening; stderr:\n${err}`));
    });
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const nl = out.indexOf('\n');
      if (nl < 0) return;
      clearTimeout(timer);
      const url = new URL(out.slice(0, nl));
      const token = url.searchParams.get('token') ?? '';
      const base = `${url.protocol}//${url.host}`;
      resolvePromise({
        child,
        url,
        token,
        base,
        stderr: () => err,
        get: (path, init = {}) => fetch(base + path, { ...init, headers: { authorization: `Bearer ${token}`, ...(init.headers ?? {}) } }),
        stop: async () => {
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
          return exited;
        },
        kill: async () => {
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
          await exited;
        },
      });
    });
  });
}
