/**
 * Answering Claude Code from the phone (docs/api.md "Asks", docs/agents.md "Asks and answers"),
 * with the real Claude Code 2.1.328 against the fake Anthropic server, the built daemon, a phone
 * paired to a real HTTP/2 TLS stand-in for APNs (its token has no stream: it is in the
 * background), and a stream client watching the session as a second screen.
 *
 * One daemon and one Claude session for all of it; each test is one turn of Claude's in which
 * the model asks for one tool call: a Bash command that needs permission (each appends a line to
 * its own file, so a file's lines are the times the command ran), or a multiple-choice question.
 */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { anthropicText, isAgentTurn, toolResults, type AnthropicReply } from '../../testkit/fake-anthropic.js';
import { answered, answeredAsItAppears, newAsk, turnEnded as ended, wrongAnswersRefused } from '../helpers/agent-asks.js';
import { TURN_MS, useRealAgent } from '../helpers/agent-fixture.js';
import { CLAUDE_CC, claudeParts } from '../helpers/agent-parts.js';
import { runCli } from '../helpers/daemon.js';
import { stateFrames, still } from '../helpers/stream.js';
import { eventually } from '../helpers/tmux.js';
import type { Ask, StateFrame } from '../../src/protocol/frames.js';
import type { AnswerEntry } from '../../src/service/answers/answer-log.js';
import type { StatusReport } from '../../src/cli/status.command.js';

const TEST_MS = 300_000;
const POLL_MS = 100;
const FINAL = 'tether-final';

describe('Claude Code asks, answered from the phone', () => {
  /** The tool call the model asks for on the next turn. */
  let next: NonNullable<AnthropicReply['toolUses']>[number] = { name: 'Bash', input: {} };
  /** The prompt of the current turn (the model asks for `next` when it sees it). */
  let prompt = '';
  const agent = useRealAgent({
    ...CLAUDE_CC,
    prefix: 'tether-asks-claude-',
    start: claudeParts((req) => {
      if (!isAgentTurn(req)) return { text: 'Title' };
      // The prompt just typed asks for the tool call (after a refusal Claude sends the refused
      // call's result along with the next prompt); the tool's result, as Claude handed it to the
      // model, ends the turn (a question's answer is in it).
      const after = req.messages.slice(req.messages.findLastIndex((x) => x.role === 'assistant') + 1);
      const typed = after
        .map((x) => (typeof x.content === 'string' ? x.content : anthropicText(x.content.filter((b) => b.type === 'text'))))
        .join('\n');
      if (prompt !== '' && typed.includes(prompt)) return { text: 'Working on it.', toolUses: [next] };
      const results = toolResults(req);
      return {
        text: `${FINAL}: ${results
          .map((r) => anthropicText(r.content))
          .join(' ')
          .slice(0, 200)}`,
      };
    }),
    phone: 'e5'.repeat(32),
    session: { ...CLAUDE_CC.session, ready: [...CLAUDE_CC.session.ready, 'manual mode on'] },
  });
  const { fx, answer, runs } = agent;
  const explained = agent.explained;
  const shows = (texts: string[], ms: number, what: string) => agent.shows(texts, ms, what);
  /** Waits until the client got no bytes for half a second (the screen is still). */
  const quiet = (what: string) => still(agent.m, TURN_MS, what);
  const states = (): StateFrame[] => stateFrames(agent.m);
  const listed = async () => (await (await fx.d.get('/sessions/cc')).json()) as { ask: Ask | null; agentState: string | null };

  /** Types a prompt for a turn whose model asks for `tool`; resolves with the ask the client gets. */
  const ask = (tool: typeof next, text: string): Promise<Ask> => {
    next = tool;
    prompt = text;
    return newAsk(
      agent,
      text,
      () => `; the model was sent: ${JSON.stringify(agent.fake.requests.filter(isAgentTurn).map((q) => q.messages.at(-1))).slice(-1500)}`,
    );
  };
  const bash = (file: string) => ({ name: 'Bash', input: { command: `echo ran >> ${file}`, description: `Mark ${file}` } });
  /**
   * The person at the terminal answers with `key`, the dialog's own, typed into the pane as an SSH
   * user would once the dialog is on screen and has stopped changing; the ask leaves the list.
   */
  const inTerminal = async (key: string) => {
    await explained(shows(['Do you want to proceed?'], TURN_MS, 'the dialog'));
    await explained(quiet('the dialog drawn and still'));
    await fx.tmux.tmux('send-keys', '-t', '=cc:', key);
    await explained(eventually(async () => (await listed()).ask === null, TURN_MS, POLL_MS, 'the ask gone from the list'));
  };
  /** The turn ended: the model's final words on screen and the state awaiting-input without an ask. */
  const turnEnded = (what: string, ran?: Record<string, number>) => ended(agent, [FINAL], what, ran);

  test(
    'a command that needs permission: the ask on the stream and in the list, pushed with its category; allow runs it once and ends the turn',
    async () => {
      const pushesBefore = agent.apns.sandbox.requests.length;
      const a = await ask(bash('allow.txt'), 'mark allow');
      expect(a).toMatchObject({
        kind: 'permission',
        agent: 'claude',
        tool: 'Bash',
        concern: 'echo ran >> allow.txt',
        detail: 'Mark allow.txt',
      });
      expect(a.choices.map((c) => c.id)).toEqual(expect.arrayContaining(['yes', 'no']));
      expect(a.choices[0]).toEqual({ id: 'yes', label: 'Yes' });
      expect(a.choices.at(-1)).toEqual({ id: 'no', label: 'No, and tell Claude what to do differently' });
      // The dialog is on the screen (the bytes), and the same ask is in the session's item.
      await explained(shows(['Do you want to proceed?'], TURN_MS, 'the dialog on the client'));
      expect((await listed()).ask).toEqual(a);
      const list = (await (await fx.d.get('/sessions')).json()) as { id: string; ask: Ask | null }[];
      expect(list.find((s) => s.id === 'cc')?.ask).toEqual(a);

      // The phone (in the background) gets one alert for it: who asks for what, the command, the ask's id and category.
      await explained(eventually(() => agent.apns.sandbox.requests.length > pushesBefore, 30_000, POLL_MS, 'a push for the ask'));
      const push = agent.apns.sandbox.requests[pushesBefore]!;
      expect(push.jwtError).toBeNull();
      const category = a.choices.some((c) => c.id === 'always') ? 'TETHER_ASK_PERMISSION_ALWAYS' : 'TETHER_ASK_PERMISSION';
      expect(push.payload).toMatchObject({
        aps: {
          alert: { title: 'Claude asks to use Bash', subtitle: 'cc', body: 'echo ran >> allow.txt' },
          category,
          'interruption-level': 'time-sensitive',
        },
        sessionId: 'cc',
        askId: a.id,
      });
      // Its choices, the labels cut to 60 characters for the payload's size.
      const carried = (push.payload as { choices: { id: string; label: string }[] }).choices;
      expect(carried.map((c) => c.id)).toEqual(a.choices.map((c) => c.id));
      for (const [i, c] of carried.entries()) {
        const label = a.choices[i]!.label;
        expect(c.label).toBe(label.length > 60 ? `${label.slice(0, 59)}…` : label);
      }

      // Answers that are wrong change nothing.
      await wrongAnswersRefused(agent, a.id, 'yes');
      expect(runs('allow.txt')).toBe(0);

      expect(await answered(agent, a.id, 'yes', 200)).toEqual({ ask: a.id, choice: 'yes', landed: true, by: 'phone' });
      await turnEnded('the allow', { 'allow.txt': 1 });
      // After the allow: `tool` while the command runs, then `thinking` (the model reads its
      // output), then the turn's end.
      const after = states()
        .slice(states().findIndex((s) => s.ask?.id === a.id) + 1)
        .map((s) => (s.ask ? `ask ${s.ask.id}` : s.tool ? `${s.value} ${s.tool}` : s.value));
      const wanted = ['tool Bash', 'thinking', 'awaiting-input'];
      let found = 0;
      for (const v of after) if (v === wanted[found]) found++;
      expect(found, `the states after the allow: ${after.join(', ')}`).toBe(wanted.length);
      // A second answer to the same ask is refused, naming who answered it.
      await answered(agent, a.id, 'no', 409, { error: 'ask-closed', closed: { how: 'answered', by: 'phone', choice: 'yes' } });
      expect(runs('allow.txt')).toBe(1);
    },
    TEST_MS,
  );

  test(
    'deny: the command never runs; the ask goes away and Claude waits',
    async () => {
      const a = await ask(bash('deny.txt'), 'mark deny');
      await answered(agent, a.id, 'no', 200, { landed: true });
      await explained(shows(['What should Claude do instead?'], TURN_MS, "Claude's refusal on the client"));
      await explained(
        eventually(() => states().at(-1)?.value === 'awaiting-input' && !states().at(-1)?.ask, TURN_MS, POLL_MS, 'the ask gone'),
      );
      expect((await listed()).ask).toBeNull();
      expect(runs('deny.txt')).toBe(0);
    },
    TEST_MS,
  );

  test(
    'an answer sent on the stream the moment the ask appears (as the dialog opens) lands once',
    async () => {
      next = bash('early.txt');
      prompt = 'mark early';
      // Answer from the state frame's own event: no wait at all after the ask arrives.
      const seenBefore = states().length;
      const { sent, answered } = await answeredAsItAppears(agent, 'mark early');
      expect(answered).toMatchObject({ ask: sent, choice: 'yes', landed: true });
      await turnEnded('the early answer', { 'early.txt': 1 });
      expect(
        states()
          .slice(seenBefore)
          .filter((s) => s.ask)
          .map((s) => s.ask!.id),
      ).toEqual([sent]);
    },
    TEST_MS,
  );

  test(
    'answered in the terminal first: the ask goes away, the status shows it pending before, the phone gets 409, the log says terminal',
    async () => {
      const a = await ask(bash('terminal.txt'), 'mark terminal');
      // `tether status --json` shows the pending ask.
      const pending = JSON.parse((await runCli(['status', '--json'], fx.home.env)).stdout) as StatusReport;
      expect(pending.sessions.find((s) => s.id === 'cc')?.ask?.id).toBe(a.id);
      await inTerminal('1');
      await answered(agent, a.id, 'no', 409, { error: 'ask-closed', closed: { how: 'terminal', by: 'terminal' } });
      await turnEnded('the terminal answer', { 'terminal.txt': 1 });
    },
    TEST_MS,
  );

  test(
    'refused in the terminal (Claude reports no hook for it): the ask goes away all the same, and the phone gets 409',
    async () => {
      const a = await ask(bash('refused.txt'), 'mark refused');
      await inTerminal('Escape');
      expect((await listed()).agentState).toBe('awaiting-input');
      await answered(agent, a.id, 'yes', 409, { error: 'ask-closed', closed: { how: 'terminal', by: 'terminal' } });
      expect(runs('refused.txt')).toBe(0);
    },
    TEST_MS,
  );

  test(
    'two phones answering the same ask at the same moment: exactly one lands, the other gets 409',
    async () => {
      const a = await ask(bash('two.txt'), 'mark two');
      const [one, two] = await Promise.all([answer(a.id, 'yes'), answer(a.id, 'yes', { token: fx.d.token })]);
      expect([one.status, two.status].sort()).toEqual([200, 409]);
      const loser = one.status === 409 ? one : two;
      expect(await loser.json()).toMatchObject({ error: 'ask-closed', closed: { how: 'answered', choice: 'yes' } });
      await turnEnded('the two answers', { 'two.txt': 1 });
    },
    TEST_MS,
  );

  test(
    'a multiple-choice question gives its options; the chosen one reaches Claude',
    async () => {
      const question = {
        name: 'AskUserQuestion',
        input: {
          questions: [
            {
              question: 'Which color should the button be?',
              header: 'Color',
              multiSelect: false,
              options: [
                { label: 'Red', description: 'warm' },
                { label: 'Blue', description: 'cool' },
              ],
            },
          ],
        },
      };
      const requestsBefore = agent.fake.requests.length;
      const a = await ask(question, 'pick a color');
      expect(a).toMatchObject({
        kind: 'question',
        agent: 'claude',
        tool: 'AskUserQuestion',
        concern: 'Which color should the button be?',
        detail: 'Color',
        choices: [
          { id: '1', label: 'Red' },
          { id: '2', label: 'Blue' },
        ],
      });
      const push = await explained(
        eventually(
          () => agent.apns.sandbox.requests.map((q) => q.payload as { askId?: string }).find((p) => p.askId === a.id),
          30_000,
          POLL_MS,
          'a push for the question',
        ),
      );
      expect(push).toMatchObject({
        aps: { category: 'TETHER_ASK_QUESTION_2', 'interruption-level': 'time-sensitive' },
        choices: a.choices,
      });
      const r = await answer(a.id, '2');
      expect(r.status, await r.clone().text()).toBe(200);
      await turnEnded('the question');
      // What Claude handed the model as the question's result holds the chosen option.
      const results = agent.fake.requests.slice(requestsBefore).flatMap((q) => toolResults(q).map((b) => anthropicText(b.content)));
      expect(results.join('\n')).toContain('Blue');
      expect(results.join('\n')).not.toContain('"Red"');
    },
    TEST_MS,
  );

  test('the answer log holds each answer with its device and outcome; tether status --json shows the last ones', async () => {
    const log = readFileSync(join(fx.home.dataDir, 'answers.log'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as AnswerEntry);
    const of = (file: string) => log.find((e) => e.concern.includes(file));
    expect(of('allow.txt')).toMatchObject({
      session: 'cc',
      agent: 'claude',
      kind: 'permission',
      tool: 'Bash',
      choice: 'yes',
      label: 'Yes',
      by: 'phone',
      landed: true,
    });
    expect(of('deny.txt')).toMatchObject({ choice: 'no', by: 'phone', landed: true });
    expect(of('early.txt')).toMatchObject({ choice: 'yes', by: 'local', landed: true });
    expect(of('terminal.txt')).toMatchObject({ by: 'terminal', landed: true });
    expect(of('refused.txt')).toMatchObject({ by: 'terminal', choice: 'no', landed: true });
    expect(log.filter((e) => e.concern.includes('two.txt'))).toHaveLength(1);
    expect(log.find((e) => e.kind === 'question')).toMatchObject({ choice: '2', label: 'Blue', by: 'phone', landed: true });
    const mode = statSync(join(fx.home.dataDir, 'answers.log')).mode & 0o777;
    expect(mode).toBe(0o600);

    const status = await runCli(['status', '--json'], fx.home.env);
    expect(status.code, status.stderr).toBe(0);
    const report = JSON.parse(status.stdout) as StatusReport;
    expect(report.answers.map((e) => e.ask)).toEqual(log.slice(-20).map((e) => e.ask));
    const text = await runCli(['status'], fx.home.env);
    expect(text.stdout).toMatch(/^ANSWERS$/m);
    expect(text.stdout).toMatch(/cc\s+claude question AskUserQuestion: Which color should the button be\?\s+Blue\s+phone\s+yes/);
  });
});
