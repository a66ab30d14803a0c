/**
 * `npm test`: every check of the project, side by side where nothing orders them
 * (docs/testing.md "Time").
 *
 * The static checks (typecheck and lint, format, the import layers, dead code (knip), the
 * charts) need nothing of one another or of the build. The tests need the built daemon, and a
 * third of them the real agents. So the build and the agents' install start together with the
 * static checks, and vitest starts as soon as the build is done, while the install and the
 * static checks may still run: they are mostly CPU and disk, the tests mostly wait on tmux and
 * daemons. The test files that need the agents wait at their import until the install is done
 * (testkit/agent-bins.ts), and start after enough others to fill that wait (test/sequencer.ts).
 * Until vitest starts the checks run at the normal priority. While the tests run the checks still running step back to a
 * lower priority (`nice`, every thread of them, Linux): a test waiting on a daemon gets the CPU
 * the moment it needs it, and the checks take what the tests leave. Once vitest is done they get
 * the normal priority back: niced beside other busy work, they would get almost none of the CPU
 * and trail the tests by minutes (docs/testing.md "Time").
 *
 * The typecheck and the lint are one step on one TypeScript program (scripts/typecheck-lint.ts):
 * the lint's type-aware rules reuse the types the typecheck worked out.
 *
 * The build here is `npm run build:emit`: esbuild's emit alone (scripts/bundle.ts), without
 * `npm run build`'s tsc check, since the typecheck step checks the same files with the same
 * options (a type error fails `npm test` there).
 *
 * vitest prints as it goes. Every other step's output is kept and printed whole, under the
 * step's name, if it fails: at once while vitest has not started, else after vitest is done,
 * so that no two outputs interleave. Arguments go to vitest (`npm test -- test/unit`). The
 * exit code is 0 only when every step passed.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { setPriority, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AGENTS_PENDING_VAR } from '../testkit/agent-bins.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';

interface Result {
  readonly name: string;
  readonly ok: boolean;
  readonly seconds: number;
  readonly output: string;
}

/** How much lower the static checks' priority is than the build's and the tests'. */
const CHECKS_NICENESS = 10;

interface StepOptions {
  /** Shown live instead of kept (vitest). */
  readonly live?: boolean;
  /** Variables added to the step's environment. */
  readonly env?: Readonly<Record<string, string>>;
}

/** A step started: its process (for a change of priority) and its result once it has ended. */
interface Running {
  readonly pid: number | undefined;
  readonly result: Promise<Result>;
  /** Whether its process has ended (its pid may then be another's). */
  readonly ended: () => boolean;
}

/**
 * Gives every thread of a process and of all its descendants the niceness `niceness`; false when
 * one of them could not be changed. Linux only (it walks /proc): a priority belongs to a thread
 * there, and the checks' node processes run helper threads (the garbage collector's, libuv's)
 * that `renice -p` of the process alone would leave niced. Raising a priority takes root (or
 * CAP_SYS_NICE, or an RLIMIT_NICE that allows it); without it the checks stay niced.
 */
function setTreePriority(pid: number, niceness: number): boolean {
  let ok = true;
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return true; // it has ended meanwhile
  }
  for (const tid of tids) {
    try {
      setPriority(Number(tid), niceness);
    } catch (err) {
      // node's SystemError: the errno's name is in `info`; ESRCH is a thread that has ended.
      if ((err as { info?: { code?: string } }).info?.code !== 'ESRCH') ok = false;
    }
    let children = '';
    try {
      children = readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8');
    } catch {
      // the thread has ended meanwhile
    }
    for (const child of children.split(' ').filter((c) => c !== '')) ok = setTreePriority(Number(child), niceness) && ok;
  }
  return ok;
}

/** Runs `npm run <script> [-- args]`, its output kept (or shown live). */
function step(name: string, script: string, args: readonly string[] = [], opts: StepOptions = {}): Running {
  const started = performance.now();
  const argv = ['run', '--silent', script, ...(args.length > 0 ? ['--', ...args] : [])];
  const child = spawn(NPM, argv, {
    cwd: ROOT,
    env: { ...process.env, ...opts.env },
    stdio: opts.live === true ? 'inherit' : ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let ended = false;
  child.on('exit', () => (ended = true));
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  const result = new Promise<Result>((resolve) => {
    child.on('error', (err) =>
      resolve({ name, ok: false, seconds: (performance.now() - started) / 1000, output: `${output}${err.message}\n` }),
    );
    child.on('close', (code, signal) =>
      resolve({
        name,
        ok: code === 0,
        seconds: (performance.now() - started) / 1000,
        output: code === 0 ? output : `${output}\n(${name}: npm run ${script} ended with ${signal ?? `exit code ${code}`})\n`,
      }),
    );
  });
  return { pid: child.pid, result, ended: () => ended };
}

function report(r: Result): void {
  process.stdout.write(`\n===== ${r.name} failed (${r.seconds.toFixed(1)} s) =====\n${r.output.trimEnd()}\n===== end of ${r.name} =====\n`);
}

async function main(): Promise<number> {
  const started = performance.now();
  const vitestArgs = process.argv.slice(2);
  let vitestRunning = false;
  const held: Result[] = [];
  /** A failed step is shown at once unless vitest prints now; then after it. */
  const settle = (r: Result): Result => {
    if (!r.ok) {
      if (vitestRunning) held.push(r);
      else report(r);
    }
    return r;
  };
  const running = [
    step('typecheck + lint', 'typecheck:lint'),
    step('format', 'format:check'),
    step('deps', 'deps'),
    step('knip', 'knip'),
    step('charts', 'charts', ['--check']),
  ];
  const checks = running.map((r) => r.result.then(settle));
  // The agents' install says where it stands in a file the tests that need the agents wait on
  // (testkit/agent-bins.ts): `installing`, gone once it succeeded, why once it failed.
  const pendingDir = mkdtempSync(join(tmpdir(), 'tether-agents-'));
  const pending = join(pendingDir, 'pending');
  writeFileSync(pending, 'installing');
  let agentsDone = false;
  const agentsResult = step('agents', 'test:agents')
    .result.then(settle)
    .then((r) => {
      agentsDone = true;
      if (r.ok) rmSync(pendingDir, { recursive: true, force: true });
      else writeFileSync(pending, `npm run test:agents failed after ${r.seconds.toFixed(0)} s`);
      return r;
    });
  const build = await step('build', 'build:emit').result.then(settle);
  const results: Result[] = [build];
  if (build.ok) {
    // The tests start: the checks still running step back (lowering a priority needs no right).
    const linux = process.platform === 'linux';
    for (const r of running) if (linux && !r.ended() && r.pid !== undefined) setTreePriority(r.pid, CHECKS_NICENESS);
    vitestRunning = true;
    // Started beside the install when it is still under way: the files that need no agent go first.
    const env: Record<string, string> = agentsDone ? {} : { [AGENTS_PENDING_VAR]: pending };
    results.push(await step('vitest', 'test:vitest', vitestArgs, { live: true, env }).result);
    vitestRunning = false;
  } else {
    process.stdout.write('\nnpm test: vitest not run (the build failed above)\n');
  }
  results.splice(1, 0, await agentsResult);
  rmSync(pendingDir, { recursive: true, force: true });
  // Nothing of the suite runs beside the checks now: they take the CPU at the normal priority.
  const linux = process.platform === 'linux';
  const raised = running.filter((r) => linux && !r.ended() && r.pid !== undefined).map((r) => setTreePriority(r.pid ?? 0, 0));
  if (raised.includes(false)) process.stdout.write('\nnpm test: the static checks stay niced (raising a priority takes root)\n');
  results.push(...(await Promise.all(checks)));
  for (const r of held) report(r);
  const failed = results.filter((r) => !r.ok);
  const line = results.map((r) => `${r.name} ${r.ok ? 'ok' : 'FAILED'} ${r.seconds.toFixed(1)} s`).join(', ');
  process.stdout.write(`\nnpm test: ${line}; ${((performance.now() - started) / 1000).toFixed(1)} s in all\n`);
  if (failed.length > 0) process.stdout.write(`npm test: FAILED: ${failed.map((r) => r.name).join(', ')}\n`);
  return failed.length > 0 ? 1 : 0;
}

process.exitCode = await main();
