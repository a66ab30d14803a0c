/**
 * How soon an agent's question reaches the phone (docs/agents.md "Asks and answers"), with the
 * real Claude Code 2.1.328 and Codex 0.169 against the fake model servers, the built daemon and
 * the HTTP/2 TLS stand-in for APNs, a phone paired in the background and a client on the
 * session's stream (its terminal is @xterm/headless). Each round is one turn whose model asks
 * for a command that needs the person's approval; the phone allows it, the turn ends.
 *
 * Time zero of a round is when the agent's dialog first shows on the client's screen (Claude's
 * "Do you want to proceed?", Codex's "Would you like to run the following command?"); from it:
 * the ask on the stream (Claude reports it from a hook that runs as the dialog opens, so it may
 * come first: a negative figure) and the push at the APNs stand-in. Targets: the ask within 1 s
 * of Claude's dialog, the push within 2 s of Codex's.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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
import { isAgentTurn, startFakeAnthropic, toolResults } from '../testkit/fake-anthropic.js';
import { shellCall, startFakeResponses, toolNames } from '../testkit/fake-responses.js';
import { envNumber, ms, percentile, waitFor, withBenchDaemon, type BenchDaemon, type Row } from './harness.js';

const { Terminal } = xtermHeadless;
const run = promisify(execFile);
const SESSION = 'asker';
/** A cold start of an agent, or one turn of it, on a busy two-core machine. */
const AGENT_MS = 120_000;

interface Agent {
  readonly name: 'claude' | 'codex';
  /** What its dialog says on the screen. */
  readonly dialog: string;
  /** What its screen says once it is ready for a prompt. */
  readonly ready: string;
  /** The daemon's config for it, and the environment it needs; `set(command)` is the next command to ask for. */
  prepare(): Promise<{ toml: string[]; env: NodeJS.ProcessEnv; cwd: string; set(command: string): void; close(): Promise<void> }>;
}

const CLAUDE: Agent = {
  name: 'claude',
  dialog: 'Do you want to proceed?',
  ready: '? for shortcuts',
  async prepare() {
    let command = '';
    const model = await startFakeAnthropic((req) => {
      if (!isAgentTurn(req)) return { text: 'Title' };
      if (toolResults(req).length > 0) return { text: 'Done.' };
      return { text: 'Running it.', toolUses: [{ name: 'Bash', input: { command, description: 'Mark the file' } }] };
    });
    const home = claudeHome(model.baseUrl);
    return {
      toml: [`command = ${JSON.stringify(agentBin('claude'))}`, 'kind = "claude"', 'args = ["--permission-mode", "default"]'],
      env: home.env,
      cwd: home.cwd,
      set: (c) => (command = c),
      close: async () => {
        await model.close();
        await removed(() => home.cleanup());
      },
    };
  },
};

const CODEX: Agent = {
  name: 'codex',
  dialog: 'Would you like to run the following command?',
  ready: 'Ask Codex to do anything',
  async prepare() {
    let command = '';
    const model = await startFakeResponses((req) => {
      if (toolNames(req).length === 0) return { text: 'Title' };
      if (req.input.at(-1)?.type === 'function_call_output') return { text: 'Done.' };
      const call = shellCall(req, command);
      return { text: 'Running it.', calls: [{ ...call, arguments: { ...call.arguments, sandbox_permissions: 'require_escalated' } }] };
    });
    const home = codexHome(model.baseUrl);
    rmSync(join(home.dir, 'hooks.json')); // its hooks would stop Codex on a trust screen
    const config = readFileSync(join(home.dir, 'config.toml'), 'utf8')
      .replace('approval_policy = "never"', 'approval_policy = "on-request"')
      .replace('sandbox_mode = "danger-full-access"', 'sandbox_mode = "workspace-write"');
    writeFileSync(join(home.dir, 'config.toml'), config);
    return {
      toml: [`command = ${JSON.stringify(agentBin('codex'))}`, 'kind = "codex"'],
      env: home.env,
      cwd: home.cwd,
      set: (c) => (command = c),
      close: async () => {
        await model.close();
        await removed(() => home.cleanup());
      },
    };
  },
};

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

interface Round {
  /** From the dialog on the client's screen to the ask on the stream, and to the push. */
  readonly ask: number;
  readonly push: number;
}

/** Pairs a phone (sandbox) the way the app does; its token never opens a stream, so it is in the background. */
async function pairPhone(bd: BenchDaemon): Promise<void> {
  const env = { ...process.env, TETHER_CONFIG: join(bd.tmux.dir, 'config.toml'), TETHER_DATA_DIR: bd.dataDir };
  const { stdout } = await run(process.execPath, [CLI, 'pair', '--json'], { env });
  const { pairingToken } = JSON.parse(stdout) as { pairingToken: string };
  const r = await fetch(`${bd.base}/pair`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ pairingToken, deviceName: 'phone', deviceToken: 'ab'.repeat(32), environment: 'sandbox' }),
  });
  if (r.status !== 201) throw new Error(`pairing: HTTP ${r.status} ${await r.text()}`);
}

async function rounds(agent: Agent, apns: ApnsStandIns, runs: number): Promise<Round[]> {
  const setup = await agent.prepare();
  const env: NodeJS.ProcessEnv = { ...setup.env, NODE_EXTRA_CA_CERTS: apns.caFile };
  for (const v of AGENT_ENV_CLEARED) env[v] = undefined;
  const toml = ['[agents.asker]', ...setup.toml, ...pushToml(apns.sandbox.url, apns.keyPath)].join('\n');
  try {
    return await withBenchDaemon(
      'shell-main',
      async (bd) => {
        await pairPhone(bd);
        const made = await bd.request('POST', '/sessions', { name: SESSION, agent: 'asker', cwd: setup.cwd });
        if (made.status !== 201) throw new Error(`creating the session: HTTP ${made.status} ${made.text}`);
        const term = new Terminal({ cols: 120, rows: 40, allowProposedApi: true });
        const screen = () => {
          const buf = term.buffer.active;
          let text = '';
          for (let y = 0; y < 40; y++) text += `${buf.getLine(buf.viewportY + y)?.translateToString(true) ?? ''}\n`;
          return text;
        };
        let dialogAt: number | null = null;
        let armed = false;
        const seen = () => {
          if (armed && dialogAt === null && screen().includes(agent.dialog)) dialogAt = performance.now();
        };
        const stream = new SessionStream({ baseUrl: bd.base, token: bd.token, session: SESSION });
        stream.on('snapshot', (bytes: Buffer) => {
          term.reset();
          term.write(new Uint8Array(bytes), seen);
        });
        stream.on('data', (bytes: Buffer) => term.write(new Uint8Array(bytes), seen));
        let last: StateFrame | null = null;
        /** The asks seen, by id: when each first came. */
        const asks = new Map<string, number>();
        let newest: string | null = null;
        stream.on('state', (frame: StateFrame) => {
          last = frame;
          if (frame.ask && !asks.has(frame.ask.id)) {
            asks.set(frame.ask.id, performance.now());
            newest = frame.ask.id;
          }
        });
        const pushes = new Map<string, number>();
        apns.sandbox.answer = (req) => {
          const askId = (req.payload as { askId?: string }).askId;
          if (askId && !pushes.has(askId)) pushes.set(askId, performance.now());
          return { status: 200 };
        };
        stream.connect();
        try {
          await waitFor(`${agent.name} ready`, () => screen().includes(agent.ready), AGENT_MS, 50);
          const out: Round[] = [];
          for (let i = 0; i < runs + 1; i++) {
            setup.set(`echo ran >> round-${i}.txt`);
            const prompt = `mark round ${i}`;
            dialogAt = null;
            const before = newest;
            stream.sendKeys(prompt);
            await waitFor('the prompt on screen', () => screen().includes(prompt), AGENT_MS, 20);
            armed = true;
            stream.sendKey('enter');
            const askId = await waitFor('the ask', () => (newest !== before ? newest : null), AGENT_MS, 5);
            await waitFor('the dialog on the screen', () => dialogAt, AGENT_MS, 5);
            const pushedAt = await waitFor('the push', () => pushes.get(askId) ?? null, AGENT_MS, 5);
            armed = false;
            // The first round warms the paths up (and Claude's first dialog comes after its own start-up work).
            if (i > 0) out.push({ ask: asks.get(askId)! - dialogAt!, push: pushedAt - dialogAt! });
            const answered = await bd.request('POST', `/sessions/${SESSION}/answer`, { ask: askId, choice: 'yes' });
            if (answered.status !== 200) throw new Error(`answering: HTTP ${answered.status} ${answered.text}`);
            await waitFor(
              'the turn to end',
              () => {
                const s = last;
                return s?.value === 'awaiting-input' && !s.ask;
              },
              AGENT_MS,
              20,
            );
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
    // What is left of the agent's home is the temp dir's to lose, never the round's error to hide.
    await setup.close().catch((err: Error) => process.stderr.write(`asks bench: ${err.message}\n`));
  }
}

/** A time from the dialog, negative when it came before the dialog showed. */
const signed = (v: number): string => (v < 0 ? `-${ms(-v)}` : ms(v));
const spread = (v: readonly number[]): string => `p50 ${signed(percentile(v, 50))}, max ${signed(Math.max(...v))}`;

export async function runAsksBench(): Promise<Row[]> {
  const runs = envNumber('TETHER_BENCH_ASKS_RUNS', 5);
  const dir = mkdtempSync(join(tmpdir(), 'tether-bench-asks-'));
  const apns = await startApnsStandIns(dir);
  try {
    const claude = await rounds(CLAUDE, apns, runs);
    const codex = await rounds(CODEX, apns, runs);
    const row = (name: string, v: number[], target: string, dialog: string): Row => ({
      name,
      value: spread(v),
      baseline: `t0: ${dialog} first on the client's screen`,
      ratio: '-',
      target,
    });
    return [
      row(
        "Claude's permission: its ask on the stream",
        claude.map((r) => r.ask),
        'max < 1 s',
        "Claude's dialog",
      ),
      row(
        "Claude's permission: its push at APNs",
        claude.map((r) => r.push),
        '-',
        "Claude's dialog",
      ),
      row(
        "Codex's approval: its ask on the stream",
        codex.map((r) => r.ask),
        '-',
        "Codex's dialog",
      ),
      row(
        "Codex's approval: its push at APNs",
        codex.map((r) => r.push),
        'max < 2 s',
        "Codex's dialog",
      ),
    ];
  } finally {
    await apns.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
