/**
 * git as a program: one child process per call, argv only, never a shell (docs/api.md
 * "Worktrees and changes" says what tether asks of git).
 *
 * Invariants:
 * - The user's `GIT_*` environment never reaches git (a `GIT_DIR` or `GIT_INDEX_FILE` of the
 *   daemon's own environment would point every call at another repository); only what the caller
 *   sets here does. Locks git can skip are skipped (`GIT_OPTIONAL_LOCKS=0`): reading a tree never
 *   competes with the agent's own git commands for `index.lock`.
 * - Paths print as they are (`core.quotepath=off`); output past `maxBytes` is cut off (the child
 *   is ended and the result says `truncated`), and a call past its timeout is ended and refused.
 * - A non-zero exit is an answer, not a throw: callers read `code` and `stderr` (git says "no" in
 *   many ways that are facts, such as "not a repository"). Only git that cannot run, or runs too
 *   long, throws (`git-unavailable`).
 */
import { spawn } from 'node:child_process';
import { DomainError } from '../errors.js';

/** The output one git call may hand back by default. */
export const GIT_MAX_OUTPUT_BYTES = 8 * 1024 * 1024;
/** How long one git call may take by default. */
export const GIT_TIMEOUT_MS = 20_000;
/** How much of git's stderr is kept. */
const STDERR_KEEP_BYTES = 16 * 1024;

export interface GitOptions {
  /** Most bytes of stdout kept; the child is ended past it. */
  readonly maxBytes?: number;
  readonly timeoutMs?: number;
  /** Written to git's stdin (a path list), then closed. */
  readonly input?: Buffer | string;
  /** Environment git gets besides the cleaned one (`GIT_INDEX_FILE` of a scratch index). */
  readonly env?: Readonly<Record<string, string>>;
}

export interface GitResult {
  /** The exit code (0: success); null when git was ended for its output size. */
  readonly code: number | null;
  readonly stdout: Buffer;
  /** git's stderr, trimmed, at most 16 KiB. */
  readonly stderr: string;
  /** stdout passed `maxBytes`: what is here is its beginning. */
  readonly truncated: boolean;
}

/** The daemon's environment without anything git reads as a repository setting. */
function gitEnv(extra: Readonly<Record<string, string>>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('GIT_') && v !== undefined) env[k] = v;
  return { ...env, GIT_OPTIONAL_LOCKS: '0', GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C', LANGUAGE: '', ...extra };
}

/** Runs `git -c core.quotepath=off <args>` in `dir`. */
export function runGit(dir: string, args: readonly string[], opts: GitOptions = {}): Promise<GitResult> {
  const maxBytes = opts.maxBytes ?? GIT_MAX_OUTPUT_BYTES;
  const timeoutMs = opts.timeoutMs ?? GIT_TIMEOUT_MS;
  const what = args.find((a) => !a.startsWith('-')) ?? 'git';
  return new Promise((resolve, reject) => {
    const child = spawn('git', ['-c', 'core.quotepath=off', ...args], {
      cwd: dir,
      env: gitEnv(opts.env ?? {}),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    let outBytes = 0;
    let truncated = false;
    const err: Buffer[] = [];
    let errBytes = 0;
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.stdout.on('data', (chunk: Buffer) => {
      if (truncated) return;
      const room = maxBytes - outBytes;
      if (chunk.length > room) {
        out.push(chunk.subarray(0, room));
        outBytes = maxBytes;
        truncated = true;
        child.kill('SIGKILL');
        return;
      }
      out.push(chunk);
      outBytes += chunk.length;
    });
    child.stderr.on('data', (chunk: Buffer) => {
      if (errBytes >= STDERR_KEEP_BYTES) return;
      err.push(chunk);
      errBytes += chunk.length;
    });
    child.stdin.on('error', () => undefined); // git may exit before it reads its input
    child.stdin.end(opts.input ?? '');
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(new DomainError('git-unavailable', `git could not be run: ${e.message}`, { cause: e }));
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      if (timedOut && !truncated) {
        reject(new DomainError('git-unavailable', `git ${what} took longer than ${Math.round(timeoutMs / 1000)} s and was stopped`));
        return;
      }
      resolve({
        code: truncated ? null : code,
        stdout: Buffer.concat(out, outBytes),
        stderr: Buffer.concat(err).toString('utf8').slice(0, STDERR_KEEP_BYTES).trim(),
        truncated,
      });
    });
  });
}

/** Runs git and answers its stdout; a non-zero exit is `git-unavailable` with git's first line of complaint. */
export async function gitOutput(dir: string, args: readonly string[], opts: GitOptions = {}): Promise<Buffer> {
  const result = await runGit(dir, args, opts);
  if (result.code !== 0 && !result.truncated) throw gitFailed(args, result);
  return result.stdout;
}

/** A git call that failed where it should not have: what git said, first line. */
export function gitFailed(args: readonly string[], result: GitResult): DomainError {
  const what = args.find((a) => !a.startsWith('-')) ?? 'git';
  const said = result.stderr.split('\n')[0] ?? '';
  return new DomainError('git-unavailable', `git ${what} failed${said !== '' ? `: ${said.replace(/^(fatal|error): /, '')}` : ''}`);
}

/** The text of NUL-separated output, as fields (the last, empty one dropped). */
export function nulFields(out: Buffer): string[] {
  const text = out.toString('utf8');
  const fields = text.split('\0');
  if (fields[fields.length - 1] === '') fields.pop();
  return fields;
}
