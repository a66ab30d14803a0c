/**
 * The real Gemini CLI (0.61.0, the pinned test-only install of test/agents) through tether, against
 * a local fake Gemini API, a phone paired to a real HTTP/2 TLS stand-in for APNs. One session is
 * shared by the checks, in order: created with `agent`; a turn with a shell call seen as thinking,
 * tool, then idle-for-input; a name from its first prompt; its commands (one of them the user's own); a push when it waits;
 * its approval as an ask (allow runs the command once, deny never); its question answered by its
 * option; restored in the same conversation after the tmux server is killed. Then `tether attach
 * --agent gemini` makes a session of its own. The user's own hook keeps firing beside tether's,
 * and their settings file is left as it was.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { functionResponses, isAgentTurn, lastUserText, sideReply } from '../../testkit/fake-gemini.js';
import { agentWithPushToml } from '../helpers/agent-config.js';
import { AGENT_START_MS, MARKER_TURN, TURN_MS, useRealAgent } from '../helpers/agent-fixture.js';
import { answered, turnEnded as ended, wrongAnswersRefused } from '../helpers/agent-asks.js';
import { geminiParts } from '../helpers/agent-parts.js';
import { runCli } from '../helpers/daemon.js';
import { stateFrames } from '../helpers/stream.js';
import { eventually } from '../helpers/tmux.js';
import type { Ask } from '../../src/protocol/frames.js';

const TEST_MS = 300_000;
const POLL_MS = 100;
const FINAL = MARKER_TURN.final;
const READY = ['Gemini CLI v0.61.0', 'Type your message'];

describe('Gemini CLI as a tether session', () => {
  let userSettings = '';
  const agent = useRealAgent({
    prefix: 'tether-gemini-e2e-',
    // Each prompt names the call the model makes; once the call's result came back, the answer.
    start: geminiParts(
      (req) => {
        if (!isAgentTurn(req)) return sideReply(req);
        if (lastUserText(req).includes('hit the limit')) return { status: 429 };
        if (functionResponses(req).length > 0) return { text: FINAL };
        const prompt = lastUserText(req);
        const file = /mark (\w+)/.exec(prompt)?.[1];
        if (file)
          return {
            calls: [{ name: 'run_shell_command', args: { command: `touch ${file}.txt && echo ran >> ${file}.txt`, description: 'Mark' } }],
          };
        if (prompt.includes('a question'))
          return {
            calls: [
              {
                name: 'ask_user',
                args: {
                  questions: [
                    {
                      question: 'Which color?',
                      header: 'Color',
                      type: 'choice',
                      options: [
                        { label: 'red', description: 'warm' },
                        { label: 'blue', description: 'cool' },
                      ],
                    },
                  ],
                },
              },
            ],
          };
        return { calls: [{ name: 'run_shell_command', args: { command: `echo ${MARKER_TURN.output}`, description: 'Print a marker' } }] };
      },
      (home) => {
        home.addCommand('mycmd', 'My custom command', 'Say {{args}}');
        userSettings = readFileSync(home.settingsFile, 'utf8');
      },
    ),
    toml: (apns) => agentWithPushToml('gemini', [], apns),
    phone: 'e5'.repeat(32),
    session: { name: 'gm', agent: 'gemini', ready: READY },
    logLines: 80,
  });
  const { fx, answer, explained } = agent;
  const shows = (texts: string[], ms: number, what: string) => agent.shows(texts, ms, what);
  const states = () => stateFrames(agent.m).map((s) => (s.ask ? 'ask' : s.tool ? `${s.value} ${s.tool}` : s.value));
  const pushes = () => agent.apns.sandbox.requests.map((r) => (r.payload as { aps: { alert: { title: string; body: string } } }).aps.alert);
  const type = (text: string) => agent.type(text);
  /** Types a prompt whose turn asks; resolves with the new ask once the client got it. */
  const asked = async (text: string, dialog: string): Promise<{ ask: Ask; lateMs: number }> => {
    const seen = stateFrames(agent.m).length;
    await type(text);
    const shown = await explained(shows([dialog], TURN_MS, `the dialog "${dialog}" on the client`)).then(() => Date.now());
    const ask = await explained(
      eventually(
        () =>
          stateFrames(agent.m)
            .slice(seen)
            .find((s) => s.ask)?.ask ?? null,
        TURN_MS,
        20,
        'an ask on the stream',
      ),
    );
    return { ask: ask!, lateMs: Math.max(0, Date.now() - shown) };
  };
  /** The turn ended: the state awaiting-input without an ask. */
  const turnEnded = (what: string, ran?: Record<string, number>) => ended(agent, [], what, ran);

  test(
    'a turn with a shell call: thinking, tool, awaiting-input; named from its first prompt; its commands, the custom one too; one push; the user hook fires beside tethers',
    async () => {
      await explained(eventually(() => states().includes('idle'), AGENT_START_MS, POLL_MS, 'idle (SessionStart)'));
      const before = states().length;
      await type(MARKER_TURN.prompt);
      await explained(shows([MARKER_TURN.output, FINAL], TURN_MS, 'the tool output and answer'));
      await turnEnded('the turn');
      expect(states().slice(before)).toEqual(['thinking', 'tool run_shell_command', 'thinking', 'awaiting-input']);

      const commands = (await (await fx.d.get('/sessions/gm/commands')).json()) as { name: string; description: string }[];
      expect(commands.map((c) => c.name)).toEqual(expect.arrayContaining(['about', 'clear', 'compress', 'model', 'resume', 'mycmd']));
      expect(commands.find((c) => c.name === 'mycmd')?.description).toBe('My custom command (user)');

      // Named from the agent: its first prompt (cut to four words), as no description was set.
      const described = async () => ((await (await fx.d.get('/sessions/gm')).json()) as { description: string }).description;
      await explained(
        eventually(async () => (await described()) === 'please run the marker', 30_000, POLL_MS, 'gm named from its first prompt'),
      );

      await explained(eventually(() => pushes().length > 0, 30_000, POLL_MS, 'a push when Gemini waits'));
      expect(pushes()).toEqual([{ title: 'Gemini is waiting for you', body: 'gm: please run the marker' }]);

      // The user's own hook runs beside tether's: its AfterAgent may land after tether's made the
      // state awaiting-input (a busy host showed it missing at the first look).
      const userHooks = ['SessionStart', 'BeforeAgent', 'BeforeTool', 'AfterAgent'];
      await explained(
        eventually(
          () => userHooks.every((name) => agent.home.hooks().some((h) => h.hook_event_name === name)),
          30_000,
          POLL_MS,
          `the user's hook to fire for ${userHooks.join(', ')}`,
        ),
      );
      expect(agent.home.hooks().map((h) => h.hook_event_name)).toEqual(expect.arrayContaining(userHooks));
      expect(readFileSync(agent.home.settingsFile, 'utf8')).toBe(userSettings);
    },
    TEST_MS,
  );

  test(
    'an approval is an ask with its choices, at once, pushed once; allow runs the command once, deny never',
    async () => {
      const pushed = pushes().length;
      const { ask, lateMs } = await asked('mark allow', 'Allow execution');
      expect(lateMs).toBeLessThan(1000);
      expect(ask).toMatchObject({
        kind: 'permission',
        agent: 'gemini',
        tool: 'run_shell_command',
        concern: 'touch allow.txt && echo ran >> allow.txt',
        choices: [
          { id: 'yes', label: 'Allow once' },
          { id: 'always', label: 'Allow for this session' },
          { id: 'no', label: 'No, suggest changes' },
        ],
      });
      await explained(eventually(() => pushes().length > pushed, 30_000, POLL_MS, 'a push for the ask'));
      await wrongAnswersRefused(agent, ask.id, 'yes');
      expect(await answered(agent, ask.id, 'yes', 200)).toEqual({ ask: ask.id, choice: 'yes', landed: true, by: 'phone' });
      await explained(shows([FINAL], TURN_MS, 'the answer after allow'));
      await turnEnded('allow', { 'allow.txt': 1 });
      expect((await answer(ask.id, 'no')).status).toBe(409);
      // The wait at the turn's end is pushed after the state frame: wait for it, then count.
      await explained(
        eventually(
          () =>
            pushes()
              .slice(pushed + 1)
              .some((p) => p.title === 'Gemini is waiting for you'),
          30_000,
          POLL_MS,
          "the push at the turn's end",
        ),
      );
      expect(
        pushes()
          .slice(pushed)
          .map((p) => p.title),
      ).toEqual([pushes()[pushed]!.title, 'Gemini is waiting for you']);

      const denied = await asked('mark deny', 'Allow execution');
      await answered(agent, denied.ask.id, 'no', 200, { choice: 'no', landed: true });
      await turnEnded('deny', { 'deny.txt': 0 });
    },
    TEST_MS,
  );

  test(
    'a question with options is answered by its option',
    async () => {
      const { ask } = await asked('a question please', 'Which color?');
      expect(ask).toMatchObject({ kind: 'question', concern: 'Which color?', detail: 'Color' });
      expect(ask.choices).toEqual([
        { id: '1', label: 'red' },
        { id: '2', label: 'blue' },
      ]);
      expect(await (await answer(ask.id, '2')).json()).toMatchObject({ choice: '2', landed: true });
      await turnEnded('the question');
      const sent = agent.fake.requests.flatMap((q) => functionResponses(q)).filter((f) => f.name === 'ask_user');
      expect(JSON.stringify(sent.at(-1)?.response)).toContain('blue');
    },
    TEST_MS,
  );

  test(
    "a usage limit: its dialog answered Stop, the session carries a usage-limit stop with Gemini's words",
    async () => {
      await type('hit the limit');
      await explained(shows(['Usage limit reached', 'Stop'], TURN_MS, 'the usage limit dialog'));
      agent.m.stream.sendKeys('2');
      await explained(shows(['exhausted your daily quota'], TURN_MS, 'the error after Stop'));
      const stop = await explained(
        eventually(
          () => stateFrames(agent.m).find((f) => f.stop && f.stop.kind !== 'done')?.stop ?? null,
          TURN_MS,
          POLL_MS,
          'a stop on the stream',
        ).then((s) => s!),
      );
      expect(stop).toMatchObject({ kind: 'usage-limit', agent: 'gemini' });
      expect(stop.message).toContain('You have exhausted your daily quota on this model.');
      expect(stateFrames(agent.m).at(-1)?.value).toBe('awaiting-input');
    },
    TEST_MS,
  );

  test(
    'the tmux server killed: the session comes back in the same conversation',
    async () => {
      const pid = Number((await fx.tmux.tmux('display-message', '-p', '#{pid}')).trim());
      agent.m.close();
      process.kill(pid, 'SIGKILL');
      const listed = async () =>
        ((await (await fx.d.get('/sessions')).json()) as { id: string; state: string }[]).find((s) => s.id === 'gm');
      await explained(
        eventually(
          async () =>
            (await listed())?.state === 'running' && Number((await fx.tmux.tmux('display-message', '-p', '#{pid}')).trim()) !== pid,
          AGENT_START_MS,
          POLL_MS,
          'gm restored',
        ),
      );
      agent.watch('gm');
      await explained(shows(['a question please', 'Color → blue', FINAL], AGENT_START_MS, 'the resumed conversation on a new client'));
    },
    TEST_MS,
  );

  test(
    'tether attach --agent gemini makes a Gemini session',
    async () => {
      const r = await runCli(['attach', 'gm2', '--agent', 'gemini', '--detach'], fx.home.env, 30_000, [], agent.home.cwd);
      expect(r, r.stderr).toMatchObject({ code: 0, stdout: 'created session gm2\n' });
      await explained(
        eventually(
          async () =>
            ((await (await fx.d.get('/sessions')).json()) as { id: string; agent?: string }[]).some(
              (s) => s.id === 'gm2' && s.agent === 'gemini',
            ),
          30_000,
          POLL_MS,
          'gm2 listed with agent gemini',
        ),
      );
      agent.watch('gm2');
      await explained(shows(READY, AGENT_START_MS, 'Gemini ready in the attached session'));
    },
    TEST_MS,
  );
});
