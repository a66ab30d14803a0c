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
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { StateFrame } from '../src/protocol/frames.js';
import type { ApnsStandIns } from '../testkit/apns-server.js';
import { isAgentTurn, startFakeAnthropic, toolResults } from '../testkit/fake-anthropic.js';
import { shellCall, startFakeResponses, toolNames } from '../testkit/fake-responses.js';
import { AGENT_MS, claudeSetup, codexSetup, onAgentStage, timeRow, type AgentSetup } from './agent-rounds.js';
import { envNumber, waitFor, type Row } from './figures.js';
import { withApnsStandIns } from './phone.js';

/** The command a round's turn asks to run; the round sets it before its prompt. */
interface Next {
  command: string;
}

interface Agent {
  readonly name: 'claude' | 'codex';
  /** What its dialog says on the screen. */
  readonly dialog: string;
  /** What its screen says once it is ready for a prompt. */
  readonly ready: string;
  prepare(next: Next): Promise<AgentSetup>;
}

/** Claude Code asking before each command; its model asks for `next.command` with Bash. */
async function claudeAsking(next: Next): Promise<AgentSetup> {
  const model = await startFakeAnthropic((req) => {
    if (!isAgentTurn(req)) return { text: 'Title' };
    if (toolResults(req).length > 0) return { text: 'Done.' };
    return { text: 'Running it.', toolUses: [{ name: 'Bash', input: { command: next.command, description: 'Mark the file' } }] };
  });
  return claudeSetup(model);
}

/** Codex asking for approval of commands outside its sandbox; its model asks for `next.command` escalated. */
async function codexAsking(next: Next): Promise<AgentSetup> {
  const model = await startFakeResponses((req) => {
    if (toolNames(req).length === 0) return { text: 'Title' };
    if (req.input.at(-1)?.type === 'function_call_output') return { text: 'Done.' };
    const call = shellCall(req, next.command);
    return { text: 'Running it.', calls: [{ ...call, arguments: { ...call.arguments, sandbox_permissions: 'require_escalated' } }] };
  });
  return codexSetup(model, (home) => {
    const config = readFileSync(join(home.dir, 'config.toml'), 'utf8')
      .replace('approval_policy = "never"', 'approval_policy = "on-request"')
      .replace('sandbox_mode = "danger-full-access"', 'sandbox_mode = "workspace-write"');
    writeFileSync(join(home.dir, 'config.toml'), config);
  });
}

const CLAUDE: Agent = { name: 'claude', dialog: 'Do you want to proceed?', ready: 'manual mode on', prepare: claudeAsking };
const CODEX: Agent = {
  name: 'codex',
  dialog: 'Would you like to run the following command?',
  ready: 'Ask Codex to do anything',
  prepare: codexAsking,
};

/** Per round, from the dialog on the client's screen: to the ask on the stream, and to its push. */
interface Rounds {
  readonly onStream: number[];
  readonly atApns: number[];
}

const askOf = (frame: StateFrame): string | null => frame.ask?.id ?? null;

async function rounds(agent: Agent, apns: ApnsStandIns, runs: number): Promise<Rounds> {
  const next: Next = { command: '' };
  const setup = await agent.prepare(next);
  const opts = { name: agent.name, session: 'asker', ready: agent.ready, pushId: 'askId', idOf: askOf, deviceToken: 'ab'.repeat(32) };
  return onAgentStage(opts, setup, apns, async (stage) => {
    let dialogAt: number | null = null;
    let armed = false;
    stage.onScreen(() => {
      if (armed && dialogAt === null && stage.screen().includes(agent.dialog)) dialogAt = performance.now();
    });
    const out: Rounds = { onStream: [], atApns: [] };
    for (let i = 0; i < runs + 1; i++) {
      next.command = `echo ran >> round-${i}.txt`;
      dialogAt = null;
      const before = stage.newest();
      await stage.type(`mark round ${i}`);
      armed = true;
      stage.stream.sendKey('enter');
      const askId = await stage.next(before, 'the ask');
      const at = await waitFor('the dialog on the screen', () => dialogAt, AGENT_MS, 5);
      const pushedAt = await waitFor('the push', () => stage.pushes.get(askId) ?? null, AGENT_MS, 5);
      armed = false;
      // The first round warms the paths up (and Claude's first dialog comes after its own start-up work).
      if (i > 0) {
        out.onStream.push(stage.seen.get(askId)! - at);
        out.atApns.push(pushedAt - at);
      }
      const answered = await stage.bd.request('POST', `/sessions/${opts.session}/answer`, { ask: askId, choice: 'yes' });
      if (answered.status !== 200) throw new Error(`answering: HTTP ${answered.status} ${answered.text}`);
      await waitFor(
        'the turn to end',
        () => {
          const s = stage.last();
          return s?.value === 'awaiting-input' && !s.ask;
        },
        AGENT_MS,
        20,
      );
    }
    return out;
  });
}

export async function runAsksBench(): Promise<Row[]> {
  const runs = envNumber('TETHER_BENCH_ASKS_RUNS', 5);
  const { claude, codex } = await withApnsStandIns('asks', async (apns) => ({
    claude: await rounds(CLAUDE, apns, runs),
    codex: await rounds(CODEX, apns, runs),
  }));
  return [
    timeRow("Claude's permission: its ask on the stream", claude.onStream, 'max', 'max < 1 s', "Claude's dialog"),
    timeRow("Claude's permission: its push at APNs", claude.atApns, 'max', '-', "Claude's dialog"),
    timeRow("Codex's approval: its ask on the stream", codex.onStream, 'max', '-', "Codex's dialog"),
    timeRow("Codex's approval: its push at APNs", codex.atApns, 'max', 'max < 2 s', "Codex's dialog"),
  ];
}
