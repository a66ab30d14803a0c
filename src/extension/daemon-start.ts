/**
 * For `pi --tether` started by a person in their own tmux: make the session a tether session
 * (`markPaneSession`, src/tmux/layout.ts: the same marking as an agent that registers) so the
 * daemon adopts it at boot, and start the daemon (`tether serve`, detached) when none is running.
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
import { PANE_ID_RE, markPaneSession, panePlaceCommand, parsePanePlace } from '../tmux/layout.js';

const run = promisify(execFile);
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
  if (!pane || !PANE_ID_RE.test(pane) || !socket) return null;
  return { pane, socket };
}

/**
 * Marks the pane's session as a tether session unless it is one. Resolves with the session
 * name, or throws with a sentence for the person.
 */
export async function markSession(pane: string): Promise<string> {
  const tmux = (command: readonly string[]) => run('tmux', command, { timeout: TMUX_TIMEOUT_MS });
  const place = parsePanePlace((await tmux(panePlaceCommand(pane))).stdout);
  const where = await markPaneSession(place, tmux, new Date().toISOString());
  if ('refused' in where) throw new Error(where.refused);
  return where.session;
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
