/**
 * How soon an agent's stop reaches the phone (docs/api.md "Stops", docs/push.md "Stops"), with
 * the real Claude Code 2.1.328 and Codex 0.169 against the fake model servers, the built daemon
 * and the HTTP/2 TLS stand-in for APNs, a phone paired in the background and a client on the
 * session's stream (its terminal is @xterm/headless). Each round is one turn the fake refuses:
 * Claude, logged in as a subscriber, gets the usage limit (a 429 with the unified rate-limit
 * headers); Codex gets a 500 it gives up on. Time zero of a round is when the agent's stop first
 * shows on the client's screen; from it: the stop on the stream and its push at the stand-in.
 * Target (#39): the stop on the stream and the push within 2 s of the agent showing it.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import xtermHeadless from '@xterm/headless';
import type { StateFrame } from '../src/protocol/frames.js';
import { SessionStream } from '../src/reference-client/index.js';
import { agentBin, AGENT_ENV_CLEARED } from '../testkit/agent-bins.js';
import { pushToml, startApnsStandIns, type ApnsStandIns } from '../testkit/apns-server.js';
import { CLI } from '../testkit/built-cli.js';
import { claudeHome } from '../testkit/claude-home.js';
import { codexHome } from '../testkit/codex-home.js';
import { isAgentTurn, startFakeAnthropic, usageLimitReply } from '../testkit/fake-anthropic.js';
import { startFakeResponses, toolNames } from '../testkit/fake-responses.js';
import { envNumber, ms, percentile, waitFor, withBenchDaemon, type BenchDaemon, type Row } from './harness.js';

const { Terminal } = xtermHeadless;
const run = promisify(execFile);
const SESSION = 'stopper';
const AGENT_MS = 120_000;

interface Agent {
  readonly name: 'claude' | 'codex';
  /** What its screen says when it stops; what it says once ready for a prompt. */
  readonly stopped: string;
  readonly ready: string;
  /** A notice it leaves on screen that takes the keys until Escape (Claude's usage limit), or null. */
  readonly notice: string | null;
  prepare(): Promise<{ toml: string[]; env: NodeJS.ProcessEnv; cwd: string; close(): Promise<void> }>;
}

const CLAUDE: Agent = {
  name: 'claude',
  stopped: "You've hit your",
  ready: '? for shortcuts',
  notice: 'Esc to cancel',
  async prepare() {
    const reset = Math.ceil(Date.now() / 60_000) * 60 + 3 * 3600;
    const model = await startFakeAnthropic((req) => (isAgentTurn(req) ? usageLimitReply(reset) : { text: 'Title' }));
    const home = claudeHome(model.baseUrl);
    const { ANTHROPIC_API_KEY: _key, ...env } = home.env;
    return {
      toml: [`command = ${JSON.stringify(agentBin('claude'))}`, 'kind = "claude"', 'args = ["--permission-mode", "default"]'],
      env: { ...env, CLAUDE_CODE_OAUTH_TOKEN: 'tether-fake-oauth-token' },
      cwd: home.cwd,
      close: async () => {
        await model.close();
        home.cleanup();
      },
    };
  },
};

const CODEX: Agent = {
  name: 'codex',
  stopped: 'experiencing high demand',
  ready: 'Ask Codex to do anything',
  notice: null,
  async prepare() {
    const model = await startFakeResponses((req) =>
      toolNames(req).length > 0
        ? { status: 500, errorBody: { error: { type: 'server_error', message: 'Internal server error' } } }
        : { text: 'Title' },
    );
    const home = codexHome(model.baseUrl);
    rmSync(join(home.dir, 'hooks.json'));
    return {
      toml: [`command = ${JSON.stringify(agentBin('codex'))}`, 'kind = "codex"'],
      env: home.env,
      cwd: home.cwd,
      close: async () => {
        await model.close();
        home.cleanup();
      },
    };
  },
};

/** Pairs a phone (sandbox); its token never opens a stream, so it is in the background. */
async function pairPhone(bd: BenchDaemon): Promise<void> {
  const env = { ...process.env, TETHER_CONFIG: join(bd.tmux.dir, 'config.toml'), TETHER_DATA_DIR: bd.dataDir };
  const { stdout } = await run(process.execPath, [CLI, 'pair', '--json'], { env });
  const { pairingToken } = JSON.parse(stdout) as { pairingToken: string };
  const r = await fetch(`${bd.base}/pair`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ pairingToken, deviceName: 'phone', deviceToken: 'cd'.repeat(32), environment: 'sandbox' }),
  });
  if (r.status !== 201) throw new Error(`pairing: HTTP ${r.status} ${await r.text()}`);
}

interface Round {
  readonly stream: number;
  readonly push: number;
}

async function rounds(agent: Agent, apns: ApnsStandIns, runs: number): Promise<Round[]> {
  const setup = await agent.prepare();
  const env: NodeJS.ProcessEnv = { ...setup.env, NODE_EXTRA_CA_CERTS: apns.caFile };
  for (const v of AGENT_ENV_CLEARED) env[v] = undefined;
  const toml = ['[agents.stopper]', ...setup.toml, ...pushToml(apns.sandbox.url, apns.keyPath)].join('\n');
  try {
    return await withBenchDaemon(
      'shell-main',
      async (bd) => {
        await pairPhone(bd);
        const made = await bd.request('POST', '/sessions', { name: SESSION, agent: 'stopper', cwd: setup.cwd });
        if (made.status !== 201) throw new Error(`creating the session: HTTP ${made.status} ${made.text}`);
        const term = new Terminal({ cols: 120, rows: 40, allowProposedApi: true });
        const screen = () => {
          const buf = term.buffer.active;
          let text = '';
          for (let y = 0; y < 40; y++) text += `${buf.getLine(buf.viewportY + y)?.translateToString(true) ?? ''}\n`;
          return text;
        };
        /** How many times the stop's words are on the screen, and when the count last grew. */
        let shown = 0;
        let shownAt = 0;
        const seen = () => {
          const n = screen().split(agent.stopped).length - 1;
          if (n > shown) shownAt = performance.now();
          shown = n;
        };
        const stream = new SessionStream({ baseUrl: bd.base, token: bd.token, session: SESSION });
        stream.on('snapshot', (bytes: Buffer) => {
          term.reset();
          term.write(new Uint8Array(bytes), seen);
        });
        stream.on('data', (bytes: Buffer) => term.write(new Uint8Array(bytes), seen));
        const stops = new Map<string, number>();
        let newest: string | null = null;
        stream.on('state', (frame: StateFrame) => {
          if (frame.stop && frame.stop.kind !== 'done' && !stops.has(frame.stop.id)) {
            stops.set(frame.stop.id, performance.now());
            newest = frame.stop.id;
          }
        });
        const pushes = new Map<string, number>();
        apns.sandbox.answer = (req) => {
          const stopId = (req.payload as { stopId?: string }).stopId;
          if (stopId && !pushes.has(stopId)) pushes.set(stopId, performance.now());
          return { status: 200 };
        };
        stream.connect();
        try {
          await waitFor(`${agent.name} ready`, () => screen().includes(agent.ready), AGENT_MS, 50);
          const out: Round[] = [];
          for (let i = 0; i < runs + 1; i++) {
            const prompt = `round ${i}`;
            const before = newest;
            const shownBefore = shownAt;
            stream.sendKeys(prompt);
            await waitFor('the prompt on screen', () => screen().includes(prompt), AGENT_MS, 20);
            stream.sendKey('enter');
            const stopId = await waitFor('the stop', () => (newest !== before ? newest : null), AGENT_MS, 5);
            const at = await waitFor('the stop on the screen', () => (shownAt !== shownBefore ? shownAt : null), AGENT_MS, 5);
            const pushedAt = await waitFor('the push', () => pushes.get(stopId) ?? null, AGENT_MS, 5);
            if (i > 0) out.push({ stream: stops.get(stopId)! - at, push: pushedAt - at });
            if (agent.notice !== null) {
              const notice = agent.notice;
              await waitFor(
                'the notice dismissed',
                () => {
                  if (!screen().includes(notice)) return true;
                  stream.sendKey('escape');
                  return null;
                },
                AGENT_MS,
                300,
              );
            }
          }
          return out;
        } finally {
          stream.close();
        }
      },
      toml,
      false,
      undefined,
      env,
    );
  } finally {
    await setup.close().catch((err: Error) => process.stderr.write(`stops bench: ${err.message}\n`));
  }
}

const signed = (v: number): string => (v < 0 ? `-${ms(-v)}` : ms(v));
const spread = (v: readonly number[]): string => `p50 ${signed(percentile(v, 50))}, p99 ${signed(percentile(v, 99))}`;

export async function runStopsBench(): Promise<Row[]> {
  const runs = envNumber('TETHER_BENCH_STOPS_RUNS', 10);
  const dir = mkdtempSync(join(tmpdir(), 'tether-bench-stops-'));
  const apns = await startApnsStandIns(dir);
  try {
    const claude = await rounds(CLAUDE, apns, runs);
    const codex = await rounds(CODEX, apns, runs);
    const row = (name: string, v: number[], target: string, t0: string): Row => ({
      name,
      value: spread(v),
      baseline: `t0: ${t0} first on the client's screen`,
      ratio: '-',
      target,
    });
    return [
      row(
        "Claude's usage limit: the stop on the stream",
        claude.map((r) => r.stream),
        'p99 < 2 s',
        "Claude's limit notice",
      ),
      row(
        "Claude's usage limit: its push at APNs",
        claude.map((r) => r.push),
        'p99 < 2 s',
        "Claude's limit notice",
      ),
      row(
        "Codex's API error: the stop on the stream",
        codex.map((r) => r.stream),
        'p99 < 2 s',
        "Codex's error",
      ),
      row(
        "Codex's API error: its push at APNs",
        codex.map((r) => r.push),
        'p99 < 2 s',
        "Codex's error",
      ),
    ];
  } finally {
    await apns.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
