/**
 * How a daemon process is started by tether's own launchers (`npm start`, the pi extension,
 * `tether restart`, the test and bench helpers): node's flags for a long-lived, mostly idle
 * server, and the detached start the pi extension and `tether restart` share.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { RUN_DIR_NAMES } from './data-layout.js';

/**
 * V8's young generation grows to 16 MB semi-spaces by default and keeps them: a third of an
 * idle daemon's memory. Two are plenty for tether's short-lived garbage (chunk frames, JSON
 * frames); measured, the resident size at 10 idle sessions goes from ~110 MB to ~85 MB with
 * no loss in the 100 MB flood (docs/benchmarks.md). The flag only works at start (V8 sizes
 * the heap then), so it is an argument, not something the daemon can set on itself.
 */
export const DAEMON_NODE_ARGS: readonly string[] = ['--max-semi-space-size=2'];

/**
 * The environment tether's launchers add for the daemon (a value the user set wins): glibc's
 * malloc with a fixed mmap threshold. By default glibc raises the threshold each time a large
 * buffer it mapped is freed (up to 32 MiB), so after the daemon's first large buffer (a snapshot's
 * capture, a flood's batch) every buffer below that size came from the heap, and the heap, broken
 * up by the small buffers that outlive their neighbours, was never given back: the daemon's
 * resident size rose about 100 MB an hour under #47's probe while what was live stayed flat.
 * Fixed at glibc's own starting value (128 KiB), a large buffer is mapped and unmapped on its own
 * and the heap stays the size of what is live (docs/benchmarks.md "Days without a restart").
 * Read by glibc when the process starts, so it is set by whatever starts the daemon; other C
 * libraries ignore it. The tmux server a daemon starts inherits it.
 */
export const DAEMON_ENV: Readonly<Record<string, string>> = { MALLOC_MMAP_THRESHOLD_: '131072' };

/** The file under the run dir that takes a detached daemon's stdout and stderr. */
export const DAEMON_OUT_FILE = RUN_DIR_NAMES.daemonOut;
/** Largest `serve.out` kept at a start; a larger one is emptied first (it holds start-up lines only). */
export const MAX_DAEMON_OUT_BYTES = 64 * 1024;
/**
 * The `tether serve` option that keeps log lines off stderr: a detached daemon's stderr is a
 * file, and the log file already has every line.
 */
export const NO_STDERR_LOG_FLAG = '--no-log-stderr';

/**
 * Starts `tether serve` detached (its own session, not waited for), the way tether's launchers
 * do. Nothing ties tmux to it: a tmux server it starts leads a session of its own, so killing
 * the daemon or its whole process group leaves tmux and the agents (docs/service.md). It starts
 * so: `node` with `DAEMON_NODE_ARGS`, the CLI at `cli`, in `cwd`, with `env` minus the tmux
 * variables (the daemon finds its server by its config) and with `DAEMON_ENV` where `env` does
 * not say. Its stdout (the URL line) and stderr (a refusal, a crash) go to `<runDir>/serve.out`
 * (0600); log lines go only to the log file.
 */
export function spawnDetachedDaemon(opts: { node: string; cli: string; runDir: string; cwd: string; env: NodeJS.ProcessEnv }): {
  child: ChildProcess;
  outFile: string;
} {
  const outFile = join(opts.runDir, DAEMON_OUT_FILE);
  let out: number | 'ignore' = 'ignore';
  try {
    mkdirSync(opts.runDir, { recursive: true, mode: 0o700 });
    let big = false;
    try {
      big = statSync(outFile).size > MAX_DAEMON_OUT_BYTES;
    } catch {
      // No file yet.
    }
    out = openSync(outFile, big ? 'w' : 'a', 0o600);
  } catch {
    // The run dir cannot be made: the output goes nowhere, the daemon's log file still has its lines.
  }
  const env = { ...DAEMON_ENV, ...opts.env };
  delete env.TMUX;
  delete env.TMUX_PANE;
  try {
    const child = spawn(opts.node, [...DAEMON_NODE_ARGS, opts.cli, 'serve', NO_STDERR_LOG_FLAG], {
      cwd: opts.cwd,
      env,
      detached: true,
      stdio: ['ignore', out, out],
    });
    child.unref();
    return { child, outFile };
  } finally {
    if (typeof out === 'number') closeSync(out);
  }
}

/** The last line of a detached daemon's output (what it said when it failed), at most `max` characters. */
export function lastOutputLine(outFile: string, max = 300): string {
  try {
    return (readFileSync(outFile, 'utf8').trim().split('\n').pop() ?? '').slice(-max);
  } catch {
    return '';
  }
}
