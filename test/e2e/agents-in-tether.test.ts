/**
 * A person's experience of the real Claude Code and Codex through tether: the built daemon with
 * `[agents.claude]` and `[agents.codex]`, each agent against a local fake model, a phone paired
 * to a real HTTP/2 TLS stand-in for APNs. For each agent: a session created with `agent`, a
 * prompt typed through a stream client, the model answering with one shell call and then text;
 * what the client sees is checked (the state frames in order, the answer on its screen), the
 * slash commands the phone would offer, the push when the agent waits, and, after the tmux
 * server is killed, the session restored by tether with the conversation on screen again.
 *
 * The agents are the pinned test-only installs of test/agents (test/helpers/agent-bins.ts).
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { agentBin } from '../../testkit/agent-bins.js';
import { pushToml } from '../../testkit/apns-server.js';
import type { CodexHome } from '../../testkit/codex-home.js';
import { isAgentTurn, toolResults } from '../../testkit/fake-anthropic.js';
import { callOutputs, shellCall, toolNames } from '../../testkit/fake-responses.js';
import { AGENT_START_MS, MARKER_TURN, TURN_MS, useRealAgent } from '../helpers/agent-fixture.js';
import { claudeParts, codexParts } from '../helpers/agent-parts.js';
import { runCli } from '../helpers/daemon.js';
import { still, type Mirror } from '../helpers/stream.js';
import { eventually } from '../helpers/tmux.js';

const TEST_MS = 400_000;
const POLL_MS = 200;

const { prompt: PROMPT, output: TOOL_OUTPUT, final: FINAL } = MARKER_TURN;
const ASK_PROMPT = 'now touch the file';
const ASK_FINAL = 'Touched: tether-perm-answer';
const AGAIN_PROMPT = 'run it once more';
const AGAIN_FINAL = 'Done again: tether-second-answer';
/** Codex's shell tool, as its rollout file names the call. */
const CODEX_TOOL = 'tool exec_command';
/** What a stream client sees of one Codex turn with a shell call (its rollout file, followed). */
const CODEX_TURN = ['thinking', CODEX_TOOL, 'thinking', 'awaiting-input'];

interface Listed {
  id: string;
  state: string;
  agent?: string;
  agentState: string | null;
}

describe('Claude Code and Codex as tether sessions', () => {
  /** The Bash command the fake Anthropic model asks for on the next turn. */
  let claudeCommand = `echo ${TOOL_OUTPUT}`;
  let claudeFinal: string = FINAL;
  const claudeStart = claudeParts((req) => {
    if (!isAgentTurn(req)) return { text: 'Marker command' };
    if (toolResults(req).length > 0) return { text: claudeFinal };
    return { text: 'Running it.', toolUses: [{ name: 'Bash', input: { command: claudeCommand, description: 'Run the marker' } }] };
  });
  const codexStart = codexParts((req) => {
    if (toolNames(req).length === 0) return { text: 'Run marker command' };
    // Each prompt gets one shell call, then the answer once the call's output came back.
    if (req.input.at(-1)?.type === 'function_call_output') return { text: callOutputs(req).length > 1 ? AGAIN_FINAL : FINAL };
    return { text: 'Running it.', calls: [shellCall(req, `echo ${TOOL_OUTPUT}`)] };
  });
  const agents = useRealAgent({
    prefix: 'tether-agents-e2e-',
    // Both agents in one daemon: their fakes and homes side by side.
    start: async () => {
      const claude = await claudeStart();
      const codex = await codexStart();
      const commands = join(claude.home.cwd, '.claude', 'commands');
      mkdirSync(commands, { recursive: true });
      writeFileSync(join(commands, 'x.md'), '---\ndescription: Run the project check\n---\nRun the check.\n');
      return {
        fake: {
          anthropic: claude.fake,
          responses: codex.fake,
          close: async () => {
            await claude.fake.close();
            await codex.fake.close();
          },
        },
        home: {
          claude: claude.home,
          codex: codex.home,
          cwd: claude.home.cwd,
          cleanup: () => {
            claude.home.cleanup();
            codex.home.cleanup();
          },
        },
        // One HOME for the daemon's panes: Claude's; Codex keeps its state in CODEX_HOME.
        env: { ...claude.env, CODEX_HOME: codex.home.dir, ...codexKey(codex.home) },
      };
    },
    toml: (apns) =>
      [
        '[agent]',
        'command = "/bin/sh"',
        'default_session = "shell-main"',
        '[agents.claude]',
        `command = ${JSON.stringify(agentBin('claude'))}`,
        'kind = "claude"',
        // Claude Code 2.1.328 decides permissions by a classifier unless told otherwise.
        'args = ["--permission-mode", "default", "--verbose"]',
        '[agents.codex]',
        `command = ${JSON.stringify(agentBin('codex'))}`,
        'kind = "codex"',
        ...pushToml(apns.sandbox.url, apns.keyPath),
        '',
      ].join('\n'),
    phone: 'd4'.repeat(32),
    pollMs: POLL_MS,
    logLines: 80,
  });
  const { fx, explained } = agents;
  const claude = () => agents.home.claude;
  const codex = () => agents.home.codex;

  const listed = async (id: string) => ((await (await fx.d.get('/sessions')).json()) as Listed[]).find((s) => s.id === id);
  /** What the phone got: each alert's session, title and body. */
  const alerts = () =>
    agents.apns.sandbox.requests.map((r) => {
      expect(r.jwtError).toBeNull();
      const p = r.payload as { aps: { alert: { title: string; body: string } }; sessionId: string };
      return { sessionId: p.sessionId, title: p.aps.alert.title, body: p.aps.alert.body };
    });
  const states = (m: Mirror) =>
    m.received.flatMap((r) => (r.kind === 'state' ? [r.frame.tool ? `${r.frame.value} ${r.frame.tool}` : r.frame.value] : []));
  const shows = (m: Mirror, texts: string[], ms: number, what: string) => agents.shows(texts, ms, what, m);
  /** Types `text` through the stream client as a person would, then Enter. */
  const type = (m: Mirror, text: string) => agents.type(text, m);
  const create = async (name: string, agent: string, cwd: string) => {
    const r = await fx.json('POST', '/sessions', { name, agent, cwd });
    expect(r.status, await r.clone().text()).toBe(201);
    await eventually(async () => (await listed(name))?.state === 'running', 30_000, POLL_MS, `${name} running`);
  };
  /** SIGKILLs the tmux server (tether started it) and waits for tether to restore `name`. */
  const killServerAndRestore = async (name: string) => {
    const pid = Number((await fx.tmux.tmux('display-message', '-p', '#{pid}')).trim());
    expect(pid).toBeGreaterThan(0);
    process.kill(pid, 'SIGKILL');
    await eventually(async () => (await listed(name))?.state !== 'running', 30_000, POLL_MS, `${name} lost with its server`).catch(
      () => undefined,
    );
    await eventually(async () => (await listed(name))?.state === 'running', AGENT_START_MS, POLL_MS, `${name} restored (running again)`);
    const now = Number((await fx.tmux.tmux('display-message', '-p', '#{pid}')).trim());
    expect(now).not.toBe(pid);
  };
  /** Runs `tether attach` in `cwd` (a session it makes runs there) with the daemon's environment. */
  const attach = (args: string[], cwd: string) => runCli(['attach', ...args], fx.home.env, 30_000, [], cwd);
  /** The client's states are `expected`; when not, the error comes with the daemon's log. */
  const statesAre = (m: Mirror, expected: string[]) =>
    explained(Promise.resolve().then(() => expect(states(m), 'the states the client was told').toEqual(expected)));

  /** Creates session `name` running `agent` and a client; resolves once the client shows `ready`. */
  const createShowing = async (name: string, agent: string, cwd: string, ready: string[]) => {
    await create(name, agent, cwd);
    const m = fx.mirror(name);
    await explained(shows(m, ready, AGENT_START_MS, `${agent} ready on the client`));
    return m;
  };
  /**
   * Types `prompt`; waits until the client shows `answer` (`shown`), then for the awaiting-input
   * frame that ends this turn (`waiting`). A frame from before the prompt does not count: a client
   * that connected to a waiting agent was told awaiting-input at once, and the turn's own states
   * (Codex's read from its rollout file) may reach it a moment after the answer reached its screen.
   */
  const turn = async (m: Mirror, prompt: string, answer: string[], shown: string, waiting: string) => {
    const before = states(m).length;
    await type(m, prompt);
    await explained(shows(m, answer, TURN_MS, shown));
    await explained(eventually(() => states(m).length > before && states(m).at(-1) === 'awaiting-input', TURN_MS, POLL_MS, waiting));
  };

  test(
    'Claude Code: thinking, Bash, thinking, awaiting-input; its commands; a push when it waits; restored with its conversation; a permission question pushed',
    async () => {
      const m = await createShowing('cc', 'claude', claude().cwd, ['Claude Code v2.1.328', 'manual mode on']);
      await explained(
        eventually(async () => (await listed('cc'))?.agentState === 'idle', AGENT_START_MS, POLL_MS, 'cc idle (SessionStart)'),
      );
      const answer = [`Bash(echo ${TOOL_OUTPUT})`, TOOL_OUTPUT, FINAL];
      await turn(m, PROMPT, answer, 'the tool output and answer on the client', 'the awaiting-input frame');
      await statesAre(m, ['idle', 'thinking', 'tool Bash', 'thinking', 'awaiting-input']);

      const commands = (await (await fx.d.get('/sessions/cc/commands')).json()) as { name: string; description: string }[];
      expect(commands.map((c) => c.name)).toEqual(expect.arrayContaining(['clear', 'compact', 'help', 'model', 'x']));
      expect(commands.find((c) => c.name === 'x')?.description).toContain('Run the project check');

      // The phone has no live stream (the client uses the CLI's token): it gets the alert.
      await explained(eventually(() => alerts().some((a) => a.sessionId === 'cc'), 30_000, POLL_MS, 'a push for cc'));
      expect(alerts().filter((a) => a.sessionId === 'cc')).toEqual([{ sessionId: 'cc', title: 'Claude is waiting for you', body: 'cc' }]);
      m.close();

      await explained(killServerAndRestore('cc'));
      const again = fx.mirror('cc');
      await explained(shows(again, [PROMPT, TOOL_OUTPUT, FINAL], AGENT_START_MS, 'the resumed conversation on a new client'));
      await explained(
        eventually(async () => (await listed('cc'))?.agentState === 'idle', AGENT_START_MS, POLL_MS, 'cc idle after the resume'),
      );

      // A command that needs permission: the phone is told what is asked.
      claudeCommand = `touch tether-perm.txt && echo ${TOOL_OUTPUT}`;
      claudeFinal = ASK_FINAL;
      const before = alerts().length;
      await type(again, ASK_PROMPT);
      await explained(shows(again, ['Do you want to proceed?'], TURN_MS, 'the permission question on the client'));
      await explained(eventually(() => alerts().length > before, 30_000, POLL_MS, 'a push for the permission question'));
      // The alert is the ask: who asks for what, and the command (docs/push.md "Asks").
      expect(alerts()[before]).toEqual({ sessionId: 'cc', title: 'Claude asks to use Bash', body: claudeCommand });
      // A person reads the dialog before answering: Claude drops a key typed the moment it is drawn
      // (the push comes at once, from its PermissionRequest hook), and then waits forever.
      await explained(still(again, TURN_MS, 'the permission dialog drawn and still on the client'));
      again.stream.sendKey('enter'); // "1. Yes" is selected
      await explained(shows(again, [ASK_FINAL], TURN_MS, 'the answer after the approval'));
      await explained(eventually(() => states(again).at(-1) === 'awaiting-input', TURN_MS, POLL_MS, 'awaiting-input after the approval'));
      expect(states(again)).toEqual(expect.arrayContaining(['thinking', 'tool Bash', 'awaiting-input']));
    },
    TEST_MS,
  );

  test(
    'Codex: thinking, exec_command, thinking, awaiting-input; its built-in commands; one push per turn; restored with its conversation, and its next turn seen too',
    async () => {
      const m = await createShowing('cx', 'codex', codex().cwd, ['OpenAI Codex (v0.169.0)', 'Ask Codex to do anything']);
      const before = alerts().length;
      await turn(m, PROMPT, [`Ran echo ${TOOL_OUTPUT}`, FINAL], 'the tool output and answer on the client', 'the awaiting-input frame');
      // Codex's first record makes it present (idle), then its turn as its rollout file tells it.
      await statesAre(m, ['idle', ...CODEX_TURN]);

      const commands = (await (await fx.d.get('/sessions/cx/commands')).json()) as { name: string; description: string }[];
      expect(commands.map((c) => c.name)).toEqual(expect.arrayContaining(['model', 'review', 'new', 'compact', 'init', 'status', 'exit']));
      expect(commands).toContainEqual({ name: 'review', description: 'review my current changes and find issues' });
      expect(commands.map((c) => c.name)).not.toContain('add-dir'); // Claude Code's, not Codex's

      await explained(
        eventually(
          () =>
            alerts()
              .slice(before)
              .some((a) => a.sessionId === 'cx'),
          30_000,
          POLL_MS,
          'a push for cx',
        ),
      );
      // One alert: the notify and the rollout's own end of the turn, and Codex's title thread, make one.
      expect(alerts().slice(before)).toEqual([{ sessionId: 'cx', title: 'Codex is waiting for you', body: 'cx' }]);
      m.close();
      // The conversation id comes with Codex's notify at the turn's end, which may come after the
      // rollout file's own end of the turn (that one pushed): the record must hold it first.
      await explained(
        eventually(
          () => /"conversation": "[0-9a-f-]{36}"/.test(readFileSync(join(fx.home.dataDir, 'sessions', 'cx.json'), 'utf8')),
          30_000,
          POLL_MS,
          "cx's record holding its conversation",
        ),
      );

      await explained(killServerAndRestore('cx'));
      const again = fx.mirror('cx');
      await explained(shows(again, [PROMPT, TOOL_OUTPUT, FINAL], AGENT_START_MS, 'the resumed conversation on a new client'));
      const resumed = alerts().length;
      // The resumed Codex appends to the same rollout file: its next turn is seen as it goes.
      await turn(again, AGAIN_PROMPT, [AGAIN_FINAL], 'the second answer on the client', 'awaiting-input after the second turn');
      // Before the turn: the state the client is told on connecting (the old Codex's
      // awaiting-input while the restore is not yet taken for an exit), or idle (the resumed
      // Codex's first record).
      const seen = states(again);
      await explained(
        Promise.resolve().then(() =>
          expect(seen.slice(seen.indexOf('thinking')), `states of the resumed Codex's turn: ${seen.join(', ')}`).toEqual(CODEX_TURN),
        ),
      );
      for (const s of seen.slice(0, seen.indexOf('thinking'))) expect(['idle', 'awaiting-input']).toContain(s);
      await explained(eventually(() => alerts().length > resumed, 30_000, POLL_MS, 'a push for the second turn'));
      expect(alerts().slice(resumed)).toEqual([{ sessionId: 'cx', title: 'Codex is waiting for you', body: 'cx' }]);
    },
    TEST_MS,
  );

  test(
    '`tether attach --agent codex` starts Codex (with its notify program) in a session the daemon follows; an unknown agent is refused and makes nothing',
    async () => {
      const refused = await attach(['cx-nope', '--agent', 'nope', '--detach'], codex().cwd);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain('no agent named "nope" is configured; the configured agents are: default, claude, codex');
      expect(await listed('cx-nope')).toBeUndefined();

      const made = await attach(['cx-attach', '--agent', 'codex', '--detach'], codex().cwd);
      expect(made, made.stderr).toMatchObject({ code: 0, stdout: 'created session cx-attach\n' });
      await explained(eventually(async () => (await listed('cx-attach'))?.state === 'running', 30_000, POLL_MS, 'cx-attach listed'));
      expect((await listed('cx-attach'))?.agent).toBe('codex');
      const started = await fx.tmux.tmux('display-message', '-p', '-t', '=cx-attach:', '#{pane_start_command}');
      expect(started).toContain(agentBin('codex'));
      expect(started).toContain('dist/agent/codex/notify.js');
      const m = fx.mirror('cx-attach');
      await explained(shows(m, ['OpenAI Codex (v0.169.0)', 'Ask Codex to do anything'], AGENT_START_MS, 'codex ready on the client'));
      const commands = (await (await fx.d.get('/sessions/cx-attach/commands')).json()) as { name: string }[];
      expect(commands.map((c) => c.name)).toEqual(expect.arrayContaining(['model', 'review', 'new']));
      const before = alerts().length;
      await type(m, PROMPT);
      await explained(shows(m, [`Ran echo ${TOOL_OUTPUT}`], TURN_MS, 'the tool output on the client'));
      await explained(eventually(() => states(m).at(-1) === 'awaiting-input', TURN_MS, POLL_MS, 'the awaiting-input frame'));
      await statesAre(m, ['idle', ...CODEX_TURN]);
      await explained(eventually(() => alerts().length > before, 30_000, POLL_MS, 'a push for cx-attach'));
      expect(alerts().slice(before)).toEqual([{ sessionId: 'cx-attach', title: 'Codex is waiting for you', body: 'cx-attach' }]);
    },
    TEST_MS,
  );
});

function codexKey(home: CodexHome): Record<string, string> {
  return Object.fromEntries(Object.entries(home.env).filter(([k]) => k !== 'HOME' && k !== 'CODEX_HOME'));
}
