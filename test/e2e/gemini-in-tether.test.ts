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
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { AGENT_ENV_CLEARED } from '../../testkit/agent-bins.js';
import { startApnsStandIns, type ApnsStandIns } from '../../testkit/apns-server.js';
import { functionResponses, isAgentTurn, lastUserText, sideReply, startFakeGemini, type FakeGemini } from '../../testkit/fake-gemini.js';
import { geminiHome, type GeminiHome } from '../../testkit/gemini-home.js';
import { agentWithPushToml } from '../helpers/agent-config.js';
import { useDaemon } from '../helpers/daemon-fixture.js';
import { explainedBy, runCli } from '../helpers/daemon.js';
import { pairDevice, type PairedDevice } from '../helpers/pair-device.js';
import { shows as showsOn, stateFrames, type Mirror } from '../helpers/stream.js';
import { eventually } from '../helpers/tmux.js';
import type { Ask } from '../../src/protocol/frames.js';

const AGENT_START_MS = 90_000;
const TURN_MS = 90_000;
const TEST_MS = 300_000;
const POLL_MS = 100;
const PHONE = 'e5'.repeat(32);
const FINAL = 'All done: tether-final-answer';
const READY = ['Gemini CLI v0.61.0', 'Type your message'];

describe('Gemini CLI as a tether session', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tether-gemini-e2e-'));
  let apns: ApnsStandIns;
  let fake: FakeGemini;
  let gemini: GeminiHome;
  let phone: PairedDevice;
  let m: Mirror;
  let userSettings = '';
  const env: NodeJS.ProcessEnv = {};

  beforeAll(async () => {
    apns = await startApnsStandIns(dir);
    // Each prompt names the call the model makes; once the call's result came back, the answer.
    fake = await startFakeGemini((req) => {
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
      return { calls: [{ name: 'run_shell_command', args: { command: 'echo tether-tool-ok', description: 'Print a marker' } }] };
    });
    gemini = geminiHome(fake.baseUrl);
    gemini.addCommand('mycmd', 'My custom command', 'Say {{args}}');
    userSettings = readFileSync(gemini.settingsFile, 'utf8');
    Object.assign(env, { NODE_EXTRA_CA_CERTS: apns.caFile });
    for (const v of AGENT_ENV_CLEARED) env[v] = undefined;
    Object.assign(env, gemini.env);
  }, 60_000);

  afterAll(async () => {
    await apns?.close();
    await fake?.close();
    gemini?.cleanup();
    rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  const fx = useDaemon(() => agentWithPushToml('gemini', [], apns), { extraEnv: env });

  const explained = <T>(p: Promise<T>): Promise<T> => explainedBy(fx.d, p, 80);
  const shows = (texts: string[], ms: number, what: string) => showsOn(m, texts, ms, what, POLL_MS);
  const states = () => stateFrames(m).map((s) => (s.ask ? 'ask' : s.tool ? `${s.value} ${s.tool}` : s.value));
  const pushes = () => apns.sandbox.requests.map((r) => (r.payload as { aps: { alert: { title: string; body: string } } }).aps.alert);
  const answer = (ask: string, choice: string) =>
    fetch(`${fx.d.base}/sessions/gm/answer`, {
      method: 'POST',
      headers: { authorization: `Bearer ${phone.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ask, choice }),
    });
  const runs = (file: string): number =>
    existsSync(join(gemini.cwd, file)) ? readFileSync(join(gemini.cwd, file), 'utf8').split('\n').filter(Boolean).length : 0;
  const type = async (text: string) => {
    m.stream.sendKeys(text);
    await explained(shows([text], TURN_MS, `the typed "${text}" on the client`));
    m.stream.sendKey('enter');
  };
  /** Types a prompt whose turn asks; resolves with the new ask once the client got it. */
  const asked = async (text: string, dialog: string): Promise<{ ask: Ask; lateMs: number }> => {
    const seen = stateFrames(m).length;
    await type(text);
    const shown = await explained(shows([dialog], TURN_MS, `the dialog "${dialog}" on the client`)).then(() => Date.now());
    const ask = await explained(
      eventually(
        () =>
          stateFrames(m)
            .slice(seen)
            .find((s) => s.ask)?.ask ?? null,
        TURN_MS,
        20,
        'an ask on the stream',
      ),
    );
    return { ask: ask!, lateMs: Math.max(0, Date.now() - shown) };
  };
  const turnEnded = (what: string) =>
    explained(eventually(() => stateFrames(m).at(-1)?.value === 'awaiting-input' && !stateFrames(m).at(-1)?.ask, TURN_MS, POLL_MS, what));

  beforeAll(async () => {
    phone = await pairDevice(fx, 'phone', PHONE, 'sandbox');
    const r = await fx.json('POST', '/sessions', { name: 'gm', agent: 'gemini', cwd: gemini.cwd });
    expect(r.status, await r.clone().text()).toBe(201);
    m = fx.mirror('gm');
    await explained(shows(READY, AGENT_START_MS, 'Gemini ready on the client'));
  }, AGENT_START_MS + 60_000);

  test(
    'a turn with a shell call: thinking, tool, awaiting-input; named from its first prompt; its commands, the custom one too; one push; the user hook fires beside tethers',
    async () => {
      await explained(eventually(() => states().includes('idle'), AGENT_START_MS, POLL_MS, 'idle (SessionStart)'));
      const before = states().length;
      await type('please run the marker command');
      await explained(shows(['tether-tool-ok', FINAL], TURN_MS, 'the tool output and answer'));
      await turnEnded('awaiting-input after the turn');
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

      expect(gemini.hooks().map((h) => h.hook_event_name)).toEqual(
        expect.arrayContaining(['SessionStart', 'BeforeAgent', 'BeforeTool', 'AfterAgent']),
      );
      expect(readFileSync(gemini.settingsFile, 'utf8')).toBe(userSettings);
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
      });
      expect(ask.choices).toEqual([
        { id: 'yes', label: 'Allow once' },
        { id: 'always', label: 'Allow for this session' },
        { id: 'no', label: 'No, suggest changes' },
      ]);
      await explained(eventually(() => pushes().length > pushed, 30_000, POLL_MS, 'a push for the ask'));
      expect((await answer(ask.id, 'maybe')).status).toBe(400);
      expect((await answer('0f6c3a8e-6a43-4d0b-9d0e-5a3c2b1f7e21', 'yes')).status).toBe(404);
      const r = await answer(ask.id, 'yes');
      expect(r.status).toBe(200);
      expect(await r.json()).toEqual({ ask: ask.id, choice: 'yes', landed: true, by: 'phone' });
      await explained(shows([FINAL], TURN_MS, 'the answer after allow'));
      await turnEnded('awaiting-input after allow');
      expect(runs('allow.txt')).toBe(1);
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
      const d = await answer(denied.ask.id, 'no');
      expect(await d.json()).toMatchObject({ choice: 'no', landed: true });
      await turnEnded('awaiting-input after deny');
      expect(runs('deny.txt')).toBe(0);
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
      await turnEnded('awaiting-input after the question');
      const sent = fake.requests.flatMap((q) => functionResponses(q)).filter((f) => f.name === 'ask_user');
      expect(JSON.stringify(sent.at(-1)?.response)).toContain('blue');
    },
    TEST_MS,
  );

  test(
    "a usage limit: its dialog answered Stop, the session carries a usage-limit stop with Gemini's words",
    async () => {
      await type('hit the limit');
      await explained(shows(['Usage limit reached', 'Stop'], TURN_MS, 'the usage limit dialog'));
      m.stream.sendKeys('2');
      await explained(shows(['exhausted your daily quota'], TURN_MS, 'the error after Stop'));
      const stop = await explained(
        eventually(
          () => stateFrames(m).find((f) => f.stop && f.stop.kind !== 'done')?.stop ?? null,
          TURN_MS,
          POLL_MS,
          'a stop on the stream',
        ).then((s) => s!),
      );
      expect(stop).toMatchObject({ kind: 'usage-limit', agent: 'gemini' });
      expect(stop.message).toContain('You have exhausted your daily quota on this model.');
      expect(stateFrames(m).at(-1)?.value).toBe('awaiting-input');
    },
    TEST_MS,
  );

  test(
    'the tmux server killed: the session comes back in the same conversation',
    async () => {
      const pid = Number((await fx.tmux.tmux('display-message', '-p', '#{pid}')).trim());
      m.close();
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
      m = fx.mirror('gm');
      await explained(shows(['a question please', 'Color → blue', FINAL], AGENT_START_MS, 'the resumed conversation on a new client'));
    },
    TEST_MS,
  );

  test(
    'tether attach --agent gemini makes a Gemini session',
    async () => {
      const r = await runCli(['attach', 'gm2', '--agent', 'gemini', '--detach'], fx.home.env, 30_000, [], gemini.cwd);
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
      m = fx.mirror('gm2');
      await explained(shows(READY, AGENT_START_MS, 'Gemini ready in the attached session'));
    },
    TEST_MS,
  );
});
