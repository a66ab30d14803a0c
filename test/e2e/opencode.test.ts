/**
 * opencode as a tether session (docs/agents.md "opencode"), with the real opencode 1.18.33
 * against a fake OpenAI-compatible chat server, a phone paired to a real HTTP/2 TLS stand-in for
 * APNs. tether loads its plugin beside the user's own (their config has a plugin that records what
 * it sees, a custom command, and asks before any command but the marker one): the states of a
 * turn with a tool, its commands, the name opencode gave the conversation, a push when it waits;
 * its permission prompt and its question answered from the phone by the keys a person types;
 * after the tmux server is killed, the same conversation reopened; and `tether attach --agent`.
 *
 * One daemon and one opencode session for all but the last test; each test is one turn or two.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { agentBin } from '../../testkit/agent-bins.js';
import { pushToml } from '../../testkit/apns-server.js';
import { readUserConfig } from '../../testkit/opencode-home.js';
import { newAsk, turnEnded as ended, wrongAnswersRefused } from '../helpers/agent-asks.js';
import { AGENT_START_MS, MARKER_TURN, TURN_MS, useRealAgent } from '../helpers/agent-fixture.js';
import { opencodeParts } from '../helpers/agent-parts.js';
import { runCli } from '../helpers/daemon.js';
import { lastOfRole, messageText, type ChatRequest, type FakeReply } from '../helpers/fake-model.js';
import { stateFrames, type Mirror } from '../helpers/stream.js';
import { eventually } from '../helpers/tmux.js';
import type { Ask } from '../../src/protocol/frames.js';
import type { Stop } from '../../src/protocol/stop.js';

const TEST_MS = 300_000;
const POLL_MS = 100;

const TITLE = 'Marker Title Words';
const { prompt: PROMPT, final: FINAL } = MARKER_TURN;
const MARKER = `echo ${MARKER_TURN.output}`;
const READY = ['Ask anything'];

interface Listed {
  id: string;
  state: string;
  agent?: string;
  agentState: string | null;
  description?: string;
}

/** The fake model: a title for the title call; one tool call per prompt as the prompt says; then the answer. */
function reply(req: ChatRequest): FakeReply {
  const tools = (req as ChatRequest & { tools?: unknown[] }).tools ?? [];
  if (tools.length === 0) return { text: TITLE };
  const last = req.messages.at(-1);
  if (last?.role === 'tool') return { text: `${FINAL} (${messageText(last).replace(/\s+/g, ' ').slice(0, 80)})` };
  const prompt = messageText(lastOfRole(req, 'user'));
  if (prompt.startsWith('fail now')) return { status: 400 };
  const run = /^run: (.+)$/.exec(prompt);
  if (run) return { text: 'Running it.', toolCalls: [{ name: 'bash', arguments: { command: run[1], description: 'Run it' } }] };
  if (prompt.startsWith('pick a color')) {
    const questions = [
      {
        question: 'Which color?',
        header: 'Color',
        options: [
          { label: 'Red', description: 'warm' },
          { label: 'Blue', description: 'cold' },
        ],
      },
    ];
    return { text: 'Asking.', toolCalls: [{ name: 'question', arguments: { questions } }] };
  }
  return { text: 'Running it.', toolCalls: [{ name: 'bash', arguments: { command: MARKER, description: 'Print the marker' } }] };
}

describe('opencode as a tether session', () => {
  const agent = useRealAgent({
    prefix: 'tether-opencode-e2e-',
    start: opencodeParts(reply),
    toml: (apns) =>
      [
        '[agent]',
        'command = "/bin/sh"',
        'default_session = "shell-main"',
        // kind = "auto": the installed package's program is recognised.
        '[agents.opencode]',
        `command = ${JSON.stringify(agentBin('opencode'))}`,
        ...pushToml(apns.sandbox.url, apns.keyPath),
        '',
      ].join('\n'),
    phone: 'e7'.repeat(32),
    session: { name: 'oc', agent: 'opencode', ready: READY },
    logLines: 80,
  });
  const { fx, explained } = agent;
  const oc = () => agent.home;
  const listed = async (id: string) => ((await (await fx.d.get('/sessions')).json()) as Listed[]).find((s) => s.id === id);
  const shows = (mirror: Mirror, texts: string[], ms: number, what: string) => agent.shows(texts, ms, what, mirror);
  const states = (mirror: Mirror) => stateFrames(mirror).map((f) => (f.tool ? `${f.value} ${f.tool}` : f.value) + (f.ask ? ' (ask)' : ''));
  const alerts = (session: string) =>
    agent.apns.sandbox.requests.flatMap((r) => {
      const p = r.payload as { aps: { alert: { title: string; body: string } }; sessionId: string; askId?: string };
      return p.sessionId === session ? [{ title: p.aps.alert.title, body: p.aps.alert.body, ...(p.askId ? { askId: p.askId } : {}) }] : [];
    });
  const answer = (session: string, ask: string, choice: string) => agent.answer(ask, choice, { session });
  const lines = (file: string): number => agent.runs(file);
  /** The last prompt typed into the session `oc` (its reopened conversation ends with it). */
  let lastPrompt = '';
  /** Types `text` as a person would, then Enter. */
  const type = async (mirror: Mirror, text: string) => {
    if (mirror === agent.m) lastPrompt = text;
    await agent.type(text, mirror);
  };
  /** Types a prompt whose turn asks; resolves with the new ask the client gets. */
  const asked = (prompt: string): Promise<Ask> => {
    lastPrompt = prompt;
    return newAsk(agent, prompt);
  };
  /** The turn ended: the state awaiting-input without an ask. */
  const turnEnded = (what: string, ran?: Record<string, number>) => ended(agent, [], what, ran);

  test(
    "a turn with a tool: thinking, bash, thinking, awaiting-input; one push; its commands with the user's own; named by opencode's title; the user's plugin and config kept",
    async () => {
      await explained(
        eventually(async () => (await listed('oc'))?.agentState === 'idle', AGENT_START_MS, POLL_MS, 'oc idle (the plugin said hello)'),
      );
      expect((await listed('oc'))?.agent).toBe('opencode');
      await type(agent.m, PROMPT);
      await explained(shows(agent.m, [MARKER, FINAL], TURN_MS, 'the tool call and the answer on the client'));
      await turnEnded('the turn');
      expect(states(agent.m)).toEqual(['idle', 'thinking', 'tool bash', 'thinking', 'awaiting-input']);

      await explained(eventually(() => alerts('oc').length > 0, 30_000, POLL_MS, 'a push for oc'));
      // One alert; its body names the session, with opencode's title once it came (docs/push.md).
      expect(alerts('oc')).toHaveLength(1);
      expect(alerts('oc')[0]?.title).toBe('opencode is waiting for you');
      expect(alerts('oc')[0]?.body).toMatch(/^oc(: Marker Title Words)?$/);

      const commands = (await (await fx.d.get('/sessions/oc/commands')).json()) as { name: string; description: string }[];
      expect(commands.map((c) => c.name)).toEqual(expect.arrayContaining(['compact', 'new', 'sessions', 'models', 'init', 'review', 'x']));
      expect(commands.find((c) => c.name === 'x')?.description).toBe('Run the project check (user)');

      // opencode titled the conversation (its title call): the session's name.
      await explained(eventually(async () => (await listed('oc'))?.description === TITLE, 30_000, POLL_MS, "oc named by opencode's title"));

      // The user's own plugin saw the turn, beside tether's; their config holds nothing of tether's.
      expect(
        oc()
          .events()
          .map((e) => e.type),
      ).toEqual(expect.arrayContaining(['session.status', 'session.idle']));
      expect(readUserConfig(oc())).toBe(oc().configText);
      for (const f of readdirSync(oc().configDir)) expect(f).not.toMatch(/tether/);
    },
    TEST_MS,
  );

  test(
    'a permission prompt: an ask with its choices within 1 s and one push; the bad answers change nothing; allow runs the command once',
    async () => {
      const a = await asked('run: echo ran >> allow.txt');
      expect(a).toMatchObject({ kind: 'permission', agent: 'opencode', tool: 'bash', concern: 'echo ran >> allow.txt' });
      expect(a.choices).toEqual([
        { id: 'once', label: 'Allow once' },
        { id: 'always', label: 'Allow always' },
        { id: 'reject', label: 'Reject' },
      ]);
      const event = oc()
        .events()
        .findLast((e) => e.type === 'permission.asked');
      expect(event, 'the permission.asked event the user plugin saw').toBeDefined();
      expect(Date.parse(a.askedAt) - event!.at, 'from opencode asking to the ask').toBeLessThan(1000);
      await explained(shows(agent.m, ['Permission required', 'Allow once'], TURN_MS, "opencode's permission prompt on the client"));
      await explained(eventually(() => alerts('oc').some((x) => x.askId === a.id), 30_000, POLL_MS, 'a push for the ask'));
      expect(alerts('oc').filter((x) => x.askId === a.id)).toEqual([
        { title: 'opencode asks to use bash', body: 'echo ran >> allow.txt', askId: a.id },
      ]);

      await wrongAnswersRefused(agent, a.id, 'once', 'oc');
      expect(lines('allow.txt')).toBe(0);

      const r = await answer('oc', a.id, 'once');
      expect(r.status, await r.clone().text()).toBe(200);
      expect(await r.json()).toEqual({ ask: a.id, choice: 'once', landed: true, by: 'phone' });
      await explained(shows(agent.m, [FINAL], TURN_MS, 'the answer after the approval'));
      await turnEnded('the turn', { 'allow.txt': 1 });
      expect((await answer('oc', a.id, 'once')).status).toBe(409);
      expect(lines('allow.txt')).toBe(1);
      // One push for the ask: the turn's end after an answer is not news.
      expect(alerts('oc').filter((x) => x.askId === a.id)).toHaveLength(1);
    },
    TEST_MS,
  );

  test(
    'deny: the command never runs, opencode waits',
    async () => {
      const a = await asked('run: echo ran >> deny.txt');
      const r = await answer('oc', a.id, 'reject');
      expect(r.status, await r.clone().text()).toBe(200);
      expect(((await r.json()) as { landed: boolean }).landed).toBe(true);
      await turnEnded('the refusal', { 'deny.txt': 0 });
      expect((await answer('oc', a.id, 'once')).status).toBe(409);
      expect(lines('deny.txt')).toBe(0);
    },
    TEST_MS,
  );

  test(
    'a question with options: an ask of its options, answered by the option',
    async () => {
      const a = await asked('pick a color');
      expect(a).toMatchObject({ kind: 'question', agent: 'opencode', concern: 'Which color?', detail: 'Color' });
      expect(a.choices).toEqual([
        { id: '1', label: 'Red' },
        { id: '2', label: 'Blue' },
      ]);
      const r = await answer('oc', a.id, '2');
      expect(r.status, await r.clone().text()).toBe(200);
      expect(((await r.json()) as { landed: boolean }).landed).toBe(true);
      await turnEnded('the answer');
      // The model got the option as the answer.
      const toolMessage = agent.fake.requests.at(-1)?.messages.at(-1);
      expect(messageText(toolMessage)).toContain('Blue');
    },
    TEST_MS,
  );

  test(
    'the tmux server killed: the session comes back in the same conversation',
    async () => {
      const record = join(fx.home.dataDir, 'sessions', 'oc.json');
      await explained(
        eventually(
          () => /"conversation": "ses_\w+"/.test(readFileSync(record, 'utf8')),
          30_000,
          POLL_MS,
          "oc's record holding its conversation",
        ),
      );
      const conversation = /"conversation": "(ses_\w+)"/.exec(readFileSync(record, 'utf8'))![1]!;
      agent.m.close();
      const pid = Number((await fx.tmux.tmux('display-message', '-p', '#{pid}')).trim());
      process.kill(pid, 'SIGKILL');
      await eventually(async () => (await listed('oc'))?.state !== 'running', 30_000, POLL_MS, 'oc lost with its server').catch(
        () => undefined,
      );
      await explained(eventually(async () => (await listed('oc'))?.state === 'running', AGENT_START_MS, POLL_MS, 'oc restored'));
      const started = await fx.tmux.tmux('display-message', '-p', '-t', '=oc:', '#{pane_start_command}');
      expect(started).toContain(`-s ${conversation}`);
      agent.watch('oc');
      await explained(shows(agent.m, [lastPrompt, FINAL], AGENT_START_MS, 'the reopened conversation on a new client'));
      await explained(
        eventually(async () => (await listed('oc'))?.agentState === 'idle', AGENT_START_MS, POLL_MS, 'oc idle after the restore'),
      );
    },
    TEST_MS,
  );

  test(
    'an API error opencode gives up on: the error stop with its words on the stream and in the list, one push',
    async () => {
      const before = stateFrames(agent.m).length;
      await type(agent.m, 'fail now');
      const frame = await explained(
        eventually(
          () => {
            const f = stateFrames(agent.m)
              .slice(before)
              .find((x) => x.stop !== undefined && x.stop.kind !== 'done');
            if (!f) throw new Error(`no stop; states: ${states(agent.m).slice(-4).join(', ')}`);
            return f;
          },
          TURN_MS,
          POLL_MS,
          'a stop on the stream',
        ),
      );
      expect(frame.value).toBe('awaiting-input');
      const stop = frame.stop!;
      expect(stop).toMatchObject({ kind: 'error', agent: 'opencode' });
      expect(stop.message).toContain('fake model error 400');
      const item = ((await (await fx.d.get('/sessions')).json()) as { id: string; stop: Stop | null }[]).find((x) => x.id === 'oc');
      expect(item?.stop).toEqual(stop);
      const pushes = () => agent.apns.sandbox.requests.filter((q) => (q.payload as { stopId?: string }).stopId === stop.id);
      await explained(eventually(() => pushes().length > 0, 30_000, POLL_MS, 'a push for the stop'));
      expect(pushes()).toHaveLength(1);
      expect(pushes()[0]!.payload).toMatchObject({ aps: { alert: { title: 'opencode stopped on an error', subtitle: `oc: ${TITLE}` } } });
      // The turn's end after the error is the stop, not a finished turn.
      expect(stateFrames(agent.m).at(-1)?.stop?.id).toBe(stop.id);
    },
    TEST_MS,
  );

  test(
    '"Allow always": its keys in steps (Right, Enter, then Enter on the confirmation) land once; the same kind of command then runs without asking',
    async () => {
      const a = await asked('run: echo ran >> always.txt');
      const r = await answer('oc', a.id, 'always');
      expect(r.status, await r.clone().text()).toBe(200);
      expect(await r.json()).toEqual({ ask: a.id, choice: 'always', landed: true, by: 'phone' });
      await turnEnded('the turn', { 'always.txt': 1 });
      const event = oc()
        .events()
        .findLast((e) => e.type === 'permission.replied');
      expect(event?.properties).toMatchObject({ reply: 'always' });
      // opencode allows `echo *` from now on (until it restarts): no new ask.
      const before = stateFrames(agent.m).length;
      await type(agent.m, 'run: echo again >> always.txt');
      await explained(eventually(() => lines('always.txt') === 2, TURN_MS, POLL_MS, 'the second command ran'));
      await turnEnded('the second turn');
      expect(
        stateFrames(agent.m)
          .slice(before)
          .some((f) => f.ask !== undefined),
      ).toBe(false);
    },
    TEST_MS,
  );

  test(
    "`tether attach --agent opencode` starts opencode with tether's plugin in a session the daemon follows",
    async () => {
      const made = await runCli(['attach', 'oc-attach', '--agent', 'opencode', '--detach'], fx.home.env, 30_000, [], oc().cwd);
      expect(made, made.stderr).toMatchObject({ code: 0, stdout: 'created session oc-attach\n' });
      await explained(eventually(async () => (await listed('oc-attach'))?.state === 'running', 30_000, POLL_MS, 'oc-attach listed'));
      expect((await listed('oc-attach'))?.agent).toBe('opencode');
      const a = fx.mirror('oc-attach');
      await explained(shows(a, READY, AGENT_START_MS, 'opencode ready on the client'));
      await explained(
        eventually(async () => (await listed('oc-attach'))?.agentState === 'idle', AGENT_START_MS, POLL_MS, 'oc-attach idle'),
      );
      // Its plugin reports (the idle above is its hello); its pane got tether's config layer, the user's files none.
      const pid = (await fx.tmux.tmux('display-message', '-p', '-t', '=oc-attach:', '#{pane_pid}')).trim();
      const layer = readFileSync(`/proc/${pid}/environ`, 'utf8')
        .split('\0')
        .find((v) => v.startsWith('OPENCODE_CONFIG_CONTENT='));
      expect(layer).toContain('dist/agent/opencode/plugin.js');
      expect(readUserConfig(oc())).toBe(oc().configText);
    },
    TEST_MS,
  );
});
