/**
 * Answering Codex from the phone (docs/agents.md "Codex", "Asks and answers"), with the real
 * Codex 0.169 against the fake Responses server: `approval_policy = "on-request"` with a
 * workspace sandbox, the model asking to run a command outside it (`sandbox_permissions:
 * "require_escalated"`), so Codex stops and asks for approval. Codex says so on its terminal
 * (its OSC 7501 state); tether makes it an ask, pushes it, and types `y` or Escape for the phone.
 * The user's own `notify` program (in Codex's config.toml, replaced on the command line by
 * tether's) still runs at the end of each turn.
 *
 * One daemon and one Codex session for all of it; each test is one turn.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { AGENT_ENV_CLEARED } from '../../testkit/agent-bins.js';
import { startApnsStandIns, type ApnsStandIns } from '../../testkit/apns-server.js';
import { codexHome, type CodexHome } from '../../testkit/codex-home.js';
import { agentWithPushToml } from '../helpers/agent-config.js';
import { useDaemon } from '../helpers/daemon-fixture.js';
import { explainedBy, logTailOf } from '../helpers/daemon.js';
import { callOutputs, responsesText, shellCall, startFakeResponses, toolNames, type FakeResponses } from '../../testkit/fake-responses.js';
import { pairDevice, type PairedDevice } from '../helpers/pair-device.js';
import { shows as showsOn, stateFrames, type Mirror } from '../helpers/stream.js';
import { eventually } from '../helpers/tmux.js';
import type { Ask, StateFrame } from '../../src/protocol/frames.js';

/** A cold start of Codex on a busy two-core machine. */
const AGENT_START_MS = 90_000;
const TURN_MS = 90_000;
const TEST_MS = 300_000;
const POLL_MS = 100;
const PHONE = 'f6'.repeat(32);
const FINAL = 'tether-codex-final';
const JUSTIFICATION = 'it writes a file the test counts';

describe('Codex approvals, answered from the phone', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tether-asks-codex-'));
  let apns: ApnsStandIns;
  let responses: FakeResponses;
  let codex: CodexHome;
  let phone: PairedDevice;
  let m: Mirror;
  /** The command the model asks to run on the next turn (outside the sandbox). */
  let command = '';
  const env: NodeJS.ProcessEnv = {};

  beforeAll(async () => {
    apns = await startApnsStandIns(dir);
    responses = await startFakeResponses((req) => {
      if (toolNames(req).length === 0) return { text: 'Title' };
      if (req.input.at(-1)?.type === 'function_call_output')
        return { text: `${FINAL}: ${responsesText(callOutputs(req).at(-1)).slice(0, 80)}` };
      const call = shellCall(req, command);
      return {
        text: 'Running it.',
        calls: [{ ...call, arguments: { ...call.arguments, sandbox_permissions: 'require_escalated', justification: JUSTIFICATION } }],
      };
    });
    codex = codexHome(responses.baseUrl);
    // tether gives Codex its notify program; the recording hooks would stop Codex on a trust screen.
    rmSync(join(codex.dir, 'hooks.json'));
    // Asking before leaving a workspace sandbox, as most people run it; and the user's own notify program.
    const config = readFileSync(join(codex.dir, 'config.toml'), 'utf8')
      .replace('approval_policy = "never"', 'approval_policy = "on-request"')
      .replace('sandbox_mode = "danger-full-access"', 'sandbox_mode = "workspace-write"');
    writeFileSync(join(codex.dir, 'config.toml'), `notify = ${codex.notifyToml}\n${config}`);
    Object.assign(env, codex.env, { NODE_EXTRA_CA_CERTS: apns.caFile });
    for (const v of AGENT_ENV_CLEARED) env[v] = undefined;
  }, 60_000);

  afterAll(async () => {
    await apns?.close();
    await responses?.close();
    codex?.cleanup();
    rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  const fx = useDaemon(() => agentWithPushToml('codex', [], apns), { extraEnv: env });

  beforeAll(async () => {
    phone = await pairDevice(fx, 'phone', PHONE, 'sandbox');
    const r = await fx.json('POST', '/sessions', { name: 'cx', agent: 'codex', cwd: codex.cwd });
    expect(r.status, await r.clone().text()).toBe(201);
    m = fx.mirror('cx');
    await explained(shows(['OpenAI Codex (v0.169.0)', 'Ask Codex to do anything'], AGENT_START_MS, 'Codex ready on the client'));
  }, AGENT_START_MS + 60_000);

  const explained = <T>(p: Promise<T>): Promise<T> => explainedBy(fx.d, p, 60);
  const shows = (texts: string[], ms: number, what: string) => showsOn(m, texts, ms, what, POLL_MS);
  const states = (): StateFrame[] => stateFrames(m);
  const answer = (ask: string, choice: string) =>
    fetch(`${fx.d.base}/sessions/cx/answer`, {
      method: 'POST',
      headers: { authorization: `Bearer ${phone.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ask, choice }),
    });
  const runs = (file: string): number =>
    existsSync(join(codex.cwd, file)) ? readFileSync(join(codex.cwd, file), 'utf8').split('\n').filter(Boolean).length : 0;
  const pushesFor = (ask: string) => apns.sandbox.requests.filter((q) => (q.payload as { askId?: string }).askId === ask);

  /** Types a prompt whose turn asks to run `cmd`; resolves with the ask the client gets. */
  const ask = async (cmd: string, prompt: string): Promise<Ask> => {
    command = cmd;
    const seen = new Set(states().flatMap((s) => (s.ask ? [s.ask.id] : [])));
    m.stream.sendKeys(prompt);
    await explained(shows([prompt], TURN_MS, `the typed "${prompt}"`));
    m.stream.sendKey('enter');
    return explained(
      eventually(
        () => {
          const frame = states().find((s) => s.ask !== undefined && !seen.has(s.ask.id));
          if (!frame) throw new Error(`no new ask; states: ${JSON.stringify(states().slice(-4))}`);
          expect(frame.value).toBe('awaiting-input');
          return frame.ask!;
        },
        TURN_MS,
        POLL_MS,
        'an ask on the stream',
      ),
    );
  };

  test(
    "a command asking to leave the sandbox: awaiting-input with its ask and one push; allow runs it; the user's notify runs at the turn's end",
    async () => {
      const notifiesBefore = codex.notifications().filter((n) => n.type === 'agent-turn-complete').length;
      const a = await ask('echo ran >> allow.txt', 'mark allow');
      expect(a).toMatchObject({
        kind: 'permission',
        agent: 'codex',
        tool: 'exec_command',
        concern: 'echo ran >> allow.txt',
        detail: JUSTIFICATION,
      });
      expect(a.choices).toEqual([
        { id: 'yes', label: 'Yes, proceed' },
        { id: 'no', label: 'No, and tell Codex what to do differently' },
      ]);
      // The approval dialog is Codex's own, on the screen.
      await explained(shows(['Would you like to run the following command?'], TURN_MS, 'the approval dialog on the client'));
      expect(((await (await fx.d.get('/sessions/cx')).json()) as { ask: Ask | null }).ask).toEqual(a);
      await explained(eventually(() => pushesFor(a.id).length > 0, 30_000, POLL_MS, 'a push for the approval'));
      expect(pushesFor(a.id)[0]!.payload).toMatchObject({
        aps: {
          alert: { title: 'Codex asks to use exec_command', subtitle: 'cx', body: 'echo ran >> allow.txt' },
          category: 'TETHER_ASK_PERMISSION',
          'interruption-level': 'time-sensitive',
        },
        sessionId: 'cx',
        askId: a.id,
      });
      expect(runs('allow.txt')).toBe(0);

      const r = await answer(a.id, 'yes');
      expect(r.status, await r.clone().text()).toBe(200);
      expect(await r.json()).toEqual({ ask: a.id, choice: 'yes', landed: true, by: 'phone' });
      await explained(shows([FINAL], TURN_MS, 'the answer after the approval'));
      await explained(
        eventually(() => states().at(-1)?.value === 'awaiting-input' && !states().at(-1)?.ask, TURN_MS, POLL_MS, 'the turn ended'),
      );
      expect(runs('allow.txt')).toBe(1);
      // One push for the ask: the turn's end after an answer is not news.
      expect(pushesFor(a.id)).toHaveLength(1);
      // The user's own notify program ran at the end of the turn, with Codex's argument.
      await explained(
        eventually(
          () => codex.notifications().filter((n) => n.type === 'agent-turn-complete').length > notifiesBefore,
          30_000,
          POLL_MS,
          "the user's notify program at the turn's end",
        ),
      );
      expect(codex.notifications().at(-1)).toMatchObject({ type: 'agent-turn-complete', cwd: codex.cwd });
    },
    TEST_MS,
  );

  test(
    'deny: the command does not run',
    async () => {
      const a = await ask('echo ran >> deny.txt', 'mark deny');
      const r = await answer(a.id, 'no');
      expect(r.status, await r.clone().text()).toBe(200);
      expect(((await r.json()) as { landed: boolean }).landed).toBe(true);
      await explained(
        shows(['Exited (status 1) echo ran >> deny.txt', 'Conversation interrupted'], TURN_MS, "Codex's refusal on the client"),
      );
      await explained(
        eventually(() => states().at(-1)?.value === 'awaiting-input' && !states().at(-1)?.ask, TURN_MS, POLL_MS, 'Codex waits'),
      );
      expect(runs('deny.txt')).toBe(0);
      const again = await answer(a.id, 'yes');
      expect(again.status).toBe(409);
      expect(runs('deny.txt')).toBe(0);
    },
    TEST_MS,
  );

  test(
    'an answer sent on the stream the moment the ask appears lands once',
    async () => {
      command = 'echo ran >> early.txt';
      let sent = '';
      const onState = (frame: StateFrame) => {
        if (frame.ask && sent === '') {
          sent = frame.ask.id;
          m.stream.answer(frame.ask.id, 'yes');
        }
      };
      const errorsBefore = m.errors().length;
      m.stream.on('state', onState);
      try {
        m.stream.sendKeys('mark early');
        await explained(shows(['mark early'], TURN_MS, 'the typed prompt'));
        m.stream.sendKey('enter');
        await explained(
          eventually(
            () => {
              if (m.errors().length > errorsBefore) throw new Error(`error frames: ${JSON.stringify(m.errors().slice(errorsBefore))}`);
              return m.received.find((x) => x.kind === 'answered' && x.frame.ask === sent);
            },
            TURN_MS,
            POLL_MS,
            'the answered frame',
          ),
        );
      } finally {
        m.stream.off('state', onState);
      }
      const landed = m.received.find((x) => x.kind === 'answered' && x.frame.ask === sent);
      expect(landed, `states: ${JSON.stringify(states().slice(-6))}\nscreen:\n${await m.text()}\n${logTailOf(fx.d, 30)}`).toMatchObject({
        frame: { landed: true },
      });
      await explained(shows([FINAL, 'early.txt'], TURN_MS, 'the answer after the early approval'));
      await explained(
        eventually(() => states().at(-1)?.value === 'awaiting-input' && !states().at(-1)?.ask, TURN_MS, POLL_MS, 'the turn ended'),
      );
      expect(runs('early.txt')).toBe(1);
    },
    TEST_MS,
  );
});
