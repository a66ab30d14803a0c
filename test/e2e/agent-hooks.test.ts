/**
 * Claude Code's integration against the real daemon: a session created with `agent: "claude"`
 * runs a fake `claude` (a node script of that name) that, like Claude Code, reads the
 * `--settings` file tether gave it and runs each hook's command through sh with the hook input
 * on stdin; tether's built hook program reports to the daemon, and a real WebSocket client sees
 * the state frames. The fake fires one hook event per line typed into its pane (through the
 * API, as a phone would). Also: the hook program with no daemon exits 0, silent, at once.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { writeFakeClaude } from '../helpers/fake-claude.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { useDaemon } from '../helpers/daemon-fixture.js';
import { ROOT } from '../helpers/daemon.js';
import { eventually } from '../helpers/tmux.js';

const HOOK = join(ROOT, 'dist/agent/claude/hook.js');
const SESSION_ID = '5f0c2a6e-3b1d-4c8e-9a7f-2d4b6c8e0a1b';
/** Claude gives a hook this long before stopping it (tether's settings say 5 s). */
const CLAUDE_HOOK_TIMEOUT_MS = 5000;

const work = mkdtempSync(join(tmpdir(), 'tether-claude-'));
const project = join(work, 'project');
const log = join(work, 'hooks.log');
const argsFile = join(work, 'args.json');
const fakeClaude = join(work, 'claude');
mkdirSync(join(project, '.claude', 'commands'), { recursive: true });
writeFileSync(join(project, '.claude', 'commands', 'deploy.md'), '---\ndescription: Deploy the app\n---\nDeploy $ARGUMENTS\n');
// Hook inputs as Claude Code documents them; one event per typed line.
writeFakeClaude(fakeClaude, {
  sessionId: SESSION_ID,
  setup: `fs.writeFileSync(${JSON.stringify(argsFile)}, JSON.stringify(args));
const big = 'x'.repeat(3 * 1024 * 1024);`,
  afterHook: `fs.appendFileSync(${JSON.stringify(log)}, JSON.stringify({ event: hook_event_name, status: r.status, stdout: String(r.stdout), stderr: String(r.stderr) }) + '\\n');`,
  events: `  prompt: () => fire('UserPromptSubmit', { prompt: 'fix the build' }),
  tool: () => fire('PreToolUse', { tool_name: 'Bash', tool_input: { command: 'npm test' }, tool_use_id: 'toolu_1' }),
  write: () => fire('PreToolUse', { tool_name: 'Write', tool_input: { file_path: '/tmp/a', content: big }, tool_use_id: 'toolu_2' }),
  post: () => fire('PostToolUse', { tool_name: 'Bash', tool_input: {}, tool_response: {}, tool_use_id: 'toolu_1' }),
  post2: () => fire('PostToolUse', { tool_name: 'Write', tool_input: {}, tool_response: {}, tool_use_id: 'toolu_2' }),
  permission: () => fire('PermissionRequest', { tool_name: 'Bash', tool_input: { command: 'rm -rf build' } }),
  notify: () => fire('Notification', { message: 'Claude needs your permission to use Bash', notification_type: 'permission_prompt' }),
  stop: () => fire('Stop', { stop_hook_active: false }),`,
  onLine: `if (line === 'quit') { fire('SessionEnd', { reason: 'exit' }); process.exit(0); }`,
  afterLine: `process.stdout.write('fired ' + line + '\\n');`,
});

afterAll(() => rmSync(work, { recursive: true, force: true }));

type Item = { id: string; agent: string; agentState: string | null };

describe('Claude Code hooks reach a phone as agent state', () => {
  const fx = useDaemon(`[agents.claude]\ncommand = ${JSON.stringify(fakeClaude)}\n`);
  const { mirror, json } = fx;
  const item = async (id: string): Promise<Item | undefined> =>
    ((await (await json('GET', '/sessions')).json()) as Item[]).find((s) => s.id === id);
  const hookLines = (): { event: string; status: number; stdout: string }[] => {
    try {
      return readFileSync(log, 'utf8')
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { event: string; status: number; stdout: string });
    } catch {
      return [];
    }
  };

  it('runs the named agent with tether hooks; every event becomes the state frame a client sees', async () => {
    const res = await json('POST', '/sessions', { name: 'cc', agent: 'claude', cwd: project });
    expect(res.status).toBe(201);
    const m = mirror('cc');
    const states = () =>
      m.received.flatMap((r) => (r.kind === 'state' ? [`${r.frame.value}${r.frame.tool ? `:${r.frame.tool}` : ''}`] : []));
    await eventually(() => states().at(-1) === 'idle', 30_000, 50, 'the idle state after SessionStart');
    const meta = m.received.find((r) => r.kind === 'meta');
    expect(meta?.kind === 'meta' && meta.frame.agent).toBe('claude');
    expect((await item('cc'))?.agent).toBe('claude');
    const args = JSON.parse(readFileSync(argsFile, 'utf8')) as string[];
    expect(args).toEqual(['--settings', join(fx.home.dataDir, 'agents', 'claude-settings.json')]);

    const step = async (line: string, expected: string) => {
      const before = hookLines().length;
      expect((await json('POST', '/sessions/cc/input', { type: 'keys', data: `${line}\r` })).status).toBe(204);
      await eventually(() => hookLines().length > before, 30_000, 50, `the hook of "${line}" ran`);
      await eventually(() => states().at(-1) === expected, 30_000, 50, `state ${expected} after "${line}" (states: ${states().join(' ')})`);
    };
    await step('prompt', 'thinking');
    await step('tool', 'tool:Bash');
    await step('write', 'tool:Write');
    await step('post2', 'tool:Bash');
    await step('post', 'thinking');
    await step('stop', 'awaiting-input');
    await step('prompt', 'thinking');
    await step('permission', 'awaiting-input');
    expect(states()).toEqual([
      'idle',
      'thinking',
      'tool:Bash',
      'tool:Write',
      'tool:Bash',
      'thinking',
      'awaiting-input',
      'thinking',
      'awaiting-input',
    ]);
    // Claude acts on a hook's exit status and output: tether's hooks always exit 0 and say nothing.
    for (const h of hookLines())
      expect({ event: h.event, status: h.status, stdout: h.stdout }).toEqual({ event: h.event, status: 0, stdout: '' });
    expect((await item('cc'))?.agentState).toBe('awaiting-input');

    // The record keeps the agent and Claude's session id: a restore runs `claude --resume <id>`.
    const record = () =>
      JSON.parse(readFileSync(join(fx.home.dataDir, 'sessions', 'cc.json'), 'utf8')) as { agent?: string; conversation?: string };
    await eventually(() => record().conversation === SESSION_ID, 15_000, 50, 'the record holding the conversation id');
    expect(record().agent).toBe('claude');

    const commands = (await (await json('GET', '/sessions/cc/commands')).json()) as { name: string; description: string }[];
    expect(commands.map((c) => c.name)).toContain('compact');
    expect(commands).toContainEqual({ name: 'deploy', description: 'Deploy the app (project)' });
    expect(commands.map((c) => c.name)).not.toContain('tree'); // pi's, not Claude's

    await step('quit', 'awaiting-input');
    await eventually(async () => (await item('cc'))?.agentState === null, 30_000, 50, 'no agent once Claude ended');
  }, 180_000);

  it('refuses an agent name that is not configured, naming the configured ones', async () => {
    for (const agent of ['claud', 'x; rm -rf ~', 'default\n']) {
      const res = await json('POST', '/sessions', { name: 'nope', agent });
      expect(res.status).toBe(400);
      const body = (await res.json()) as { error: string; message: string };
      expect(body.error).toBe('bad-request');
      expect(body.message).toContain('the configured agents are: default, claude');
    }
    expect(await item('nope')).toBeUndefined();
  });
});

describe('the hook program without a daemon', () => {
  it('exits 0 and prints nothing, well within the time Claude gives a hook', async () => {
    for (const socket of [join(work, 'no-such.sock'), '']) {
      const started = performance.now();
      const child = spawn(process.execPath, [HOOK], {
        env: { PATH: process.env.PATH, TMUX_PANE: '%1', TMUX: '/tmp/tmux-x/default,1,0', TETHER_AGENT_SOCKET: socket },
      });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (out += d.toString()));
      child.stdin.end(JSON.stringify({ hook_event_name: 'Stop', session_id: SESSION_ID }));
      const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
      expect({ code, out }).toEqual({ code: 0, out: '' });
      expect(performance.now() - started).toBeLessThan(CLAUDE_HOOK_TIMEOUT_MS);
    }
  });
});
