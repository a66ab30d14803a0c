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
import type { StateFrame } from '../src/protocol/frames.js';
import { isAgentTurn, startFakeAnthropic, usageLimitReply } from '../testkit/fake-anthropic.js';
import { startFakeResponses, toolNames } from '../testkit/fake-responses.js';
import { AGENT_MS, claudeSetup, codexSetup, onAgentStage, timeRow, type AgentSetup, type AgentStage } from './agent-rounds.js';
import { envNumber, waitFor, type Row } from './figures.js';
import { withApnsStandIns } from './phone.js';
import type { ApnsStandIns } from '../testkit/apns-server.js';

interface Agent {
  readonly name: 'claude' | 'codex';
  /** What its screen says when it stops; what it says once ready for a prompt. */
  readonly stopped: string;
  readonly ready: string;
  /** A notice it leaves on screen that takes the keys until Escape (Claude's usage limit), or null. */
  readonly notice: string | null;
  prepare(): Promise<AgentSetup>;
}

const CLAUDE: Agent = {
  name: 'claude',
  stopped: "You've hit your",
  ready: 'manual mode on',
  notice: 'Esc to cancel',
  async prepare() {
    const reset = Math.ceil(Date.now() / 60_000) * 60 + 3 * 3600;
    const model = await startFakeAnthropic((req) => (isAgentTurn(req) ? usageLimitReply(reset) : { text: 'Title' }));
    // Logged in as a subscriber, not with the key: the usage limit is a subscriber's.
    return claudeSetup(model, (home) => {
      const { ANTHROPIC_API_KEY: _key, ...env } = home.env;
      return { ...env, CLAUDE_CODE_OAUTH_TOKEN: 'tether-fake-oauth-token' };
    });
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
    return codexSetup(model);
  },
};

/** Per round, from the stop on the client's screen: to the stop on the stream, and to its push. */
interface Rounds {
  readonly onStream: number[];
  readonly atApns: number[];
}

/** A stop the phone is told of: any but the end of a turn that went well. */
const stopOf = (frame: StateFrame): string | null => (frame.stop && frame.stop.kind !== 'done' ? frame.stop.id : null);

async function rounds(agent: Agent, apns: ApnsStandIns, runs: number): Promise<Rounds> {
  const opts = { name: agent.name, session: 'stopper', ready: agent.ready, pushId: 'stopId', idOf: stopOf, deviceToken: 'cd'.repeat(32) };
  return onAgentStage(opts, await agent.prepare(), apns, async (stage) => {
    /** How many times the stop's words are on the screen, and when the count last grew. */
    let shown = 0;
    let shownAt = 0;
    stage.onScreen(() => {
      const n = stage.screen().split(agent.stopped).length - 1;
      if (n > shown) shownAt = performance.now();
      shown = n;
    });
    const out: Rounds = { onStream: [], atApns: [] };
    for (let i = 0; i < runs + 1; i++) {
      const before = stage.newest();
      const shownBefore = shownAt;
      await stage.type(`round ${i}`);
      stage.stream.sendKey('enter');
      const stopId = await stage.next(before, 'the stop');
      const at = await waitFor('the stop on the screen', () => (shownAt !== shownBefore ? shownAt : null), AGENT_MS, 5);
      const pushedAt = await waitFor('the push', () => stage.pushes.get(stopId) ?? null, AGENT_MS, 5);
      if (i > 0) {
        out.onStream.push(stage.seen.get(stopId)! - at);
        out.atApns.push(pushedAt - at);
      }
      if (agent.notice !== null) await dismiss(stage, agent.notice);
    }
    return out;
  });
}

/** Presses Escape until `notice` is off the screen. */
async function dismiss(stage: AgentStage, notice: string): Promise<void> {
  await waitFor(
    'the notice dismissed',
    () => {
      if (!stage.screen().includes(notice)) return true;
      stage.stream.sendKey('escape');
      return null;
    },
    AGENT_MS,
    300,
  );
}

export async function runStopsBench(): Promise<Row[]> {
  const runs = envNumber('TETHER_BENCH_STOPS_RUNS', 10);
  const { claude, codex } = await withApnsStandIns('stops', async (apns) => ({
    claude: await rounds(CLAUDE, apns, runs),
    codex: await rounds(CODEX, apns, runs),
  }));
  const limit = "Claude's limit notice";
  return [
    timeRow("Claude's usage limit: the stop on the stream", claude.onStream, 'p99', 'p99 < 2 s', limit),
    timeRow("Claude's usage limit: its push at APNs", claude.atApns, 'p99', 'p99 < 2 s', limit),
    timeRow("Codex's API error: the stop on the stream", codex.onStream, 'p99', 'p99 < 2 s', "Codex's error"),
    timeRow("Codex's API error: its push at APNs", codex.atApns, 'p99', 'p99 < 2 s', "Codex's error"),
  ];
}
