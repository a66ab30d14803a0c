/**
 * The setup every daemon test shares: a private tmux server, a temp home with the test's config
 * and a running daemon, made before the tests of the enclosing `describe` and torn down after
 * them: the mirrors opened through the fixture closed, the daemon killed (it was started here),
 * tmux's private server and the home removed, then the test's own `after`.
 *
 * vitest runs `afterAll` hooks in reverse order of registration: a test's own `afterAll`
 * registered after `useDaemon` runs before the fixture's, while the daemon still runs.
 */
import { afterAll, beforeAll, expect } from 'vitest';
import {
  daemonHome,
  freePort,
  startDaemon,
  warningsOf,
  type DaemonHome,
  type RunningTestDaemon,
  type TestDaemon,
  type Wrap,
} from './daemon.js';
import { startInProcessDaemon, type DaemonParts, type InProcessTestDaemon } from './in-process-daemon.js';
import { Mirror } from './stream.js';
import { privateTmux, type PrivateTmux } from './tmux.js';

export interface DaemonFixture<D extends TestDaemon = RunningTestDaemon, Again extends unknown[] = [timeoutMs?: number]> {
  readonly tmux: PrivateTmux;
  readonly home: DaemonHome;
  readonly d: D;
  /** A connected mirror of `session`, closed after the tests. */
  readonly mirror: (session: string, lastSeq?: number | null) => Mirror;
  /** An authenticated request with a JSON body (none when `body` is undefined). */
  readonly json: (method: string, path: string, body?: unknown) => Promise<Response>;
  /** Starts a daemon again on the same home (the test stopped or killed the last one); it becomes `d`. */
  readonly startAgain: (...again: Again) => Promise<D>;
}

export interface DaemonFixtureOptions {
  /** More environment for the daemon; a function is read when the home is made. */
  extraEnv?: NodeJS.ProcessEnv | (() => NodeJS.ProcessEnv);
  /** Runs first, before tmux and the home exist. */
  before?: () => void;
  /** Runs last, after the daemon was killed and tmux and the home removed. */
  after?: () => void;
  /** Runs the built daemon under another program (a network namespace). */
  wrap?: Wrap;
  /** Binds one port chosen once, so a daemon started again comes back where its clients were. */
  samePort?: boolean;
  /** Runs once tmux and the home exist, before the daemon starts (files or sessions it must find). */
  prepare?: (parts: { tmux: PrivateTmux; home: DaemonHome }) => void | Promise<void>;
  /** Sessions created through the API, in order, once the daemon is up; each must answer 201. */
  sessions?: readonly string[];
  /** How long the daemon may take to start (20 s by default). */
  startTimeoutMs?: number;
  /** The bound of the whole setup, sessions included (30 s by default). */
  setupTimeoutMs?: number;
}

/**
 * Registers the setup and teardown hooks of the built daemon; the fixture's parts exist once the
 * hooks ran. `toml` may be a function, read when the home is made (after the test's own earlier
 * hooks, such as a stand-in server whose port the config names).
 */
export function useDaemon(toml: string | (() => string), opts: DaemonFixtureOptions = {}): DaemonFixture {
  return fixture(toml, opts, (home, timeoutMs?: number) => startDaemon(home, timeoutMs ?? opts.startTimeoutMs, opts.wrap));
}

/**
 * The same with the daemon in the test's process, `parts` injected (a free-space source, a
 * clock): for tests that reach past HTTP. `startAgain(parts)` may inject other parts.
 */
export function useInProcessDaemon(
  toml: string | (() => string),
  opts: Omit<DaemonFixtureOptions, 'wrap' | 'startTimeoutMs'> & { parts?: DaemonParts } = {},
): DaemonFixture<InProcessTestDaemon, [parts?: DaemonParts]> {
  return fixture(toml, opts, (home, parts?: DaemonParts) => startInProcessDaemon(home, parts ?? opts.parts));
}

function fixture<D extends TestDaemon, Again extends unknown[]>(
  toml: string | (() => string),
  opts: DaemonFixtureOptions,
  start: (home: DaemonHome, ...again: Again | []) => Promise<D>,
): DaemonFixture<D, Again> {
  let tmux: PrivateTmux | null = null;
  let home: DaemonHome | null = null;
  let d: D | null = null;
  const mirrors: Mirror[] = [];
  const ready = <T>(part: T | null, what: string): T => {
    if (part === null) throw new Error(`the daemon fixture's ${what} is used before its beforeAll ran`);
    return part;
  };
  beforeAll(async () => {
    opts.before?.();
    tmux = await privateTmux();
    const text = typeof toml === 'function' ? toml() : toml;
    const bind = opts.samePort ? `bindAddress = "127.0.0.1:${await freePort()}"\n` : '';
    home = daemonHome(tmux.socket, bind + text, typeof opts.extraEnv === 'function' ? opts.extraEnv() : opts.extraEnv);
    await opts.prepare?.({ tmux, home });
    d = await start(home);
    for (const name of opts.sessions ?? []) await createSession(d, name);
  }, opts.setupTimeoutMs ?? 30_000);
  afterAll(async () => {
    for (const m of mirrors) m.close();
    await d?.kill();
    await tmux?.cleanup();
    home?.cleanup();
    opts.after?.();
  });
  const fx: DaemonFixture<D, Again> = {
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
      const m = new Mirror(fx.d.base, fx.d.token, session, lastSeq).connect();
      mirrors.push(m);
      return m;
    },
    startAgain: async (...again) => {
      d = await start(fx.home, ...again);
      return d;
    },
    json: (method, path, body) =>
      fx.d.get(path, {
        method,
        headers: { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      }),
  };
  return fx;
}

/** POST /sessions; anything but 201 fails the setup with the answer and the daemon's last warnings. */
async function createSession(d: TestDaemon, name: string): Promise<void> {
  const res = await d.get('/sessions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name }) });
  if (res.status !== 201) expect.fail(`creating session ${name}: ${res.status} ${await res.text()}\n${warningsOf(d)}`);
}
