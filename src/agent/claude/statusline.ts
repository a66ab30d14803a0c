/**
 * The program Claude Code runs as tether's statusLine (`node <this file>`, named in tether's
 * settings file: settings.ts), about 0.4 s after each answer and once at start-up, the status
 * JSON on stdin (docs/agents.md "Usage"). Two things at once:
 * - the usage windows of the input (`rate_limits`), when it has them, go to the daemon as a
 *   `StatusLine` hook report (the hook programs' wire; given up after about a second);
 * - the user's own statusLine command (user-statusline.ts), which tether's replaced, runs as
 *   Claude runs it: `/bin/sh -c <command>` in Claude's directory and environment, the same stdin
 *   bytes, its stdout and stderr Claude's own, its exit status this program's. A user without one
 *   gets NO_STATUS_LINE, which Claude draws as no row at all.
 *
 * Invariants: prints nothing of its own besides NO_STATUS_LINE; the user's output is never read
 * or changed (it is the same file descriptor); the report never delays the run past about a
 * second and never fails it; a signal that ends this program ends the user's command with it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { constants } from 'node:os';
import { hookReport, sendHookReport } from '../wire/hook-send.js';
import { MAX_HOOK_INPUT_BYTES } from '../wire/hook-input.js';
import { claudeStatusLineFields } from './hook-fields.js';
import { NO_STATUS_LINE, statusLineProjectDir, userStatusLine } from './user-statusline.js';

/** How long stdin may stay open: Claude writes the JSON and closes it at once. */
const INPUT_WAIT_MS = 2000;
/** The exit status of a command that could not be started, as sh gives it. */
const NOT_STARTED = 127;

let child: ChildProcess | null = null;

/** stdin up to its end (or its error, or INPUT_WAIT_MS), at most about MAX_HOOK_INPUT_BYTES. */
function readInput(): Promise<Buffer> {
  return new Promise((resolve) => {
    const parts: Buffer[] = [];
    let size = 0;
    const done = (): void => {
      clearTimeout(timer);
      resolve(Buffer.concat(parts));
    };
    const timer = setTimeout(done, INPUT_WAIT_MS);
    process.stdin.on('data', (chunk: Buffer) => {
      if (size < MAX_HOOK_INPUT_BYTES) parts.push(chunk);
      size += chunk.length;
    });
    process.stdin.on('end', done);
    process.stdin.on('error', done);
  });
}

/** Runs the user's command with `input` on its stdin and Claude's stdout and stderr; resolves to its exit status. */
function runUserCommand(command: string, input: Buffer): Promise<number> {
  return new Promise((resolve) => {
    const run = spawn('/bin/sh', ['-c', command], { stdio: ['pipe', 'inherit', 'inherit'] });
    child = run;
    run.on('error', () => resolve(NOT_STARTED));
    run.on('exit', (code, signal) => resolve(code ?? 128 + (signal !== null ? constants.signals[signal] : 0)));
    // A command that exits without reading its input closes the pipe: not an error.
    run.stdin?.on('error', () => undefined);
    run.stdin?.end(input);
  });
}

/** Prints NO_STATUS_LINE; resolves to 0 once it is written. */
function printNoStatusLine(): Promise<number> {
  return new Promise((resolve) => {
    process.stdout.write(NO_STATUS_LINE, () => resolve(0));
  });
}

async function main(): Promise<number> {
  const input = await readInput();
  let parsed: unknown = null;
  try {
    parsed = JSON.parse(input.toString('utf8'));
  } catch {
    // Not JSON: nothing to report; the user's command still gets the bytes.
  }
  const command = userStatusLine(statusLineProjectDir(parsed, process.env.CLAUDE_PROJECT_DIR ?? process.cwd()), process.env);
  const shown = command !== null ? runUserCommand(command, input) : printNoStatusLine();
  const fields = claudeStatusLineFields(parsed);
  const report = fields !== null ? hookReport('claude', fields, process.env, process.pid) : null;
  const [status] = await Promise.all([shown, report !== null ? sendHookReport(report, process.env) : Promise.resolve()]);
  return status;
}

for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
  process.on(signal, () => {
    child?.kill(signal);
    process.exit(128 + constants.signals[signal]);
  });
}
/** A fault of this program: the user's command, if started, ends it with its status; else no status line, as without tether. */
function failed(): void {
  const run = child;
  if (run === null) process.stdout.write(NO_STATUS_LINE, () => process.exit(0));
  else if (run.exitCode !== null || run.signalCode !== null) process.exit(run.exitCode ?? 1);
  else run.on('exit', (code) => process.exit(code ?? 1));
}
process.on('uncaughtException', failed);
main().then((status) => process.exit(status), failed);
