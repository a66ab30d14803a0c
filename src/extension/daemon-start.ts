/**
 * For `pi --tether` started by a person in their own tmux: make the session a tether session
 * (`@created`, and the agent's pane as the mirrored one) so the daemon adopts it at boot, and
 * start the daemon (`tether serve`, detached) when none is running.
 *
 * Invariants: tmux is run with an argv array against the server of the pane pi runs in (its
 * `$TMUX`); the daemon is started at most once per extension instance, the way `tether restart`
 * starts it (src/config/daemon-process.ts): detached, without tmux variables (it finds its
 * server by its config), its output (not its log lines) going to a file under the run dir, and
 * it outlives pi.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { lastOutputLine, spawnDetachedDaemon } from '../config/daemon-process.js';
import { isValidSessionName } from '../protocol/session-name.js';

const run = promisify(execFile);
const SEP = '\x1f';
/** How long the tmux calls may take. */
const TMUX_TIMEOUT_MS = 5000;

/** The `tether` CLI next to this extension in the installed package (dist/cli/main.js). */
export function tetherCliPath(): string {
  return fileURLToPath(new URL('../cli/main.js', import.meta.url));
}

/** Where pi runs: the pane and the tmux server's socket, or null outside tmux. */
export function tmuxPlace(env: NodeJS.ProcessEnv): { pane: string; socket: string } | null {
  const pane = env.TMUX_PANE;
  const socket = env.TMUX?.split(',')[0];
  if (!pane || !/^%\d+$/.test(pane) || !socket) return null;
  return { pane, socket };
}

/**
 * Marks the pane's session as a tether session unless it is one. Resolves with the session
 * name, or throws with a sentence for the person.
 */
export async function markSession(pane: string): Promise<string> {
  const { stdout } = await run('tmux', ['display-message', '-p', '-t', pane, `#{session_name}${SEP}#{?@created,1,0}`], {
    timeout: TMUX_TIMEOUT_MS,
  });
  const [session = '', created] = stdout.replace(/\n$/, '').split(SEP);
  if (!isValidSessionName(session)) {
    throw new Error(
      `the tmux session name "${session.slice(0, 64)}" cannot be a tether session (1-64 letters, digits, "_" or "-"): rename it with tmux rename-session`,
    );
  }
  if (created !== '1') {
    const target = `=${session}:`;
    // The value follows the option name, so a pane id or a date is never read as a flag.
    await run('tmux', ['set-option', '-t', target, '@tether-pane', pane], { timeout: TMUX_TIMEOUT_MS });
    await run('tmux', ['set-option', '-t', target, '@created', new Date().toISOString()], { timeout: TMUX_TIMEOUT_MS });
  }
  return session;
}

/** The node that runs the tether CLI (pi may itself be a compiled binary). */
function nodeBinary(): string {
  return process.versions.bun ? 'node' : process.execPath;
}

/**
 * Starts `tether serve` detached. `onFailed` is called with the end of its output when it
 * exits before `isUp()` became true.
 */
export function startDaemon(opts: {
  runDir: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
  isUp: () => boolean;
  onFailed: (why: string) => void;
}): void {
  let child: ReturnType<typeof spawnDetachedDaemon>['child'];
  let outFile: string;
  try {
    ({ child, outFile } = spawnDetachedDaemon({
      node: nodeBinary(),
      cli: tetherCliPath(),
      runDir: opts.runDir,
      cwd: opts.cwd,
      env: opts.env,
    }));
  } catch (err) {
    opts.onFailed((err as Error).message);
    return;
  }
  child.on('error', (err) => opts.onFailed(err.message));
  child.on('exit', (code) => {
    if (opts.isUp()) return;
    opts.onFailed(lastOutputLine(outFile) || `tether serve exited with ${String(code)}`);
  });
}
