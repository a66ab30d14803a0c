/**
 * How soon a Live Activity shows an agent's change (docs/push.md "Live Activity"): the built
 * daemon with push pointed at the HTTP/2 TLS stand-in for APNs, a phone paired with its Live
 * Activity tokens given, and an agent on the agent socket (as pi's extension speaks it) that
 * starts working and ends its turn, round after round. Time zero is the state event written
 * to the agent socket; the figure is when the stand-in got the update that says it (working or
 * not). The product's debounce (2 s) is in the figure: it is what a phone sees.
 */
import { connect } from 'node:net';
import { AGENT_PROTOCOL_VERSION } from '../src/agent/wire/extension-channel.js';
import { agentSocketPath } from '../src/agent/wire/socket-path.js';
import { resolvePaths } from '../src/config/paths.js';
import { pushToml, type ApnsStandIns } from '../testkit/apns-server.js';
import { withBenchDaemon, type BenchDaemon } from './harness.js';
import { envNumber, ms, percentile, waitFor, type Row } from './figures.js';
import { pairPhone, withApnsStandIns } from './phone.js';

const SESSION = 'shell-main';
/** The debounce of docs/push.md "Live Activity": the floor of every figure here. */
const DEBOUNCE_MS = 2000;

/** Pairs a phone and gives its Live Activity tokens. */
async function pairPhoneWithActivity(bd: BenchDaemon): Promise<void> {
  const token = await pairPhone(bd, 'ab'.repeat(32));
  const given = await fetch(`${bd.base}/device/live-activity`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ pushToStartToken: 'a1'.repeat(40), updateToken: 'b2'.repeat(40) }),
  });
  if (given.status !== 200) throw new Error(`the Live Activity tokens: HTTP ${given.status} ${await given.text()}`);
}

/** The agent side of the agent socket for the session's pane: a hello, then events. */
async function agentOn(bd: BenchDaemon): Promise<{ event(name: string, extra?: object): void; close(): void }> {
  const pane = (await bd.tmux.tmux('display-message', '-p', '-t', SESSION, '#{pane_id}')).trim();
  // Where the daemon listens: the run dir its data dir implies, as it resolves it itself.
  const socket = connect(agentSocketPath(resolvePaths({ TETHER_DATA_DIR: bd.dataDir }).runDir));
  const send = (m: object) => socket.write(`${JSON.stringify(m)}\n`);
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.once('data', () => resolve());
    socket.once('connect', () =>
      send({
        type: 'hello',
        v: AGENT_PROTOCOL_VERSION,
        pane,
        tmuxSocket: bd.tmux.socket,
        pid: process.pid,
        state: 'idle',
        userMessages: [],
        userMessageCount: 0,
      }),
    );
  });
  return { event: (name, extra = {}) => send({ type: 'event', event: name, ...extra }), close: () => socket.destroy() };
}

export async function runActivityBench(): Promise<Row[]> {
  const runs = envNumber('TETHER_BENCH_ACTIVITY_RUNS', 10);
  return withApnsStandIns('activity', (apns) => activityRows(apns, runs));
}

async function activityRows(apns: ApnsStandIns, runs: number): Promise<Row[]> {
  /** When each update arrived, with how many agents it says work. */
  const updates: { at: number; working: number }[] = [];
  apns.sandbox.answer = (req) => {
    const aps = (req.payload as { aps?: { event?: string; 'content-state'?: { working?: number } } }).aps;
    if (aps?.event === 'update') updates.push({ at: performance.now(), working: aps['content-state']?.working ?? -1 });
    return { status: 200 };
  };
  const samples = await withBenchDaemon(
    SESSION,
    async (bd) => {
      await pairPhoneWithActivity(bd);
      const agent = await agentOn(bd);
      try {
        const out: number[] = [];
        const change = async (name: string, extra: object, working: number) => {
          const from = updates.length;
          const t0 = performance.now();
          agent.event(name, extra);
          const got = await waitFor(`the update saying ${working} working`, () => updates.slice(from).find((u) => u.working === working));
          return got.at - t0;
        };
        for (let i = 0; i < runs + 1; i++) {
          const a = await change('agent.start', {}, 1);
          const b = await change('agent.end', { idle: true }, 0);
          // The first round warms the paths up (the provider token, the connection).
          if (i > 0) out.push(a, b);
        }
        return out;
      } finally {
        agent.close();
      }
    },
    pushToml(apns.sandbox.url, apns.keyPath).join('\n'),
    undefined,
    undefined,
    { NODE_EXTRA_CA_CERTS: apns.caFile },
  );
  return [
    {
      name: 'Live Activity: agent state change to its update at APNs',
      value: `p50 ${ms(percentile(samples, 50))}, p99 ${ms(percentile(samples, 99))}`,
      baseline: `t0: the state event on the agent socket; ${DEBOUNCE_MS / 1000} s debounce included`,
      ratio: '-',
      target: 'p99 < 2.5 s',
    },
  ];
}
