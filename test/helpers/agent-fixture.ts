/**
 * The setting every real-agent end-to-end test shares, made before the tests of a `describe` and
 * torn down after them: the APNs stand-ins, the agent's fake model server and its home (made by
 * the test's `start`), the built daemon with the agent under `[agents.<kind>]` pushing to the
 * stand-ins, a phone paired in the background, and (when `session` is given) the agent's session
 * created over the API with a stream client watching it until the agent is ready on its screen.
 *
 * Teardown order: the daemon and tmux go first (the agent in them with them), then the fake and
 * the agent's home, then the stand-ins; an agent never writes into a home being removed.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { AGENT_ENV_CLEARED, type AgentName } from '../../testkit/agent-bins.js';
import type { ApnsStandIns } from '../../testkit/apns-server.js';
import { useApnsStandIns } from './apns-fixture.js';
import { useDaemon, type DaemonFixture } from './daemon-fixture.js';
import { explainedBy } from './daemon.js';
import { pairDevice, type PairedDevice } from './pair-device.js';
import { shows as showsOn, type Mirror } from './stream.js';
import { eventually } from './tmux.js';

/** A cold start of a 370 MB binary on a busy two-core machine. */
export const AGENT_START_MS = 90_000;
/** One turn: model requests, the hook programs' node processes, a command. */
export const TURN_MS = 90_000;

/** The turn most agent tests type: the model asks for one shell call printing `output`, then says `final`. */
export const MARKER_TURN = {
  prompt: 'please run the marker command',
  output: 'tether-tool-ok',
  final: 'All done: tether-final-answer',
} as const;

/**
 * How long the screen stays quiet after typed text before the test's Enter, at most TYPED_WAIT_MS
 * after it showed (an agent animating its screen): both past Codex's 120 ms and Gemini's 30 ms.
 */
const TYPED_QUIET_MS = 150;
const TYPED_WAIT_MS = 1000;

export interface Closable {
  close(): Promise<void>;
}
export interface AgentHomeLike {
  readonly cwd: string;
  cleanup(): void;
}

/** What a test's `start` makes once the stand-ins run: the fake, the home, the agent's variables. */
export interface AgentParts<F extends Closable, H extends AgentHomeLike> {
  readonly fake: F;
  readonly home: H;
  readonly env: NodeJS.ProcessEnv;
}

export interface RealAgentOptions<F extends Closable, H extends AgentHomeLike> {
  /** The temp folder's prefix (`tether-<test>-`). */
  readonly prefix: string;
  /** Starts the fake model and makes the agent's home. */
  readonly start: () => Promise<AgentParts<F, H>>;
  /** The daemon's config, read once the stand-ins run. */
  readonly toml: (apns: ApnsStandIns) => string;
  /** The phone's APNs token (sandbox, in the background). */
  readonly phone: string;
  /** The agent's session, made once the phone is paired; none: the test makes its own. */
  readonly session?: { readonly name: string; readonly agent: AgentName | 'pi'; readonly ready: readonly string[] };
  /** How often the waits look (100 ms unless given). */
  readonly pollMs?: number;
  /** The daemon's log lines a failure shows (60 unless given). */
  readonly logLines?: number;
}

export interface RealAgent<F extends Closable, H extends AgentHomeLike> {
  readonly fx: DaemonFixture;
  readonly apns: ApnsStandIns;
  readonly fake: F;
  readonly home: H;
  readonly phone: PairedDevice;
  /** The stream client on the session (only with `session`), or the last one `watch` opened. */
  readonly m: Mirror;
  /** Opens a stream client on `session` (closed after the tests); it becomes `m`. */
  readonly watch: (session: string) => Mirror;
  /** `p`, or its failure with the daemon's log tail. */
  readonly explained: <T>(p: Promise<T>) => Promise<T>;
  /** Waits until `mirror` (the session's client unless given) shows every one of `texts`. */
  readonly shows: (texts: readonly string[], ms: number, what: string, mirror?: Mirror) => Promise<string>;
  /** Types `text` through the client as a person would, waits to see it typed, then Enter. */
  readonly type: (text: string, mirror?: Mirror) => Promise<void>;
  /** The phone answers `ask` over REST with its own token (or `token`), in the session (or `session`). */
  readonly answer: (ask: string, choice: string, opts?: { token?: string; session?: string }) => Promise<Response>;
  /** What the phone was pushed (the sandbox's payloads), in order. */
  readonly pushes: <P = Record<string, unknown>>() => P[];
  /** How many lines a file in the agent's directory has: the runs of a command appending to it. */
  readonly runs: (file: string) => number;
}

const ready = <T>(part: T | null, what: string): T => {
  if (part === null) throw new Error(`the real agent's ${what} is used before its beforeAll ran`);
  return part;
};

export function useRealAgent<F extends Closable, H extends AgentHomeLike>(opts: RealAgentOptions<F, H>): RealAgent<F, H> {
  const pollMs = opts.pollMs ?? 100;
  const stand = useApnsStandIns(opts.prefix);
  let parts: AgentParts<F, H> | null = null;
  let phone: PairedDevice | null = null;
  let m: Mirror | null = null;
  /** The daemon's environment: the agent's, the stand-ins' certificates, the user's agent variables cleared. */
  const env: NodeJS.ProcessEnv = {};
  beforeAll(async () => {
    parts = await opts.start();
    for (const v of AGENT_ENV_CLEARED) env[v] = undefined;
    Object.assign(env, { NODE_EXTRA_CA_CERTS: stand.apns.caFile }, parts.env);
  }, 60_000);
  // Registered before the daemon's fixture so that it runs after its teardown.
  afterAll(async () => {
    await parts?.fake.close();
    parts?.home.cleanup();
  }, 60_000);
  const fx = useDaemon(() => opts.toml(stand.apns), { extraEnv: env });
  const a: RealAgent<F, H> = {
    fx,
    get apns() {
      return stand.apns;
    },
    get fake() {
      return ready(parts, 'fake').fake;
    },
    get home() {
      return ready(parts, 'home').home;
    },
    get phone() {
      return ready(phone, 'phone');
    },
    get m() {
      return ready(m, 'stream client');
    },
    watch: (name) => (m = fx.mirror(name)),
    explained: (p) => explainedBy(fx.d, p, opts.logLines ?? 60),
    shows: (texts, ms, what, mirror) => showsOn(mirror ?? a.m, texts, ms, what, pollMs),
    type: async (text, mirror = a.m) => {
      mirror.stream.sendKeys(text);
      await a.explained(a.shows([text], TURN_MS, `the typed "${text}" on the client`, mirror));
      // A person's Enter comes well after the last key: Codex and Gemini CLI take an Enter close
      // behind a burst of keys as a newline in a paste (docs/agents.md "Typing a line").
      const shown = Date.now();
      await eventually(
        () => Date.now() - mirror.lastDataAt >= TYPED_QUIET_MS || Date.now() - shown >= TYPED_WAIT_MS,
        TYPED_WAIT_MS + 10_000,
        20,
        'the screen quiet after the typed text',
      );
      mirror.stream.sendKey('enter');
    },
    answer: (ask, choice, { token = a.phone.token, session = opts.session?.name ?? '' } = {}) =>
      fetch(`${fx.d.base}/sessions/${session}/answer`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ ask, choice }),
      }),
    pushes: <P>() => a.apns.sandbox.requests.map((q) => q.payload as P),
    runs: (file) => {
      const path = join(a.home.cwd, file);
      return existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter(Boolean).length : 0;
    },
  };
  const session = opts.session;
  beforeAll(async () => {
    phone = await pairDevice(fx, 'phone', opts.phone, 'sandbox');
    if (!session) return;
    const r = await fx.json('POST', '/sessions', { name: session.name, agent: session.agent, cwd: a.home.cwd });
    expect(r.status, await r.clone().text()).toBe(201);
    m = fx.mirror(session.name);
    await a.explained(a.shows(session.ready, AGENT_START_MS, `${session.agent} ready on the client`));
  }, AGENT_START_MS + 60_000);
  return a;
}
