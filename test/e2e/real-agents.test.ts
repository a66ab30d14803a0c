/**
 * The real Claude Code and Codex, each in a pane of a private tmux server against a local fake
 * model: a prompt typed into the pane, one shell tool call, the final answer on screen. Beside
 * what a user sees, this pins what tether's agent adapters build on, captured from the real
 * programs: Claude Code's hook events and their fields (a plain turn and one that asks for
 * permission), Codex's notify program and hooks, where each keeps its sessions, and that each
 * resumes a session after its tmux server was killed.
 *
 * The agents are the pinned test-only installs of test/agents (test/helpers/agent-bins.ts): a
 * missing one fails the test with the command that installs it.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { agentBin, AGENT_ENV_CLEARED } from '../../testkit/agent-bins.js';
import { claudeHome, type ClaudeHome } from '../../testkit/claude-home.js';
import { codexHome, type CodexHome } from '../../testkit/codex-home.js';
import { anthropicText, isAgentTurn, startFakeAnthropic, toolResults, type AnthropicScript } from '../../testkit/fake-anthropic.js';
import { callOutputs, responsesText, shellCall, startFakeResponses, toolNames } from '../../testkit/fake-responses.js';
import { MARKER_TURN } from '../helpers/agent-fixture.js';
import { eventually, privateTmux, type PrivateTmux } from '../helpers/tmux.js';

/** A cold start of a 370 MB binary on a busy two-core machine. */
const AGENT_START_MS = 60_000;
/** One turn: two model requests, a shell command, the hooks' node processes. */
const TURN_MS = 60_000;
/** Claude Code's permission Notification came about 6 s after the prompt appeared. */
const NOTIFICATION_MS = 45_000;
const TEST_MS = 300_000;
const POLL_MS = 250;

const { prompt: PROMPT, output: TOOL_OUTPUT, final: FINAL } = MARKER_TURN;
/** Claude Code's tool output line: `⎿` then a no-break space and a space before the output. */
const TOOL_LINE = new RegExp(`⎿\\s+${TOOL_OUTPUT}`, 'u');

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function tmuxServer(): Promise<PrivateTmux> {
  const tmux = await privateTmux();
  cleanups.push(() => tmux.cleanup());
  return tmux;
}

/** Starts `argv` in a new session's pane with exactly `env` over the cleared environment. */
async function startAgent(tmux: PrivateTmux, session: string, cwd: string, env: Record<string, string>, argv: string[]): Promise<void> {
  const vars = Object.entries(env).map(([k, v]) => `${k}=${v}`);
  const clear = AGENT_ENV_CLEARED.flatMap((v) => ['-u', v]);
  await tmux.tmux('new-session', '-d', '-s', session, '-x', '120', '-y', '40', '-c', cwd, 'env', ...clear, ...vars, ...argv);
}

/** Waits until the pane shows every one of `texts`; resolves with the screen. */
function screenShows(tmux: PrivateTmux, session: string, texts: (string | RegExp)[], ms: number, what: string): Promise<string> {
  return eventually(
    async () => {
      const screen = await tmux.capture(session);
      if (texts.every((t) => (typeof t === 'string' ? screen.includes(t) : t.test(screen)))) return screen;
      throw new Error(`the screen is:\n${screen}`);
    },
    ms,
    POLL_MS,
    `${what} (screen of ${session} showing ${texts.map(String).join(', ')})`,
  );
}

/** How long a screen must stay unchanged before a key is pressed at it: the program drew it and reads keys. */
const DIALOG_QUIET_MS = 300;
/** How long a pressed key may take to show; past it the key counts as lost, and is pressed again. */
const KEY_SHOWS_MS = 5_000;

/** Waits until the pane's screen has not changed for DIALOG_QUIET_MS. */
async function screenQuiet(tmux: PrivateTmux, session: string, what: string): Promise<void> {
  let last = '';
  let since = Date.now();
  await eventually(
    async () => {
      const screen = await tmux.capture(session);
      if (screen !== last) {
        last = screen;
        since = Date.now();
      }
      return Date.now() - since >= DIALOG_QUIET_MS;
    },
    AGENT_START_MS,
    50,
    `${what}: the screen quiet`,
  );
}

/**
 * Presses `key` at a dialog as a person does: once the dialog is drawn and quiet, then waits until
 * the screen shows `shows` (the program took it). A program draws a dialog before it reads keys, and
 * a key sent the moment it shows can be lost (Codex's hooks-review screen under load): only then, the
 * screen unchanged by it, is it pressed again.
 */
async function pressTaken(tmux: PrivateTmux, session: string, key: string, shows: (string | RegExp)[], what: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    await screenQuiet(tmux, session, what);
    await tmux.tmux('send-keys', '-t', session, key);
    try {
      await screenShows(tmux, session, shows, KEY_SHOWS_MS, what);
      return;
    } catch (err) {
      if (attempt >= 5) throw err;
    }
  }
}

/** Types `text` as literal keys (argv, never a tmux command), waits to see it, then presses Enter. */
async function typePrompt(tmux: PrivateTmux, session: string, text: string): Promise<void> {
  await tmux.tmux('send-keys', '-t', session, '-l', text);
  await screenShows(tmux, session, [text], TURN_MS, 'the typed prompt');
  await tmux.tmux('send-keys', '-t', session, 'Enter');
}

/** A hook call's short name: the event, with the tool for tool events (`PreToolUse(Bash)`). */
function hookName(h: { hook_event_name: string; tool_name?: unknown }): string {
  return typeof h.tool_name === 'string' ? `${h.hook_event_name}(${h.tool_name})` : h.hook_event_name;
}

function hookOf<T extends { hook_event_name: string }>(hooks: T[], event: string): T {
  const found = hooks.find((h) => h.hook_event_name === event);
  if (!found) throw new Error(`no ${event} hook among ${hooks.map((h) => h.hook_event_name).join(', ')}`);
  return found;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The fake's script for Claude Code: one Bash call running `command`, then the final answer. */
function claudeScript(command: string): AnthropicScript {
  return (req) => {
    if (!isAgentTurn(req)) return { text: 'Marker command' };
    if (toolResults(req).length > 0) return { text: FINAL };
    return { text: 'Running it.', toolUses: [{ name: 'Bash', input: { command, description: 'Print the marker' } }] };
  };
}

async function startClaude(tmux: PrivateTmux, home: ClaudeHome, extra: string[]): Promise<void> {
  const argv = [agentBin('claude'), '--settings', home.settingsFile, '--permission-mode', 'default', '--verbose', ...extra];
  await startAgent(tmux, 'claude', home.cwd, home.env, argv);
  await screenShows(tmux, 'claude', ['Claude Code v2.1.328', '? for shortcuts'], AGENT_START_MS, 'claude ready for input');
}

function waitHook(home: { hooks(): { hook_event_name: string }[] }, event: string, ms: number): Promise<unknown> {
  return eventually(() => home.hooks().some((h) => h.hook_event_name === event), ms, POLL_MS, `the ${event} hook`);
}

describe('Claude Code 2.1.328 against a fake Anthropic API', () => {
  test(
    'runs a Bash call on screen, reports the turn through its hooks, and resumes after its tmux server died',
    async () => {
      const fake = await startFakeAnthropic(claudeScript(`echo ${TOOL_OUTPUT}`));
      cleanups.push(() => fake.close());
      const home = claudeHome(fake.baseUrl, { allowBash: true });
      cleanups.push(() => home.cleanup());
      const tmux = await tmuxServer();
      await startClaude(tmux, home, []);
      await typePrompt(tmux, 'claude', PROMPT);
      await screenShows(tmux, 'claude', [`Bash(echo ${TOOL_OUTPUT})`, TOOL_LINE, FINAL], TURN_MS, 'the tool output and answer');
      // The model got the command's output back in the follow-up request.
      const results = fake.requests.filter(isAgentTurn).flatMap(toolResults);
      expect(results.map((r) => anthropicText(r.content))).toEqual([TOOL_OUTPUT]);

      await waitHook(home, 'Stop', TURN_MS);
      const hooks = home.hooks();
      expect(hooks.map(hookName)).toEqual(['SessionStart', 'UserPromptSubmit', 'PreToolUse(Bash)', 'PostToolUse(Bash)', 'Stop']);
      const sessionId = hooks[0]!.session_id;
      expect(sessionId).toMatch(UUID);
      const transcript = join(home.transcriptDir(), `${sessionId}.jsonl`);
      for (const h of hooks) expect(h).toMatchObject({ session_id: sessionId, cwd: home.cwd, transcript_path: transcript });
      expect(existsSync(transcript)).toBe(true);
      expect(hookOf(hooks, 'SessionStart')).toMatchObject({ source: 'startup' });
      expect(hookOf(hooks, 'UserPromptSubmit')).toMatchObject({ prompt: PROMPT, permission_mode: 'default' });
      const pre = hookOf(hooks, 'PreToolUse');
      expect(pre).toMatchObject({ tool_input: { command: `echo ${TOOL_OUTPUT}` }, tool_use_id: results[0]!.tool_use_id });
      expect(hookOf(hooks, 'PostToolUse')).toMatchObject({ tool_use_id: pre.tool_use_id, tool_response: { stdout: TOOL_OUTPUT } });
      expect(hookOf(hooks, 'Stop')).toMatchObject({ last_assistant_message: FINAL, stop_hook_active: false });
      // Claude Code also keeps a live record per process, naming its session and tmux pane.
      // Its status turns from "busy" to "idle" a moment after the Stop hook.
      const liveDir = join(home.home, '.claude', 'sessions');
      const liveRecord = () => {
        const file = readdirSync(liveDir).find((f) => f.endsWith('.json'));
        return file ? (JSON.parse(readFileSync(join(liveDir, file), 'utf8')) as Record<string, unknown>) : {};
      };
      await eventually(() => liveRecord().status === 'idle', TURN_MS, POLL_MS, 'the live record saying idle');
      expect(liveRecord()).toMatchObject({ sessionId, cwd: home.cwd, version: '2.1.328', tmux: expect.stringMatching(/%\d+$/) as unknown });

      // The tmux server dies; the conversation comes back with `claude --resume <session_id>`.
      await tmux.cleanup();
      const again = await tmuxServer();
      const before = home.hooks().length;
      await startClaude(again, home, ['--resume', sessionId]);
      await screenShows(again, 'claude', [PROMPT, TOOL_LINE, FINAL], AGENT_START_MS, 'the resumed conversation');
      // Killing the server may also have delivered SessionEnd (reason "other") from the old process.
      const resumed = () =>
        home
          .hooks()
          .slice(before)
          .find((h) => h.hook_event_name === 'SessionStart');
      await eventually(resumed, AGENT_START_MS, POLL_MS, 'the resumed session start hook');
      expect(resumed()).toMatchObject({ source: 'resume', session_id: sessionId });
    },
    TEST_MS,
  );

  test(
    'asks before a command that needs permission: PermissionRequest at once, Notification later, then the turn goes on',
    async () => {
      const command = `touch tether-perm.txt && echo ${TOOL_OUTPUT}`;
      const fake = await startFakeAnthropic(claudeScript(command));
      cleanups.push(() => fake.close());
      const home = claudeHome(fake.baseUrl);
      cleanups.push(() => home.cleanup());
      const tmux = await tmuxServer();
      await startClaude(tmux, home, []);
      await typePrompt(tmux, 'claude', PROMPT);
      await screenShows(tmux, 'claude', ['Do you want to proceed?', '1. Yes'], TURN_MS, 'the permission prompt');
      await waitHook(home, 'PermissionRequest', TURN_MS);
      await waitHook(home, 'Notification', NOTIFICATION_MS);
      expect(existsSync(join(home.cwd, 'tether-perm.txt'))).toBe(false);
      const asking = home.hooks();
      expect(asking.map(hookName)).toEqual([
        'SessionStart',
        'UserPromptSubmit',
        'PreToolUse(Bash)',
        'PermissionRequest(Bash)',
        'Notification',
      ]);
      expect(hookOf(asking, 'PermissionRequest')).toMatchObject({ tool_input: { command } });
      expect(hookOf(asking, 'Notification')).toMatchObject({
        notification_type: 'permission_prompt',
        message: 'Claude needs your permission',
      });

      await tmux.tmux('send-keys', '-t', 'claude', 'Enter'); // "1. Yes" is selected
      await screenShows(tmux, 'claude', [TOOL_LINE, FINAL], TURN_MS, 'the approved command and answer');
      await waitHook(home, 'Stop', TURN_MS);
      expect(home.hooks().slice(asking.length).map(hookName)).toEqual(['PostToolUse(Bash)', 'Stop']);
      expect(existsSync(join(home.cwd, 'tether-perm.txt'))).toBe(true);
    },
    TEST_MS,
  );
});

async function startCodex(tmux: PrivateTmux, home: CodexHome, extra: string[]): Promise<void> {
  const argv = [agentBin('codex'), '-c', `notify=${home.notifyToml}`, ...extra];
  await startAgent(tmux, 'codex', home.cwd, home.env, argv);
}

describe('Codex 0.169.0 against a fake Responses API', () => {
  test(
    'runs a shell call on screen, reports the turn through notify and hooks, and resumes after its tmux server died',
    async () => {
      const fake = await startFakeResponses((req) => {
        // Codex asks a tool-less side request for the session's title.
        if (toolNames(req).length === 0) return { text: 'Run marker command' };
        if (callOutputs(req).length > 0) return { text: FINAL };
        return { text: 'Running it.', calls: [shellCall(req, `echo ${TOOL_OUTPUT}`)] };
      });
      cleanups.push(() => fake.close());
      const home = codexHome(fake.baseUrl);
      cleanups.push(() => home.cleanup());
      const tmux = await tmuxServer();
      await startCodex(tmux, home, []);
      // New hooks are asked about once; the answer is kept in config.toml.
      await screenShows(tmux, 'codex', ['Hooks need review', '2. Trust all and continue'], AGENT_START_MS, 'the hook trust question');
      await pressTaken(tmux, 'codex', '2', ['› 2. Trust all and continue'], 'the trust choice selected');
      await pressTaken(tmux, 'codex', 'Enter', ['OpenAI Codex (v0.169.0)', 'Ask Codex to do anything'], 'codex ready for input');
      await typePrompt(tmux, 'codex', PROMPT);
      await screenShows(tmux, 'codex', [`Ran echo ${TOOL_OUTPUT}`, `└ ${TOOL_OUTPUT}`, FINAL], TURN_MS, 'the tool output and answer');
      const outputs = fake.requests.flatMap(callOutputs);
      expect(outputs).toHaveLength(1);
      expect(responsesText(outputs[0])).toContain(`Output:\n${TOOL_OUTPUT}\n`);

      // notify: one call at the end of the turn (and one per side request, on its own thread).
      const mine = () => home.notifications().filter((n) => JSON.stringify(n['input-messages']) === JSON.stringify([PROMPT]));
      await eventually(() => mine().length === 1, TURN_MS, POLL_MS, 'the turn-complete notification');
      const done = mine()[0]!;
      expect(done).toMatchObject({ type: 'agent-turn-complete', cwd: home.cwd, client: 'codex-tui', 'last-assistant-message': FINAL });
      const threadId = String(done['thread-id']);
      expect(threadId).toMatch(UUID);
      expect(String(done['turn-id'])).toMatch(UUID);
      // The session's rollout file is named after the thread.
      const files = home.sessionFiles();
      expect(files).toHaveLength(1);
      expect(files[0]).toMatch(new RegExp(`^\\d{4}/\\d{2}/\\d{2}/rollout-[0-9T-]+-${threadId}\\.jsonl$`));

      // The rollout file tether's adapter follows: the turn's records in the order it reads them.
      const records = readFileSync(join(home.dir, 'sessions', files[0]!), 'utf8')
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as { type: string; payload: { type?: string; role?: string; name?: string; call_id?: string } });
      expect(records[0]).toMatchObject({ type: 'session_meta', payload: { id: threadId, cwd: home.cwd } });
      const turn = records.flatMap(({ type, payload: p }) => {
        if (type === 'event_msg' && (p.type === 'task_started' || p.type === 'task_complete')) return [p.type];
        if (type === 'response_item' && (p.type === 'function_call' || p.type === 'function_call_output'))
          return [`${p.type} ${p.call_id}`];
        if (type === 'response_item' && p.type === 'message' && p.role === 'user') return ['user message'];
        return [];
      });
      const callId = records.find((r) => r.payload.type === 'function_call')?.payload.call_id;
      expect(records.find((r) => r.payload.type === 'function_call')?.payload.name).toBe('exec_command');
      // Codex's own context comes as user messages too, before the prompt.
      expect(turn.filter((t) => t !== 'user message')).toEqual([
        'task_started',
        `function_call ${callId}`,
        `function_call_output ${callId}`,
        'task_complete',
      ]);
      expect(turn.lastIndexOf('user message')).toBeLessThan(turn.indexOf(`function_call ${callId}`));

      // Hooks: the prompt's submission is seen (UserPromptSubmit), keyed by the same thread.
      await waitHook(home, 'Stop', TURN_MS);
      const hooks = home.hooks();
      expect(hooks.map(hookName)).toEqual(['SessionStart', 'UserPromptSubmit', 'PreToolUse(Bash)', 'PostToolUse(Bash)', 'Stop']);
      const transcript = join(home.dir, 'sessions', files[0]!);
      for (const h of hooks) expect(h).toMatchObject({ session_id: threadId, cwd: home.cwd, transcript_path: transcript });
      for (const h of hooks.slice(1)) expect(h).toMatchObject({ turn_id: done['turn-id'] });
      expect(hookOf(hooks, 'SessionStart')).toMatchObject({ source: 'startup' });
      expect(hookOf(hooks, 'UserPromptSubmit')).toMatchObject({ prompt: PROMPT });
      expect(hookOf(hooks, 'PreToolUse')).toMatchObject({ tool_input: { command: `echo ${TOOL_OUTPUT}` } });
      expect(hookOf(hooks, 'PostToolUse')).toMatchObject({ tool_response: `${TOOL_OUTPUT}\n` });
      expect(hookOf(hooks, 'Stop')).toMatchObject({ last_assistant_message: FINAL });

      // The tmux server dies; the conversation comes back with `codex resume <thread-id>`.
      await tmux.cleanup();
      const again = await tmuxServer();
      const before = home.hooks().length;
      await startCodex(again, home, ['resume', threadId]);
      await screenShows(
        again,
        'codex',
        [PROMPT, `└ ${TOOL_OUTPUT}`, FINAL, 'Ask Codex to do anything'],
        AGENT_START_MS,
        'the resumed conversation',
      );
      // Resuming runs no hook until the next prompt (no SessionStart with source "resume").
      expect(home.hooks().slice(before)).toEqual([]);
    },
    TEST_MS,
  );
});
