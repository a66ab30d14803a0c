/**
 * How soon a prompt from a phone is submitted to the agent (docs/api.md "Prompts"), and whether
 * each is submitted exactly once, with the five real agents (pi, Claude Code, Codex, Gemini CLI,
 * opencode) against the fake model servers and the built daemon. A client on the session's stream
 * renders it in @xterm/headless; a side channel (`/sessions/:id/side`) gets the `prompt` and
 * `state` frames.
 *
 * Per agent, after one warm-up of each: `TETHER_BENCH_PROMPTS_RUNS` (20) prompts, each
 * `POST /sessions/:id/prompt` sent to an idle agent once the one before was submitted and the agent
 * waits again; the figure is from the POST to the `prompt` frame saying `submitted`. Between them,
 * the same-run baseline: a prompt typed by hand the best way, as a phone could type it itself
 * (`POST /sessions/:id/input` `{type:"paste"}`, then, once the text showed on the client's screen
 * and the pane was quiet for 150 ms (at most 1 s), `{type:"key",name:"enter"}`), timed from the
 * paste to the agent's own report of the turn (the first `state` frame of its turn). That is the
 * agent's settle: what it takes to draw the paste, read Enter and say it started. Target (the
 * issue): p50 under that + 300 ms, p99 under 2 s. Each round starts 0-250 ms (at random) after the
 * agent waits again, so that none starts in step with Codex's rollout poll.
 *
 * Then `TETHER_BENCH_PROMPTS_LONG` (100) prompts in a row the same way to Codex and Gemini CLI
 * (the two that take an Enter too close behind text as a newline): each text must be among the
 * agent's own turns at its fake model exactly once. Target: 100 of 100.
 *
 * `TETHER_BENCH_PROMPTS_AGENTS=codex,gemini` runs some of the agents only.
 */
import xtermHeadless from '@xterm/headless';
import WebSocket from 'ws';
import type { StateFrame } from '../src/protocol/frames.js';
import type { PromptRecord } from '../src/protocol/prompt.js';
import { processExists } from '../src/process.js';
import { SessionStream } from '../src/reference-client/index.js';
import { agentBin, AGENT_ENV_CLEARED } from '../testkit/agent-bins.js';
import { agentTurns, TURN_OF, turnsWith, type TurnAgent } from '../testkit/agent-turns.js';
import { isAgentTurn as isClaudeTurn, startFakeAnthropic } from '../testkit/fake-anthropic.js';
import { offersTools, startFakeChat } from '../testkit/fake-chat.js';
import { isAgentTurn as isGeminiTurn, sideReply, startFakeGemini } from '../testkit/fake-gemini.js';
import type { ScriptOf } from '../testkit/fake-http.js';
import { startFakeResponses } from '../testkit/fake-responses.js';
import { geminiHome } from '../testkit/gemini-home.js';
import { opencodeHome } from '../testkit/opencode-home.js';
import { piBenchHome } from '../testkit/pi-home.js';
import { AGENT_MS, claudeSetup, codexSetup, type AgentSetup } from './agent-rounds.js';
import { envNumber, ms, percentile, sleep, waitFor, type Row } from './figures.js';
import { withBenchDaemon, type BenchDaemon } from './harness.js';
import { paneTree } from './procs.js';

const { Terminal } = xtermHeadless;
const COLS = 120;
const ROWS = 40;
/** The hand-typed baseline's pause before Enter: this long without output, at most HAND_WAIT_MS after the text showed (the suite's typing person). */
const HAND_QUIET_MS = 150;
const HAND_WAIT_MS = 1000;
/** A prompt is failed 3 s + 30 s after Enter without a report at the latest; beyond this the bench gives up. */
const DECIDED_MS = 60_000;
/** What a prompt's figure may exceed its agent's settle by at the median, and its p99 at most (the issue's targets). */
const OVER_SETTLE_MS = 300;
const P99_MS = 2000;
/**
 * Each round starts after a pause of up to this long, at random, once the agent waits: never in
 * step with Codex's rollout poll (250 ms), whose tick said the turn before ended.
 */
const PAUSE_MS = 250;

/** What `prepare` starts: the agent's setup for the daemon, and its fake's requests with the time each arrived. */
interface Prepared {
  readonly setup: AgentSetup;
  readonly requests: readonly unknown[];
  /** `performance.now()` as each request of `requests` (same index) reached the fake. */
  readonly arrivals: readonly number[];
}

interface PromptAgent {
  /** How the report names it. */
  readonly title: string;
  /** Its kind: the session's name, `[agents.<kind>]`, and how its turns are read at the fake. */
  readonly kind: TurnAgent;
  /** What its screen shows once it is ready for a prompt. */
  readonly ready: readonly string[];
  /** Whether the 100 prompts in a row run on it. */
  readonly long: boolean;
  prepare(): Promise<Prepared>;
}

/** A script that notes when each request arrived (`n` counts from 1, as the fake's `requests`). */
function timed<Req, Reply>(arrivals: number[], reply: (req: Req) => Reply): ScriptOf<Req, Reply> {
  return (req, n) => {
    arrivals[n - 1] = performance.now();
    return reply(req);
  };
}

/** An agent setup from a fake and a home the bench made. */
function setupOf(
  fake: { close(): Promise<void> },
  home: { cwd: string; cleanup(): void },
  toml: string[],
  env: NodeJS.ProcessEnv,
): AgentSetup {
  return {
    toml,
    env,
    cwd: home.cwd,
    close: async () => {
      await fake.close();
      // The agent may still be writing in its home for a moment after its tmux server went.
      await waitFor(
        "the agent's home removed",
        () => {
          try {
            home.cleanup();
            return true;
          } catch {
            return false;
          }
        },
        10_000,
        200,
      );
    },
  };
}

const binToml = (kind: 'gemini' | 'opencode'): string[] => [`command = ${JSON.stringify(agentBin(kind))}`, `kind = "${kind}"`];

const AGENTS: readonly PromptAgent[] = [
  {
    title: 'pi',
    kind: 'pi',
    ready: ['fake-agent'],
    long: false,
    async prepare() {
      const arrivals: number[] = [];
      const fake = await startFakeChat(timed(arrivals, () => ({ text: 'ok' })));
      const home = piBenchHome(fake.baseUrl);
      return { setup: setupOf(fake, home, ['command = "pi"', 'kind = "pi"'], home.env), requests: fake.requests, arrivals };
    },
  },
  {
    title: 'Claude Code',
    kind: 'claude',
    ready: ['Claude Code v2.1.328', 'manual mode on'],
    long: false,
    async prepare() {
      const arrivals: number[] = [];
      const fake = await startFakeAnthropic(timed(arrivals, (req) => (isClaudeTurn(req) ? { text: 'ok' } : { text: 'Prompt title' })));
      return { setup: claudeSetup(fake), requests: fake.requests, arrivals };
    },
  },
  {
    title: 'Codex',
    kind: 'codex',
    ready: ['OpenAI Codex (v0.169.0)', 'Ask Codex to do anything'],
    long: true,
    async prepare() {
      const arrivals: number[] = [];
      const fake = await startFakeResponses(timed(arrivals, () => ({ text: 'ok' })));
      return { setup: codexSetup(fake), requests: fake.requests, arrivals };
    },
  },
  {
    title: 'Gemini CLI',
    kind: 'gemini',
    ready: ['Gemini CLI v0.61.0', 'Type your message'],
    long: true,
    async prepare() {
      const arrivals: number[] = [];
      const fake = await startFakeGemini(timed(arrivals, (req) => (isGeminiTurn(req) ? { text: 'ok' } : sideReply(req))));
      const home = geminiHome(fake.baseUrl);
      return { setup: setupOf(fake, home, binToml('gemini'), home.env), requests: fake.requests, arrivals };
    },
  },
  {
    title: 'opencode',
    kind: 'opencode',
    ready: ['Ask anything'],
    long: false,
    async prepare() {
      const arrivals: number[] = [];
      const fake = await startFakeChat(timed(arrivals, (req) => (offersTools(req) ? { text: 'ok' } : { text: 'Prompt title' })));
      const home = opencodeHome(fake.baseUrl);
      return { setup: setupOf(fake, home, binToml('opencode'), home.env), requests: fake.requests, arrivals };
    },
  },
];

/** A frame as the side channel got it, with the client's time. */
interface Seen<T> {
  readonly frame: T;
  readonly at: number;
}

/** What a round sees: the client's screen and output, the side channel's frames. */
interface Stage {
  readonly bd: BenchDaemon;
  readonly session: string;
  screen(): string;
  /** When output last reached the client. */
  lastDataAt(): number;
  readonly states: Seen<StateFrame>[];
  readonly prompts: Seen<PromptRecord>[];
}

/** A state frame of a turn going on. */
const busy = (f: StateFrame): boolean => f.value === 'thinking' || f.value === 'tool';

/** Starts `agent` in a session of a daemon of its own, runs `rounds` on it, and stops it all. */
async function onStage<T>(agent: PromptAgent, prepared: Prepared, rounds: (stage: Stage) => Promise<T>): Promise<T> {
  const { setup } = prepared;
  // The user's agent variables cleared, then the agent's own (Gemini's key and base URL are among both).
  const env: NodeJS.ProcessEnv = {};
  for (const v of AGENT_ENV_CLEARED) env[v] = undefined;
  Object.assign(env, setup.env);
  const toml = [`[agents.${agent.kind}]`, ...setup.toml].join('\n');
  /** The agent's processes, read before its tmux server goes: one that outlives it (Gemini CLI at a dialog ignores the hang-up) is ended. */
  let agentPids: number[] = [];
  try {
    return await withBenchDaemon(
      'shell-main',
      async (bd) => {
        const made = await bd.request('POST', '/sessions', { name: agent.kind, agent: agent.kind, cwd: setup.cwd });
        if (made.status !== 201) throw new Error(`creating the session: HTTP ${made.status} ${made.text}`);
        const term = new Terminal({ cols: COLS, rows: ROWS, allowProposedApi: true });
        let lastDataAt = performance.now();
        const stream = new SessionStream({ baseUrl: bd.base, token: bd.token, session: agent.kind });
        stream.on('snapshot', (bytes: Buffer) => {
          term.reset();
          term.write(new Uint8Array(bytes));
        });
        stream.on('data', (bytes: Buffer) => {
          lastDataAt = performance.now();
          term.write(new Uint8Array(bytes));
        });
        stream.connect();
        const states: Seen<StateFrame>[] = [];
        const prompts: Seen<PromptRecord>[] = [];
        const side = new WebSocket(`${bd.base.replace(/^http/, 'ws')}/sessions/${agent.kind}/side`, bd.wsOptions(false));
        side.on('message', (data: Buffer, binary: boolean) => {
          if (binary) return;
          const at = performance.now();
          const frame = JSON.parse(data.toString('utf8')) as { type: string; prompt?: PromptRecord };
          if (frame.type === 'state') states.push({ frame: frame as unknown as StateFrame, at });
          else if (frame.type === 'prompt' && frame.prompt) prompts.push({ frame: frame.prompt, at });
        });
        const screen = (): string => {
          const buf = term.buffer.active;
          let text = '';
          for (let y = 0; y < ROWS; y++) text += `${buf.getLine(buf.viewportY + y)?.translateToString(true) ?? ''}\n`;
          return text;
        };
        try {
          await new Promise<void>((resolve, reject) => {
            side.once('open', () => resolve());
            side.once('error', reject);
          });
          await waitFor(`${agent.title} ready`, () => agent.ready.every((r) => screen().includes(r)), AGENT_MS, 50).catch((err: Error) => {
            throw new Error(`${err.message}; the client's screen:\n${screen()}`);
          });
          return await rounds({ bd, session: agent.kind, screen, lastDataAt: () => lastDataAt, states, prompts });
        } finally {
          agentPids = await paneTree(bd.tmux, agent.kind);
          side.close();
          stream.close();
          term.dispose();
        }
      },
      toml,
      false,
      undefined,
      env,
    );
  } finally {
    await endLeftovers(agent, agentPids);
    await setup.close().catch((err: Error) => process.stderr.write(`prompts bench, ${agent.title}: ${err.message}\n`));
  }
}

/** Gives the agent's processes 5 s to follow their tmux server, then ends those still there. */
async function endLeftovers(agent: PromptAgent, pids: readonly number[]): Promise<void> {
  const left = () => pids.filter((pid) => processExists(pid));
  await waitFor('the agent gone', () => left().length === 0, 5000, 100).catch(() => undefined);
  const still = left();
  if (still.length === 0) return;
  process.stderr.write(`prompts bench, ${agent.title}: ending ${still.length} processes left after its tmux server: ${still.join(' ')}\n`);
  const signal = (sig: NodeJS.Signals) => {
    for (const pid of left()) {
      try {
        process.kill(pid, sig);
      } catch {
        // gone meanwhile
      }
    }
  };
  signal('SIGTERM');
  await waitFor('the agent ended', () => left().length === 0, 5000, 100).catch(() => signal('SIGKILL'));
}

/** A turn from state frames from index `from` on: its first busy frame, and the first waiting one after it. */
async function turnOf(stage: Stage, from: number, what: string): Promise<{ busyAt: number; idleAt: number }> {
  const busyIndex = await waitFor(
    `${what}: the agent's turn`,
    () => {
      const i = stage.states.findIndex((s, k) => k >= from && busy(s.frame));
      return i >= 0 ? i + 1 : null;
    },
    AGENT_MS,
    5,
  );
  const idle = await waitFor(
    `${what}: the agent waiting again`,
    () => stage.states.find((s, k) => k >= busyIndex && s.frame.value === 'awaiting-input') ?? null,
    AGENT_MS,
    5,
  );
  return { busyAt: stage.states[busyIndex - 1]!.at, idleAt: idle.at };
}

/** When the first of the agent's own turns at the fake carrying `text` arrived, or null. */
function modelAt(agent: PromptAgent, prepared: Prepared, text: string): number | null {
  const i = prepared.requests.findIndex((r) => TURN_OF[agent.kind](r)?.includes(text) === true);
  return i < 0 ? null : (prepared.arrivals[i] ?? null);
}

/** One prompt sent through tether, from its POST. */
interface PromptSample {
  readonly text: string;
  readonly status: string;
  /** To its `typing` frame, its decided frame, the turn's first state frame, the model's request. */
  readonly typing: number;
  readonly decided: number;
  readonly busy: number | null;
  readonly model: number | null;
  readonly record: PromptRecord;
}

/** One prompt typed by hand, from its paste. */
interface HandSample {
  readonly text: string;
  /** To Enter, to the turn's first state frame, to the model's request. */
  readonly enter: number;
  readonly busy: number;
  readonly model: number | null;
}

async function sendPrompt(agent: PromptAgent, prepared: Prepared, stage: Stage, text: string, id: string): Promise<PromptSample> {
  await sleep(Math.random() * PAUSE_MS);
  const fromState = stage.states.length;
  const t0 = performance.now();
  const res = await stage.bd.request('POST', `/sessions/${stage.session}/prompt`, { text, id });
  if (res.status !== 202) throw new Error(`prompt ${id}: HTTP ${res.status} ${res.text}`);
  const ofId = () => stage.prompts.filter((p) => p.frame.id === id);
  const decided = await waitFor(
    `prompt ${id} decided`,
    () => ofId().find((p) => p.frame.status !== 'queued' && p.frame.status !== 'typing') ?? null,
    DECIDED_MS,
    5,
  );
  const typing = ofId().find((p) => p.frame.status === 'typing');
  let turn: { busyAt: number; idleAt: number } | null = null;
  if (decided.frame.status === 'submitted') turn = await turnOf(stage, fromState, `prompt ${id}`);
  else {
    process.stderr.write(`prompts bench, ${agent.title}: prompt ${id} ${decided.frame.status}: ${JSON.stringify(decided.frame)}\n`);
    // Whatever became of it, the next one goes to an agent that waits.
    await waitFor('the agent waiting', () => stage.states.at(-1)?.frame.value === 'awaiting-input', AGENT_MS, 20);
    await sleep(1000);
  }
  const model = modelAt(agent, prepared, text);
  return {
    text,
    status: decided.frame.status,
    typing: (typing?.at ?? Number.NaN) - t0,
    decided: decided.at - t0,
    busy: turn ? turn.busyAt - t0 : null,
    model: model === null ? null : model - t0,
    record: decided.frame,
  };
}

async function typeByHand(agent: PromptAgent, prepared: Prepared, stage: Stage, text: string): Promise<HandSample> {
  await sleep(Math.random() * PAUSE_MS);
  const fromState = stage.states.length;
  const input = async (body: unknown) => {
    const res = await stage.bd.request('POST', `/sessions/${stage.session}/input`, body);
    if (res.status !== 204) throw new Error(`input ${JSON.stringify(body)}: HTTP ${res.status} ${res.text}`);
  };
  const t0 = performance.now();
  await input({ type: 'paste', data: text });
  await waitFor(`"${text}" on the client's screen`, () => stage.screen().includes(text), AGENT_MS, 5);
  const shown = performance.now();
  await waitFor(
    'the screen quiet after the paste',
    () => performance.now() - stage.lastDataAt() >= HAND_QUIET_MS || performance.now() - shown >= HAND_WAIT_MS,
    HAND_WAIT_MS + 10_000,
    5,
  );
  const enter = performance.now();
  await input({ type: 'key', name: 'enter' });
  const turn = await turnOf(stage, fromState, `"${text}" typed by hand`);
  const model = modelAt(agent, prepared, text);
  return { text, enter: enter - t0, busy: turn.busyAt - t0, model: model === null ? null : model - t0 };
}

/** What one agent gave. */
interface AgentResult {
  readonly agent: PromptAgent;
  readonly prompts: PromptSample[];
  readonly hand: HandSample[];
  readonly long: PromptSample[];
  /** How many times each text sent (prompts, hand, long) is among the agent's own turns at its fake. */
  readonly seen: ReadonlyMap<string, number>;
  /** The agent's own turns at its fake, and the texts sent (each should be one turn). */
  readonly turns: number;
  readonly sent: number;
}

async function runAgent(agent: PromptAgent, runs: number, longRuns: number): Promise<AgentResult> {
  const prepared = await agent.prepare();
  const started = performance.now();
  return onStage(agent, prepared, async (stage) => {
    process.stderr.write(`prompts bench: ${agent.title} ready in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
    const prompts: PromptSample[] = [];
    const hand: HandSample[] = [];
    const long: PromptSample[] = [];
    const sent: string[] = [];
    // One of each first, not counted: the agent's first turn warms it (and the fake) up.
    for (let i = 0; i <= runs; i++) {
      const text = `phone prompt ${i} to ${agent.kind}, word ${(i * 7919) % 1000}`;
      const p = await sendPrompt(agent, prepared, stage, text, `p-${i}`);
      const handText = `hand typed ${i} to ${agent.kind}, word ${(i * 104729) % 1000}`;
      const h = await typeByHand(agent, prepared, stage, handText);
      sent.push(text, handText);
      if (i === 0) continue;
      prompts.push(p);
      hand.push(h);
    }
    if (agent.long) {
      for (let i = 1; i <= longRuns; i++) {
        const text = `row prompt ${i} of ${longRuns} to ${agent.kind}, word ${(i * 7919) % 1000}`;
        long.push(await sendPrompt(agent, prepared, stage, text, `row-${i}`));
        sent.push(text);
      }
    }
    // The last turn has ended (the agent waits again), so its request is in.
    const turns = agentTurns(agent.kind, prepared.requests);
    const seen = new Map(sent.map((t) => [t, turnsWith(turns, t)]));
    process.stderr.write(`prompts bench: ${agent.title} done in ${((performance.now() - started) / 1000).toFixed(0)} s\n`);
    return { agent, prompts, hand, long, seen, turns: turns.length, sent: sent.length };
  });
}

const p = (values: readonly number[], q: number): number => percentile(values, q);
const defined = (values: readonly (number | null)[]): number[] => values.filter((v): v is number => v !== null && !Number.isNaN(v));

/** What went wrong with prompts sent: not submitted, or not exactly once at the model. */
function oddities(r: AgentResult): string[] {
  const out: string[] = [];
  for (const s of [...r.prompts, ...r.long])
    if (s.status !== 'submitted') out.push(`${r.agent.title}: "${s.text}" ${s.status}: ${s.record.reason ?? ''}`);
  for (const [text, n] of r.seen) if (n !== 1) out.push(`${r.agent.title}: "${text}" ${n} times among the agent's turns at the model`);
  if (r.turns !== r.sent) out.push(`${r.agent.title}: ${r.turns} turns at the model for ${r.sent} texts sent`);
  return out;
}

function agentRow(r: AgentResult): Row {
  const submitted = r.prompts.map((s) => s.decided);
  const settle = r.hand.map((h) => h.busy);
  const base = p(settle, 50);
  return {
    name: `prompt to ${r.agent.title}: POST to submitted (${submitted.length})`,
    value: `p50 ${ms(p(submitted, 50))}, p99 ${ms(p(submitted, 99))}`,
    baseline: `the agent's settle: a hand paste, Enter once quiet ${HAND_QUIET_MS} ms, to its report: p50 ${ms(base)}, p99 ${ms(p(settle, 99))} (${settle.length})`,
    ratio: `${(p(submitted, 50) / base).toFixed(2)}x`,
    target: `p50 < ${ms(base + OVER_SETTLE_MS)}, p99 < ${P99_MS / 1000} s`,
  };
}

function longRow(r: AgentResult): Row {
  const once = r.long.filter((s) => s.status === 'submitted' && r.seen.get(s.text) === 1).length;
  const submitted = r.long.map((s) => s.decided);
  const base = p(
    r.hand.map((h) => h.busy),
    50,
  );
  return {
    name: `${r.long.length} prompts in a row to ${r.agent.title}: submitted exactly once`,
    value: `${once} of ${r.long.length}; p50 ${ms(p(submitted, 50))}, p99 ${ms(p(submitted, 99))}`,
    baseline: `the agent's settle (above): p50 ${ms(base)}`,
    ratio: `${(p(submitted, 50) / base).toFixed(2)}x`,
    target: `${r.long.length} of ${r.long.length}`,
  };
}

/** The breakdown docs/benchmarks.md shows: where each path's time goes, at the median. */
function table(results: readonly AgentResult[]): string {
  const lines = [
    '| agent | prompt: POST to `typing` | to its turn on the stream | to `submitted` (p50 / p99) | to the model | by hand: paste to Enter | to its turn on the stream (p50 / p99) | to the model |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const r of results) {
    const pr = r.prompts;
    const h = r.hand;
    const sub = pr.map((s) => s.decided);
    const settle = h.map((x) => x.busy);
    lines.push(
      `| ${r.agent.title} | ${ms(p(defined(pr.map((s) => s.typing)), 50))} | ${ms(p(defined(pr.map((s) => s.busy)), 50))} | ${ms(p(sub, 50))} / ${ms(p(sub, 99))} | ${ms(p(defined(pr.map((s) => s.model)), 50))} | ${ms(
        p(
          h.map((x) => x.enter),
          50,
        ),
      )} | ${ms(p(settle, 50))} / ${ms(p(settle, 99))} | ${ms(p(defined(h.map((x) => x.model)), 50))} |`,
    );
  }
  const odd = results.flatMap(oddities);
  return `${lines.join('\n')}\n\n${odd.length === 0 ? "Every prompt submitted, each text exactly once among its agent's turns at the model." : `Odd:\n${odd.map((o) => `- ${o}`).join('\n')}`}\n`;
}

export async function runPromptsBench(): Promise<{ rows: Row[]; markdown: string }> {
  const runs = envNumber('TETHER_BENCH_PROMPTS_RUNS', 20);
  const longRuns = envNumber('TETHER_BENCH_PROMPTS_LONG', 100);
  const only = process.env.TETHER_BENCH_PROMPTS_AGENTS?.split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const unknown = only?.filter((k) => !AGENTS.some((a) => a.kind === k)) ?? [];
  if (unknown.length > 0) throw new Error(`TETHER_BENCH_PROMPTS_AGENTS: unknown agent ${unknown.join(', ')}`);
  const results: AgentResult[] = [];
  for (const agent of AGENTS) {
    if (only && !only.includes(agent.kind)) continue;
    results.push(await runAgent(agent, runs, longRuns));
  }
  const rows = [...results.map(agentRow), ...results.filter((r) => r.agent.long).map(longRow)];
  return { rows, markdown: table(results) };
}
