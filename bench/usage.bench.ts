/**
 * How soon an agent's usage windows reach the stream (docs/api.md "Usage"): the real pi (as tether
 * bundles it, its tether extension reading each model answer's rate-limit headers) in a session of
 * the built daemon, against the fake chat-completions server, whose answers to the agent's turns
 * carry Codex's `x-codex-primary-*` / `x-codex-secondary-*` headers as the real service sends them,
 * with new figures at every answer. A client on the session's stream renders it in
 * @xterm/headless.
 *
 * Each round is one prompt (`POST /sessions/:id/prompt`) to the idle agent; time zero is the moment
 * the fake sends the answer carrying the headers. The figure is the first `state` frame on the
 * stream with the answer's figures in its `usage`. The baseline, from the same answer in the same
 * round: the agent's own turn-end `state` frame (`awaiting-input`) on the stream; the table also
 * gives the answer's text on the client's screen. A first round warms up and is not counted. The
 * issue gives no target: a p99 under 1 s. `TETHER_BENCH_USAGE_RUNS` rounds (20).
 */
import xtermHeadless from '@xterm/headless';
import type { StateFrame } from '../src/protocol/frames.js';
import { processExists } from '../src/process.js';
import { SessionStream } from '../src/reference-client/index.js';
import { AGENT_ENV_CLEARED } from '../testkit/agent-bins.js';
import { offersTools, startFakeChat } from '../testkit/fake-chat.js';
import { piBenchHome } from '../testkit/pi-home.js';
import { AGENT_MS } from './agent-rounds.js';
import { envNumber, ms, percentile, sleep, waitFor, type Row } from './figures.js';
import { withBenchDaemon, type BenchDaemon } from './harness.js';
import { paneTree } from './procs.js';

const { Terminal } = xtermHeadless;
const SESSION = 'pi';
const COLS = 120;
const ROWS = 40;
/** The target: the issue names none. */
const TARGET_P99_MS = 1000;

/** The figures one answer carries: the 5-hour window's percent and the weekly one's. */
interface Figures {
  readonly primary: number;
  readonly secondary: number;
}

/** Round `i`'s figures: new at every answer, under 80 % (no warning pushed meanwhile). */
const figuresOf = (i: number): Figures => ({ primary: 10 + 3 * i, secondary: 2 + i });

/** Codex's rate-limit headers for `f`, the resets an hour and five days ahead (unix seconds). */
function codexHeaders(f: Figures, now: number): Record<string, string> {
  const s = Math.floor(now / 1000);
  return {
    'x-codex-primary-used-percent': String(f.primary),
    'x-codex-primary-window-minutes': '300',
    'x-codex-primary-reset-at': String(s + 3600),
    'x-codex-secondary-used-percent': String(f.secondary),
    'x-codex-secondary-window-minutes': '10080',
    'x-codex-secondary-reset-at': String(s + 5 * 86_400),
  };
}

/** One round's times from the answer (ms); null when it never came. */
interface UsageSample {
  readonly usage: number;
  readonly turnEnd: number;
  readonly screen: number | null;
  /** Where the usage came against the turn's end: in an earlier frame, in the turn-end frame itself, in a later one. */
  readonly order: 'before' | 'same' | 'after';
}

/** What the client sees: its screen, and each state frame with when it came. */
interface Client {
  screen(): string;
  readonly states: { frame: StateFrame; at: number }[];
  close(): void;
}

function connect(bd: BenchDaemon): Client {
  const term = new Terminal({ cols: COLS, rows: ROWS, allowProposedApi: true });
  const stream = new SessionStream({ baseUrl: bd.base, token: bd.token, session: SESSION });
  const states: { frame: StateFrame; at: number }[] = [];
  stream.on('snapshot', (bytes: Buffer) => {
    term.reset();
    term.write(new Uint8Array(bytes));
  });
  stream.on('data', (bytes: Buffer) => term.write(new Uint8Array(bytes)));
  stream.on('state', (frame: StateFrame) => states.push({ frame, at: performance.now() }));
  stream.connect();
  return {
    screen: () => {
      const buf = term.buffer.active;
      let text = '';
      for (let y = 0; y < ROWS; y++) text += `${buf.getLine(buf.viewportY + y)?.translateToString(true) ?? ''}\n`;
      return text;
    },
    states,
    close: () => {
      stream.close();
      term.dispose();
    },
  };
}

const fiveHourOf = (frame: StateFrame): number | undefined => frame.usage?.windows.find((w) => w.name === 'five_hour')?.usedPercent;

export async function runUsageBench(): Promise<{ rows: Row[]; markdown: string }> {
  const runs = envNumber('TETHER_BENCH_USAGE_RUNS', 20);
  /** The figures the next answer to a turn carries, and when each such answer was sent (by its figures). */
  let next: Figures = figuresOf(0);
  const answered = new Map<number, number>();
  const fake = await startFakeChat((req, n) => {
    if (!offersTools(req)) return { text: 'Prompt title' };
    const f = next;
    answered.set(f.primary, performance.now());
    return { text: `answer ${n} at ${f.primary} percent`, headers: codexHeaders(f, Date.now()) };
  });
  const home = piBenchHome(fake.baseUrl);
  const env: NodeJS.ProcessEnv = {};
  for (const v of AGENT_ENV_CLEARED) env[v] = undefined;
  Object.assign(env, home.env);
  const toml = [`[agents.${SESSION}]`, 'command = "pi"', 'kind = "pi"'].join('\n');
  let pids: number[] = [];
  const samples: UsageSample[] = [];
  try {
    await withBenchDaemon(
      'shell-main',
      async (bd) => {
        const made = await bd.request('POST', '/sessions', { name: SESSION, agent: SESSION, cwd: home.cwd });
        if (made.status !== 201) throw new Error(`creating the session: HTTP ${made.status} ${made.text}`);
        const client = connect(bd);
        try {
          await waitFor('pi ready', () => client.screen().includes('fake-agent'), AGENT_MS, 50).catch((err: Error) => {
            throw new Error(`${err.message}; the client's screen:\n${client.screen()}`);
          });
          for (let i = 0; i <= runs; i++) {
            next = figuresOf(i);
            const { primary } = next;
            const from = client.states.length;
            const res = await bd.request('POST', `/sessions/${SESSION}/prompt`, { text: `how much is left, round ${i}`, id: `u-${i}` });
            if (res.status !== 202) throw new Error(`prompt ${i}: HTTP ${res.status} ${res.text}`);
            const t0 = await waitFor(`round ${i}: the answer at ${primary} %`, () => answered.get(primary), AGENT_MS, 5);
            const after = () => client.states.slice(from).filter((s) => s.at >= t0);
            const usage = await waitFor(`round ${i}: usage at ${primary} % on the stream`, () =>
              after().find((s) => fiveHourOf(s.frame) === primary),
            );
            const turnEnd = await waitFor(`round ${i}: the turn's end on the stream`, () =>
              after().find((s) => s.frame.value === 'awaiting-input'),
            );
            const text = `at ${primary} percent`;
            const screenAt = await waitFor(`round ${i}: the answer on the client's screen`, () =>
              client.screen().includes(text) ? performance.now() : null,
            ).catch(() => null);
            const order = usage === turnEnd ? 'same' : client.states.indexOf(usage) < client.states.indexOf(turnEnd) ? 'before' : 'after';
            if (i > 0)
              samples.push({ usage: usage.at - t0, turnEnd: turnEnd.at - t0, screen: screenAt === null ? null : screenAt - t0, order });
            // The next prompt goes to an agent that waits, once its turn's last frames are in.
            await sleep(100);
          }
        } finally {
          // The session's pane process and its descendants: the pi this bench started.
          pids = await paneTree(bd.tmux, `=${SESSION}`);
          client.close();
        }
      },
      toml,
      false,
      undefined,
      env,
    );
  } finally {
    // pi follows its tmux server; one still there after 5 s is ended (it is this bench's).
    await waitFor('pi gone', () => pids.every((p) => !processExists(p)), 5000, 100).catch(() => {
      for (const pid of pids.filter((p) => processExists(p))) process.kill(pid, 'SIGTERM');
    });
    await fake.close();
    home.cleanup();
  }
  const usage = samples.map((s) => s.usage);
  const turnEnd = samples.map((s) => s.turnEnd);
  const screen = samples.map((s) => s.screen).filter((v): v is number => v !== null);
  const p = percentile;
  const row: Row = {
    name: `usage: model answer's headers to \`usage\` on the stream (pi, ${samples.length})`,
    value: `p50 ${ms(p(usage, 50))}, p99 ${ms(p(usage, 99))}`,
    baseline: `the same answer to pi's turn-end state frame: p50 ${ms(p(turnEnd, 50))}, p99 ${ms(p(turnEnd, 99))}`,
    ratio: `${(p(usage, 50) / p(turnEnd, 50)).toFixed(2)}x`,
    target: `p99 < ${TARGET_P99_MS / 1000} s`,
  };
  const markdown = [
    '| from the answer (pi) | p50 | p99 | max |',
    '| --- | --- | --- | --- |',
    `| its text on the client's screen | ${ms(p(screen, 50))} | ${ms(p(screen, 99))} | ${ms(Math.max(...screen))} |`,
    `| \`usage\` with its figures on the stream | ${ms(p(usage, 50))} | ${ms(p(usage, 99))} | ${ms(Math.max(...usage))} |`,
    `| the turn's end (\`awaiting-input\`) on the stream | ${ms(p(turnEnd, 50))} | ${ms(p(turnEnd, 99))} | ${ms(Math.max(...turnEnd))} |`,
    '',
    `The usage came in a frame of its own before the turn's end in ${samples.filter((s) => s.order === 'before').length} of ${samples.length} rounds, in the turn-end frame itself in ${samples.filter((s) => s.order === 'same').length}, after it in ${samples.filter((s) => s.order === 'after').length}.`,
    '',
  ].join('\n');
  return { rows: [row], markdown };
}
