/**
 * The stage of the asks and stops benchmarks: the real Claude Code or Codex against its fake
 * model server, in a session of the built daemon whose push goes to the HTTP/2 TLS stand-in for
 * APNs, a phone paired in the background, and a client on the session's stream whose terminal is
 * @xterm/headless. A benchmark says what its fake model answers and what a round waits for; the
 * stage starts and stops everything else and keeps what the client and the stand-in saw.
 *
 * Invariant: every time is `performance.now()` taken as the client or the stand-in got it.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import xtermHeadless from '@xterm/headless';
import type { StateFrame } from '../src/protocol/frames.js';
import { SessionStream } from '../src/reference-client/index.js';
import { agentBin, AGENT_ENV_CLEARED } from '../testkit/agent-bins.js';
import { pushToml, type ApnsStandIns } from '../testkit/apns-server.js';
import { claudeHome, type ClaudeHome } from '../testkit/claude-home.js';
import { codexHome, type CodexHome } from '../testkit/codex-home.js';
import { withBenchDaemon, type BenchDaemon } from './harness.js';
import { ms, percentile, waitFor, type Row } from './figures.js';
import { pairPhone } from './phone.js';

const { Terminal } = xtermHeadless;
/** A cold start of an agent, or one turn of it, on a busy two-core machine. */
export const AGENT_MS = 120_000;
const ROWS = 40;

/** An agent ready to start: the daemon's config lines for it, its environment and folder. */
export interface AgentSetup {
  readonly toml: readonly string[];
  readonly env: NodeJS.ProcessEnv;
  readonly cwd: string;
  /** Stops its fake model and removes its home. */
  close(): Promise<void>;
}

/** A fake model server as the agents' setups hold it. */
interface Model {
  readonly baseUrl: string;
  close(): Promise<void>;
}

/** Removes an agent's home; the agent may still be writing there for a moment after its tmux server went. */
const removed = (cleanup: () => void): Promise<boolean> =>
  waitFor(
    "the agent's home removed",
    () => {
      try {
        cleanup();
        return true;
      } catch {
        return false;
      }
    },
    10_000,
    200,
  );

function agentSetup(model: Model, home: { cwd: string; cleanup(): void }, toml: string[], env: NodeJS.ProcessEnv): AgentSetup {
  return {
    toml,
    env,
    cwd: home.cwd,
    close: async () => {
      await model.close();
      await removed(() => home.cleanup());
    },
  };
}

/** Claude Code asking before each command; `env` makes its environment from its home's (a login instead of the key). */
export function claudeSetup(model: Model, env: (home: ClaudeHome) => NodeJS.ProcessEnv = (home) => home.env): AgentSetup {
  const home = claudeHome(model.baseUrl);
  const toml = [`command = ${JSON.stringify(agentBin('claude'))}`, 'kind = "claude"', 'args = ["--permission-mode", "default"]'];
  return agentSetup(model, home, toml, env(home));
}

/** Codex without its hooks (they would stop it on a trust screen); `edit` changes its home before it starts. */
export function codexSetup(model: Model, edit: (home: CodexHome) => void = () => undefined): AgentSetup {
  const home = codexHome(model.baseUrl);
  rmSync(join(home.dir, 'hooks.json'));
  edit(home);
  return agentSetup(model, home, [`command = ${JSON.stringify(agentBin('codex'))}`, 'kind = "codex"'], home.env);
}

/** Which agent a stage runs, and what it watches for. */
export interface StageOptions {
  /** The agent's name and the session's (the daemon's `[agents.<session>]` runs it). */
  readonly name: string;
  readonly session: string;
  /** What the agent's screen says once it is ready for a prompt. */
  readonly ready: string;
  /** The field of a push's payload, and the id of a state frame, that name what a round waits for. */
  readonly pushId: string;
  idOf(frame: StateFrame): string | null;
  /** The device token of the paired phone. */
  readonly deviceToken: string;
}

/** What a round sees and does; the times are when the client or the stand-in first got each id. */
export interface AgentStage {
  readonly bd: BenchDaemon;
  readonly stream: SessionStream;
  /** The client's screen, a line a row. */
  screen(): string;
  /** Calls `fn` after each write reaches the client's terminal. */
  onScreen(fn: () => void): void;
  /** The newest state frame, and when each id of `idOf` first came on the stream. */
  last(): StateFrame | null;
  readonly seen: ReadonlyMap<string, number>;
  readonly pushes: ReadonlyMap<string, number>;
  /** Types `prompt` and waits for it on the client's screen; Enter is the round's to press. */
  type(prompt: string): Promise<void>;
  /** Waits for an id of `idOf` newer than `before` on the stream. */
  next(before: string | null, what: string): Promise<string>;
  newest(): string | null;
}

/** Starts `setup`'s agent in a session of a daemon pushing to `apns`, runs `rounds` on it, and stops it all. */
export async function onAgentStage<T>(
  opts: StageOptions,
  setup: AgentSetup,
  apns: ApnsStandIns,
  rounds: (stage: AgentStage) => Promise<T>,
): Promise<T> {
  const env: NodeJS.ProcessEnv = { ...setup.env, NODE_EXTRA_CA_CERTS: apns.caFile };
  for (const v of AGENT_ENV_CLEARED) env[v] = undefined;
  const toml = [`[agents.${opts.session}]`, ...setup.toml, ...pushToml(apns.sandbox.url, apns.keyPath)].join('\n');
  try {
    return await withBenchDaemon(
      'shell-main',
      async (bd) => {
        await pairPhone(bd, opts.deviceToken);
        const made = await bd.request('POST', '/sessions', { name: opts.session, agent: opts.session, cwd: setup.cwd });
        if (made.status !== 201) throw new Error(`creating the session: HTTP ${made.status} ${made.text}`);
        const stage = watchStage(bd, opts, apns);
        try {
          await waitFor(`${opts.name} ready`, () => stage.screen().includes(opts.ready), AGENT_MS, 50);
          return await rounds(stage);
        } finally {
          stage.stream.close();
        }
      },
      toml,
      false,
      undefined,
      env,
    );
  } finally {
    // What is left of the agent's home is the temp dir's to lose, never the round's error to hide.
    await setup.close().catch((err: Error) => process.stderr.write(`${opts.session} bench: ${err.message}\n`));
  }
}

/** Connects the client to the session and the stand-in's answer to the stage's records. */
function watchStage(bd: BenchDaemon, opts: StageOptions, apns: ApnsStandIns): AgentStage {
  const term = new Terminal({ cols: 120, rows: ROWS, allowProposedApi: true });
  const screen = (): string => {
    const buf = term.buffer.active;
    let text = '';
    for (let y = 0; y < ROWS; y++) text += `${buf.getLine(buf.viewportY + y)?.translateToString(true) ?? ''}\n`;
    return text;
  };
  const watchers: (() => void)[] = [];
  const written = () => {
    for (const fn of watchers) fn();
  };
  const stream = new SessionStream({ baseUrl: bd.base, token: bd.token, session: opts.session });
  stream.on('snapshot', (bytes: Buffer) => {
    term.reset();
    term.write(new Uint8Array(bytes), written);
  });
  stream.on('data', (bytes: Buffer) => term.write(new Uint8Array(bytes), written));
  let last: StateFrame | null = null;
  let newest: string | null = null;
  const seen = new Map<string, number>();
  stream.on('state', (frame: StateFrame) => {
    last = frame;
    const id = opts.idOf(frame);
    if (id !== null && !seen.has(id)) {
      seen.set(id, performance.now());
      newest = id;
    }
  });
  const pushes = new Map<string, number>();
  apns.sandbox.answer = (req) => {
    const id = (req.payload as Record<string, unknown>)[opts.pushId];
    if (typeof id === 'string' && !pushes.has(id)) pushes.set(id, performance.now());
    return { status: 200 };
  };
  stream.connect();
  return {
    bd,
    stream,
    screen,
    onScreen: (fn) => watchers.push(fn),
    last: () => last,
    seen,
    pushes,
    newest: () => newest,
    type: async (prompt) => {
      stream.sendKeys(prompt);
      await waitFor('the prompt on screen', () => screen().includes(prompt), AGENT_MS, 20);
    },
    next: (before, what) => waitFor(what, () => (newest !== before ? newest : null), AGENT_MS, 5),
  };
}

/** A time from the round's time zero, negative when it came before. */
const signed = (v: number): string => (v < 0 ? `-${ms(-v)}` : ms(v));

/** How a row sums its rounds up: `p99` or `max` beside the median. */
export type Spread = 'p99' | 'max';

/** One row of times from the moment `t0` first showed on the client's screen. */
export function timeRow(name: string, values: readonly number[], spread: Spread, target: string, t0: string): Row {
  const top = spread === 'max' ? Math.max(...values) : percentile(values, 99);
  return {
    name,
    value: `p50 ${signed(percentile(values, 50))}, ${spread} ${signed(top)}`,
    baseline: `t0: ${t0} first on the client's screen`,
    ratio: '-',
    target,
  };
}
