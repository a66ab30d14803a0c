/**
 * The hook programs' side of a report: one connection to the daemon's agent socket (named by
 * `TETHER_AGENT_SOCKET` in the pane's environment), one line, then wait for the daemon's
 * answer so that reports of one pane arrive in the order the agent ran its hooks.
 *
 * Invariants: never throws and never prints (an agent may act on a hook's output or exit
 * status); gives up after `timeoutMs` whatever happens; imports only `node:net`, the wire and
 * the pane-id pattern (src/tmux/layout.ts, which runs nothing).
 */
import { createConnection } from 'node:net';
import { PANE_ID_RE, parsePid } from '../../tmux/layout.js';
import { AGENT_SOCKET_ENV, HOOK_REPORT_VERSION, type HookReport } from './hook-wire.js';

/** The longest a hook program keeps its agent waiting. */
export const HOOK_TIMEOUT_MS = 1000;

/** The report for this process's pane, or null outside a pane tether can place. */
export function hookReport(
  agent: HookReport['agent'],
  fields: Record<string, string>,
  env: NodeJS.ProcessEnv,
  pid: number,
): HookReport | null {
  const pane = env.TMUX_PANE ?? '';
  const [tmuxSocket = '', serverPid = ''] = (env.TMUX ?? '').split(',');
  if (!PANE_ID_RE.test(pane) || tmuxSocket === '') return null;
  const server = parsePid(serverPid);
  return { type: 'hook', v: HOOK_REPORT_VERSION, agent, pane, tmuxSocket, ...(server !== null ? { server } : {}), pid, fields };
}

/** Sends `report` and resolves once the daemon answered, the connection failed, or the time is up. */
export function sendHookReport(report: HookReport, env: NodeJS.ProcessEnv, timeoutMs = HOOK_TIMEOUT_MS): Promise<void> {
  const path = env[AGENT_SOCKET_ENV];
  if (!path) return Promise.resolve();
  return new Promise((resolve) => {
    const socket = createConnection(path);
    const done = (): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve();
    };
    const timer = setTimeout(done, timeoutMs);
    socket.on('error', done);
    socket.on('close', done);
    // Any answer (`ok`, or `refused`) ends the wait: the report was read.
    socket.on('data', (data: Buffer) => {
      if (data.includes(0x0a)) done();
    });
    socket.on('connect', () => socket.write(`${JSON.stringify(report)}\n`));
  });
}

/**
 * Runs a hook program's `main` the way an agent needs it: the whole run bounded (stdin
 * included), so the agent's turn never waits longer than HOOK_TIMEOUT_MS and a bit, and always
 * exit 0, whatever happened: a report that could not be sent never fails the agent.
 */
export function runHookProgram(main: () => Promise<void>): void {
  setTimeout(() => process.exit(0), HOOK_TIMEOUT_MS + 200).unref();
  process.on('uncaughtException', () => process.exit(0));
  main().then(
    () => process.exit(0),
    () => process.exit(0),
  );
}
