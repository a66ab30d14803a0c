/**
 * The setup most daemon tests share: a private tmux server, a temp home with the test's config
 * and a running daemon, made before the tests of the enclosing `describe` and torn down after
 * them: the mirrors opened through the fixture closed, the daemon killed (it was started here),
 * tmux's private server and the home removed.
 */
import { afterAll, beforeAll } from 'vitest';
import { daemonHome, startDaemon, type DaemonHome, type RunningTestDaemon, type Wrap } from './daemon.js';
import { Mirror } from './stream.js';
import { privateTmux, type PrivateTmux } from './tmux.js';

export interface DaemonFixture {
  readonly tmux: PrivateTmux;
  readonly home: DaemonHome;
  readonly d: RunningTestDaemon;
  /** A connected mirror of `session`, closed after the tests. */
  readonly mirror: (session: string, lastSeq?: number | null) => Mirror;
  /** An authenticated request with a JSON body (none when `body` is undefined). */
  readonly json: (method: string, path: string, body?: unknown) => Promise<Response>;
  /** Starts a daemon again on the same home (the test stopped the last one); it becomes `d`. */
  readonly startAgain: (timeoutMs?: number) => Promise<RunningTestDaemon>;
}

/**
 * Registers the setup and teardown hooks; the fixture's parts exist once the hooks ran. `toml`
 * may be a function, read when the daemon starts (after the test's own earlier hooks, such as a
 * stand-in server whose port the config names).
 */
export function useDaemon(
  toml: string | (() => string),
  opts: { extraEnv?: NodeJS.ProcessEnv; before?: () => void; after?: () => void; wrap?: Wrap } = {},
): DaemonFixture {
  let tmux: PrivateTmux | null = null;
  let home: DaemonHome | null = null;
  let d: RunningTestDaemon | null = null;
  const mirrors: Mirror[] = [];
  const ready = <T>(part: T | null, what: string): T => {
    if (part === null) throw new Error(`the daemon fixture's ${what} is used before its beforeAll ran`);
    return part;
  };
  beforeAll(async () => {
    opts.before?.();
    tmux = await privateTmux();
    home = daemonHome(tmux.socket, typeof toml === 'function' ? toml() : toml, opts.extraEnv);
    d = await startDaemon(home, undefined, opts.wrap);
  }, 30_000);
  afterAll(async () => {
    for (const m of mirrors) m.close();
    await d?.kill();
    await tmux?.cleanup();
    home?.cleanup();
    opts.after?.();
  });
  const fixture: DaemonFixture = {
    get tmux() {
      return ready(tmux, 'tmux');
    },
    get home() {
      return ready(home, 'home');
    },
    get d() {
      return ready(d, 'daemon');
    },
    mirror: (session, lastSeq = null) => {
      const m = new Mirror(fixture.d.base, fixture.d.token, session, lastSeq).connect();
      mirrors.push(m);
      return m;
    },
    startAgain: async (timeoutMs) => {
      d = await startDaemon(fixture.home, timeoutMs, opts.wrap);
      return d;
    },
    json: (method, path, body) =>
      fixture.d.get(path, {
        method,
        headers: { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      }),
  };
  return fixture;
}
