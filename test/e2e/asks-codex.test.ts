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
import { describe, expect, test } from 'vitest';
import { callOutputs, responsesText, shellCall, toolNames } from '../../testkit/fake-responses.js';
import { answered, answeredAsItAppears, newAsk, turnEnded } from '../helpers/agent-asks.js';
import { TURN_MS, useRealAgent } from '../helpers/agent-fixture.js';
import { CODEX_CX, codexParts } from '../helpers/agent-parts.js';
import { logTailOf } from '../helpers/daemon.js';
import { stateFrames } from '../helpers/stream.js';
import { eventually } from '../helpers/tmux.js';
import type { Ask } from '../../src/protocol/frames.js';

const TEST_MS = 300_000;
const POLL_MS = 100;
const FINAL = 'tether-codex-final';
const JUSTIFICATION = 'it writes a file the test counts';

describe('Codex approvals, answered from the phone', () => {
  /** The command the model asks to run on the next turn (outside the sandbox). */
  let command = '';
  const agent = useRealAgent({
    ...CODEX_CX,
    prefix: 'tether-asks-codex-',
    start: codexParts(
      (req) => {
        if (toolNames(req).length === 0) return { text: 'Title' };
        if (req.input.at(-1)?.type === 'function_call_output')
          return { text: `${FINAL}: ${responsesText(callOutputs(req).at(-1)).slice(0, 80)}` };
        const call = shellCall(req, command);
        return {
          text: 'Running it.',
          calls: [{ ...call, arguments: { ...call.arguments, sandbox_permissions: 'require_escalated', justification: JUSTIFICATION } }],
        };
      },
      {
        // Asking before leaving a workspace sandbox, as most people run it; and the user's own notify program.
        config: (toml, home) =>
          `notify = ${home.notifyToml}\n${toml
            .replace('approval_policy = "never"', 'approval_policy = "on-request"')
            .replace('sandbox_mode = "danger-full-access"', 'sandbox_mode = "workspace-write"')}`,
      },
    ),
    phone: 'f6'.repeat(32),
  });
  const { fx, runs, explained } = agent;
  const shows = (texts: string[], ms: number, what: string) => agent.shows(texts, ms, what);
  const states = () => stateFrames(agent.m);
  const pushesFor = (ask: string) => agent.apns.sandbox.requests.filter((q) => (q.payload as { askId?: string }).askId === ask);
  const codex = () => agent.home;

  /** Types a prompt whose turn asks to run `cmd`; resolves with the ask the client gets. */
  const ask = (cmd: string, prompt: string): Promise<Ask> => {
    command = cmd;
    return newAsk(agent, prompt);
  };

  test(
    "a command asking to leave the sandbox: awaiting-input with its ask and one push; allow runs it; the user's notify runs at the turn's end",
    async () => {
      const notifiesBefore = codex()
        .notifications()
        .filter((n) => n.type === 'agent-turn-complete').length;
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

      expect(await answered(agent, a.id, 'yes', 200)).toEqual({ ask: a.id, choice: 'yes', landed: true, by: 'phone' });
      await turnEnded(agent, [FINAL], 'the approval', { 'allow.txt': 1 });
      // One push for the ask: the turn's end after an answer is not news.
      expect(pushesFor(a.id)).toHaveLength(1);
      // The user's own notify program ran at the end of the turn, with Codex's argument.
      await explained(
        eventually(
          () =>
            codex()
              .notifications()
              .filter((n) => n.type === 'agent-turn-complete').length > notifiesBefore,
          30_000,
          POLL_MS,
          "the user's notify program at the turn's end",
        ),
      );
      expect(codex().notifications().at(-1)).toMatchObject({ type: 'agent-turn-complete', cwd: codex().cwd });
    },
    TEST_MS,
  );

  test(
    'deny: the command does not run',
    async () => {
      const a = await ask('echo ran >> deny.txt', 'mark deny');
      await answered(agent, a.id, 'no', 200, { landed: true });
      await explained(
        shows(['Exited (status 1) echo ran >> deny.txt', 'Conversation interrupted'], TURN_MS, "Codex's refusal on the client"),
      );
      await explained(
        eventually(() => states().at(-1)?.value === 'awaiting-input' && !states().at(-1)?.ask, TURN_MS, POLL_MS, 'Codex waits'),
      );
      expect(runs('deny.txt')).toBe(0);
      await answered(agent, a.id, 'yes', 409);
      expect(runs('deny.txt')).toBe(0);
    },
    TEST_MS,
  );

  test(
    'an answer sent on the stream the moment the ask appears lands once',
    async () => {
      command = 'echo ran >> early.txt';
      const { answered } = await answeredAsItAppears(agent, 'mark early');
      expect(
        answered,
        `states: ${JSON.stringify(states().slice(-6))}\nscreen:\n${await agent.m.text()}\n${logTailOf(fx.d, 30)}`,
      ).toMatchObject({ landed: true });
      await turnEnded(agent, [FINAL, 'early.txt'], 'the early approval', { 'early.txt': 1 });
    },
    TEST_MS,
  );
});
