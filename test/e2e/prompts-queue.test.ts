/**
 * The prompt queue with the real pi (docs/api.md "Prompts"), as a phone uses it while the agent
 * works: a prompt sent during a slow tool turn waits (`queued`) and reaches the model only after
 * that turn's answer, once; a cancelled one never does; one queued when the daemon is SIGKILLed is
 * typed once after the restart, after the turn it waited for, and one queued at a reboot (the tmux
 * server gone too) once the session is restored, from its record; the same id sent three times (twice
 * over REST, once over the stream) is one submission. The slow tool is a shell command that waits
 * for a file the test makes, so the turn lasts exactly as long as the test needs.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import WebSocket from 'ws';
import { piWithPushToml } from '../helpers/agent-config.js';
import { TURN_MS, useRealAgent } from '../helpers/agent-fixture.js';
import { lastOfRole, messageText, type ChatRequest, type FakeReply } from '../helpers/fake-model.js';
import { agentState, listedPrompts, promptDecided, TURNS, turnsWith } from '../helpers/prompt-runs.js';
import { piParts } from '../helpers/prompt-suite.js';
import { eventually } from '../helpers/tmux.js';
import type { PromptRecord } from '../../src/protocol/prompt.js';
import { processExists } from '../../src/process.js';

const TEST_MS = 240_000;
const POLL_MS = 100;
const SESSION = 'pq';

/** Where the slow tool's release files go. */
const gates = mkdtempSync(join(tmpdir(), 'tether-prompt-gates-'));
afterAll(() => rmSync(gates, { recursive: true, force: true }));
const gate = (name: string) => join(gates, name);
const release = (name: string) => writeFileSync(gate(name), 'go\n');

/** "run the slow tool <name>": a shell call that waits for its release file; after a tool, its answer; else "ok". */
function reply(req: ChatRequest): FakeReply {
  const last = req.messages.at(-1);
  if (last?.role === 'tool') return { text: `the slow tool answered: ${messageText(last).trim().slice(0, 60)}` };
  const slow = /^run the slow tool (\w+)$/.exec(messageText(lastOfRole(req, 'user')).trim());
  if (slow) {
    const file = gate(slow[1]!);
    const command = `while [ ! -e '${file}' ]; do sleep 0.1; done; echo released-${slow[1]}`;
    return { text: 'Running it.', toolCalls: [{ name: 'bash', arguments: { command } }] };
  }
  return { text: 'ok' };
}

describe('the prompt queue, with the real pi', () => {
  const a = useRealAgent({
    prefix: 'tether-prompts-queue-',
    start: piParts(reply),
    toml: piWithPushToml,
    phone: 'e1'.repeat(32),
    session: { name: SESSION, agent: 'pi', ready: ['fake-agent'] },
  });
  const turns = () => TURNS.pi(a.fake.requests);
  const requests = () => a.fake.requests as readonly ChatRequest[];
  /** The index of the first request whose last message is the slow tool's result for `name`. */
  const toolAnswerAt = (name: string) =>
    requests().findIndex((r) => r.messages.at(-1)?.role === 'tool' && messageText(r.messages.at(-1)).includes(`released-${name}`));
  const firstWith = (text: string) => requests().findIndex((r) => messageText(lastOfRole(r, 'user')) === text);
  const post = async (body: { text: string; id?: string }) => {
    const res = await a.fx.json('POST', `/sessions/${SESSION}/prompt`, body);
    return { status: res.status, record: (await res.json()) as PromptRecord };
  };
  const statusOf = async (id: string) => (await listedPrompts(a.fx, SESSION)).find((p) => p.id === id)?.status;
  /** Starts a slow tool turn and waits until the tool runs. */
  const slowTurn = async (name: string) => {
    await a.explained(promptDecided(a.fx, SESSION, { text: `run the slow tool ${name}` }, TURN_MS));
    await a.explained(eventually(async () => (await agentState(a.fx, SESSION)) === 'tool', TURN_MS, POLL_MS, 'the slow tool running'));
  };
  const waiting = () =>
    eventually(async () => (await agentState(a.fx, SESSION)) === 'awaiting-input', TURN_MS, POLL_MS, 'the agent waiting');

  test(
    'a prompt sent during a slow tool turn is queued and reaches the model once, after that turn answered',
    async () => {
      await slowTurn('one');
      const sent = await post({ text: 'the prompt that waits its turn', id: 'waits' });
      expect(sent.status).toBe(202);
      expect(sent.record.status).toBe('queued');
      // The tool still runs, the prompt still waits: nothing typed into the running turn.
      expect(await agentState(a.fx, SESSION)).toBe('tool');
      expect(await statusOf('waits')).toBe('queued');
      // Its machine is on the operator's view, in the state the list says.
      const ops = (await (await a.fx.d.get('/ops/actors')).json()) as { actors: { id: string; machine: string | null; value: unknown }[] };
      expect(ops.actors.find((x) => x.id === `session:${SESSION}/prompt:waits`)).toMatchObject({ machine: 'prompt', value: 'queued' });
      expect(firstWith('the prompt that waits its turn')).toBe(-1);
      release('one');
      await a.explained(eventually(async () => (await statusOf('waits')) === 'submitted', TURN_MS, POLL_MS, 'the queued prompt submitted'));
      await a.explained(eventually(() => firstWith('the prompt that waits its turn') >= 0, TURN_MS, POLL_MS, 'the prompt at the model'));
      await a.explained(waiting());
      expect(firstWith('the prompt that waits its turn')).toBeGreaterThan(toolAnswerAt('one'));
      expect(turnsWith(turns(), 'the prompt that waits its turn')).toBe(1);
    },
    TEST_MS,
  );

  test(
    'a queued prompt cancelled is never typed; the next one goes in its place',
    async () => {
      await slowTurn('two');
      expect((await post({ text: 'the prompt that is cancelled', id: 'cancelled' })).record.status).toBe('queued');
      const res = await a.fx.json('DELETE', `/sessions/${SESSION}/prompts/cancelled`);
      expect(res.status, await res.clone().text()).toBe(200);
      expect(((await res.json()) as PromptRecord).status).toBe('cancelled');
      const again = await a.fx.json('DELETE', `/sessions/${SESSION}/prompts/cancelled`);
      expect(again.status).toBe(409);
      release('two');
      await a.explained(waiting());
      // The queue moved past it: a prompt sent now is submitted, and the cancelled one never was.
      await a.explained(promptDecided(a.fx, SESSION, { text: 'the prompt after the cancelled one' }, TURN_MS));
      await a.explained(
        eventually(() => firstWith('the prompt after the cancelled one') >= 0, TURN_MS, POLL_MS, 'the next prompt at the model'),
      );
      expect(turnsWith(turns(), 'the prompt that is cancelled')).toBe(0);
      expect(await statusOf('cancelled')).toBe('cancelled');
    },
    TEST_MS,
  );

  test(
    'the daemon SIGKILLed with a prompt queued: after the restart it is typed once, after the turn it waited for',
    async () => {
      await slowTurn('three');
      expect((await post({ text: 'the prompt that outlives the daemon', id: 'outlives' })).record.status).toBe('queued');
      await a.fx.d.kill();
      await a.fx.startAgain();
      // Read back from tmux, still queued: the turn it waits for goes on.
      expect(await statusOf('outlives')).toBe('queued');
      expect(firstWith('the prompt that outlives the daemon')).toBe(-1);
      release('three');
      await a.explained(
        eventually(async () => (await statusOf('outlives')) === 'submitted', TURN_MS, POLL_MS, 'submitted after the restart'),
      );
      await a.explained(
        eventually(() => firstWith('the prompt that outlives the daemon') >= 0, TURN_MS, POLL_MS, 'the prompt at the model'),
      );
      await a.explained(waiting());
      expect(firstWith('the prompt that outlives the daemon')).toBeGreaterThan(toolAnswerAt('three'));
      expect(turnsWith(turns(), 'the prompt that outlives the daemon')).toBe(1);
    },
    TEST_MS,
  );

  test(
    'a reboot with a prompt queued (the daemon stopped, the tmux server gone): the session is restored and the prompt typed once from its record',
    async () => {
      await slowTurn('five');
      expect((await post({ text: 'the prompt that outlives a reboot', id: 'reboot' })).record.status).toBe('queued');
      await a.fx.d.stop();
      const pid = Number((await a.fx.tmux.tmux('display-message', '-p', '#{pid}')).trim());
      process.kill(pid, 'SIGKILL');
      await eventually(() => !processExists(pid), 15_000, 25, 'the tmux server gone');
      await a.fx.startAgain();
      // The session is made again and pi reopens its conversation; the turn the prompt waited for
      // died with the server, so the restored pi waits for input and the prompt is typed, once.
      await a.explained(eventually(async () => (await statusOf('reboot')) === 'submitted', TURN_MS, POLL_MS, 'submitted after the reboot'));
      await a.explained(eventually(() => firstWith('the prompt that outlives a reboot') >= 0, TURN_MS, POLL_MS, 'the prompt at the model'));
      await a.explained(waiting());
      expect(turnsWith(turns(), 'the prompt that outlives a reboot')).toBe(1);
    },
    TEST_MS,
  );

  test(
    'the same id three times, twice over REST and once over the stream, is one submission',
    async () => {
      await slowTurn('four');
      const body = { text: 'the prompt sent three times', id: 'thrice' };
      const first = await post(body);
      expect(first.status).toBe(202);
      const second = await post(body);
      expect(second.status).toBe(200);
      expect(second.record).toMatchObject({ id: 'thrice', status: 'queued', createdAt: first.record.createdAt });
      const frame = await promptOverStream(a.fx.d.base, a.fx.d.token, body);
      expect(frame).toMatchObject({ id: 'thrice', text: body.text, createdAt: first.record.createdAt });
      expect((await post({ text: 'another text', id: 'thrice' })).status).toBe(409);
      release('four');
      await a.explained(eventually(async () => (await statusOf('thrice')) === 'submitted', TURN_MS, POLL_MS, 'submitted'));
      await a.explained(eventually(() => firstWith(body.text) >= 0, TURN_MS, POLL_MS, 'the prompt at the model'));
      await a.explained(waiting());
      expect(turnsWith(turns(), body.text)).toBe(1);
      // Once decided, the same id again is answered as it stands and types nothing.
      const late = await post(body);
      expect(late.status).toBe(200);
      expect(late.record.status).toBe('submitted');
    },
    TEST_MS,
  );
});

/** Sends one `prompt` message on a new stream socket; resolves with the first `prompt` frame of that id. */
function promptOverStream(base: string, token: string, body: { text: string; id: string }): Promise<PromptRecord> {
  const url = `${base.replace(/^http/, 'ws')}/sessions/${SESSION}/stream?token=${encodeURIComponent(token)}`;
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { rejectUnauthorized: false });
    const timer = setTimeout(() => {
      ws.terminate();
      reject(new Error('no prompt frame within 30 s'));
    }, 30_000);
    ws.on('open', () => ws.send(JSON.stringify({ type: 'prompt', ...body })));
    ws.on('message', (data: Buffer, binary) => {
      if (binary) return;
      const text = data.toString('utf8');
      const frame = JSON.parse(text) as { type: string; prompt?: PromptRecord };
      if (frame.type === 'error') {
        clearTimeout(timer);
        ws.close();
        reject(new Error(`error frame: ${text}`));
      }
      if (frame.type === 'prompt' && frame.prompt?.id === body.id) {
        clearTimeout(timer);
        ws.close();
        resolve(frame.prompt);
      }
    });
    ws.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}
