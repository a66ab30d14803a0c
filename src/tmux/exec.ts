/**
 * tmux as a command-line program: one `execFile` per command (list), argv only, never a shell.
 * Server-level work (create, list, kill, options) goes here, because a control-mode client
 * cannot exist without a session.
 *
 * Invariant: every argument passes `escapeArgvArg`, so data can never end a command; error
 * messages name the tmux command, never its data arguments.
 */
import { execFile, type ExecFileException } from 'node:child_process';
import { DomainError } from '../errors.js';
import { escapeArgvArg } from './quote.js';
import { isLauncherFailure } from './server-scope.js';
import type { TmuxTarget } from './target.js';
import { makesNotifications, topologyGate } from './topology-gate.js';

/** Most bytes a command may print: a 10000-line capture with escapes fits many times over. */
export const TMUX_MAX_OUTPUT_BYTES = 64 * 1024 * 1024;
/** How long one tmux invocation may take before it is killed. */
export const TMUX_DEFAULT_TIMEOUT_MS = 10_000;
/** How much of tmux's stderr an error keeps. */
const STDERR_KEEP_CHARS = 2048;

/**
 * A tmux invocation that failed: non-zero exit, killed, timed out, or not runnable at all.
 * Internal (a client never sees it as itself), and kept apart from DomainError because it is
 * the record of a process's end that callers act on: `isNoServerError` and its kin read its
 * stderr, and the launcher fallback retries on `launcherFailed`.
 */
export class TmuxCommandError extends Error {
  /** The tmux command name(s), e.g. `kill-session` or `new-session; set-option`. */
  readonly command: string;
  /** The exit code; null when tmux was killed or never ran. */
  readonly exitCode: number | null;
  readonly signal: string | null;
  readonly timedOut: boolean;
  /** What tmux wrote on stderr (trimmed, bounded). */
  readonly stderr: string;
  /** The command ran through a launcher (systemd-run) that failed before tmux ran. */
  launcherFailed = false;
  constructor(opts: { command: string; exitCode: number | null; signal: string | null; timedOut: boolean; stderr: string; why?: string }) {
    const detail = opts.stderr !== '' ? opts.stderr.split('\n')[0] : (opts.why ?? `exit code ${String(opts.exitCode)}`);
    super(`tmux ${opts.command} failed: ${detail}`);
    this.name = 'TmuxCommandError';
    this.command = opts.command;
    this.exitCode = opts.exitCode;
    this.signal = opts.signal;
    this.timedOut = opts.timedOut;
    this.stderr = opts.stderr;
  }
}

export interface TmuxRunOptions {
  readonly timeoutMs?: number;
}

export interface TmuxOutput {
  readonly stdout: Buffer;
  readonly stderr: string;
}

/** The tmux commands that start a server when none runs on the socket. */
const SERVER_STARTING = new Set(['new-session', 'new', 'start-server', 'start']);

export interface TmuxCliOptions {
  /**
   * The argv run before tmux for a command list that may start the server (src/tmux/server-scope.ts:
   * `systemd-run --user --scope ...`), so the server does not live in the daemon's service.
   */
  readonly serverLauncher?: () => string[];
  /** Told when the launcher itself failed: the command then ran without it. */
  readonly onLauncherFailed?: (why: string) => void;
}

/** Runs tmux against one server (`target`). */
export class TmuxCli {
  constructor(
    readonly target: TmuxTarget,
    private readonly opts: TmuxCliOptions = {},
  ) {}

  /** Runs one tmux command (`args[0]` is its name); rejects with `TmuxCommandError`. */
  run(args: readonly string[], opts: TmuxRunOptions = {}): Promise<TmuxOutput> {
    return this.runList([args], opts);
  }

  /**
   * Runs several commands in ONE tmux invocation, joined by `;` argv elements: the server runs
   * them back to back (no other client's command in between) and stops at the first failure.
   */
  runList(commands: readonly (readonly string[])[], opts: TmuxRunOptions = {}): Promise<TmuxOutput> {
    // Commands that notify control clients wait for tether's own attaches (see topology-gate.ts).
    if (makesNotifications(commands)) return topologyGate(this.target).write(() => this.exec(commands, opts));
    return this.exec(commands, opts);
  }

  private async exec(commands: readonly (readonly string[])[], opts: TmuxRunOptions): Promise<TmuxOutput> {
    const argv: string[] = ['-u', ...this.target.socketArgs];
    commands.forEach((cmd, i) => {
      if (i > 0) argv.push(';');
      for (const arg of cmd) argv.push(escapeArgvArg(arg));
    });
    const command = commands.map((c) => c[0] ?? '').join('; ');
    const launcher = this.opts.serverLauncher;
    if (launcher && commands.some((c) => SERVER_STARTING.has(c[0] ?? ''))) {
      const [file, ...prefix] = launcher();
      try {
        return await this.spawn(file!, [...prefix, this.target.bin, ...argv], command, opts);
      } catch (err) {
        // systemd-run failed before tmux ran (nothing happened): run tmux as it is.
        if (!(err instanceof TmuxCommandError && err.launcherFailed)) throw err;
        this.opts.onLauncherFailed?.(err.stderr !== '' ? (err.stderr.split('\n')[0] ?? '') : `${file!} could not be run`);
      }
    }
    return this.spawn(this.target.bin, argv, command, opts);
  }

  private spawn(file: string, argv: string[], command: string, opts: TmuxRunOptions): Promise<TmuxOutput> {
    const timeout = opts.timeoutMs ?? TMUX_DEFAULT_TIMEOUT_MS;
    const wrapped = file !== this.target.bin;
    return new Promise((resolve, reject) => {
      execFile(
        file,
        argv,
        { encoding: 'buffer', maxBuffer: TMUX_MAX_OUTPUT_BYTES, timeout, killSignal: 'SIGKILL', windowsHide: true },
        (err, stdout, stderrBuf) => {
          const stderr = stderrBuf.toString('utf8').trim().slice(0, STDERR_KEEP_CHARS);
          if (!err) {
            resolve({ stdout, stderr });
            return;
          }
          const failure = toCommandError(err, command, stderr, timeout);
          if (wrapped && isLauncherFailure(stderr, err.code)) failure.launcherFailed = true;
          reject(failure);
        },
      );
    });
  }
}

function toCommandError(err: ExecFileException, command: string, stderr: string, timeout: number): TmuxCommandError {
  const code = err.code;
  const signal = err.signal ?? null;
  const timedOut = err.killed === true && signal === 'SIGKILL';
  let why: string | undefined;
  if (timedOut) why = `no answer within ${timeout} ms`;
  else if (code === 'ERR_CHILD_PROCESS_STDIO_MAXBUFFER') why = `more than ${TMUX_MAX_OUTPUT_BYTES} bytes of output`;
  else if (typeof code === 'string') why = `tmux could not be run (${code})`;
  else if (signal !== null) why = `killed by ${signal}`;
  return new TmuxCommandError({
    command,
    exitCode: typeof code === 'number' ? code : null,
    signal,
    timedOut,
    stderr: timedOut || typeof code === 'string' ? '' : stderr,
    ...(why !== undefined ? { why } : {}),
  });
}

/** The error itself or, when it wraps one (`cause`), the tmux error underneath. */
function commandErrorOf(err: unknown): TmuxCommandError | null {
  for (let e = err, depth = 0; e instanceof Error && depth < 4; e = e.cause, depth++) {
    if (e instanceof TmuxCommandError) return e;
  }
  return null;
}

/**
 * True when tmux failed because no server runs on the socket (or the socket does not exist), or
 * because the server went away while the command talked to it (`server exited unexpectedly`: a
 * server being killed, which the next look finds gone).
 */
export function isNoServerError(err: unknown): boolean {
  const e = commandErrorOf(err);
  return e !== null && /no server running|error connecting to|No such file or directory|server exited unexpectedly/.test(e.stderr);
}

/**
 * True when the server answered but holds no session (`list-panes -a` on an empty server, which
 * is what a server still exiting after its last session went looks like).
 */
export function isEmptyServerError(err: unknown): boolean {
  const e = commandErrorOf(err);
  return e !== null && /no current target/.test(e.stderr);
}

/** True when nothing listens on the socket at all (not a refused or failed connection). */
export function isNoServerListeningError(err: unknown): boolean {
  const e = commandErrorOf(err);
  return e !== null && /no server running/.test(e.stderr);
}

/** True when the session named in a command does not exist (or a typed not-found error wraps that). */
export function isNoSessionError(err: unknown): boolean {
  if (err instanceof DomainError && err.code === 'session-not-found') return true;
  const e = commandErrorOf(err);
  return e !== null && /can't find session|no such session|session not found/.test(e.stderr);
}
