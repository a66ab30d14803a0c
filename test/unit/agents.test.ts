/**
 * Every agent beside pi: named agents in the config (`[agents.<name>]`), which kind a program is,
 * the argv each kind is launched with (exact, with hostile values kept as single words), Claude
 * Code's hook events as agent state, the settings file with tether's hooks, its command files,
 * and Codex's notify.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { claudePermission, claudeQuestion } from '../../src/agent/claude/asks.js';
import { readClaudeHook } from '../../src/agent/claude/events.js';
import { derivedClaudeFields } from '../../src/agent/claude/hook-fields.js';
import { claudeCustomCommands } from '../../src/agent/claude/commands.js';
import { readCommandFile } from '../../src/agent/contract/command-files.js';
import { claudeHookCommand, claudeSettings, shellQuote } from '../../src/agent/claude/settings.js';
import { readCodexNotify } from '../../src/agent/codex/events.js';
import { codexSessionsDir, isSavedThread } from '../../src/agent/codex/rollout.js';
import { notifyOfArgs, userNotify } from '../../src/agent/codex/user-notify.js';
import { agentKinds, detectAgentKind, resolveAgentKind } from '../../src/agent/contract/kinds.js';
import { integratedArgv, type LaunchContext } from '../../src/agent/contract/launch.js';
import { decodeAgentMessage } from '../../src/agent/wire/extension-channel.js';
import { hookReport } from '../../src/agent/wire/hook-send.js';
import { agentNames, agentTable, resolveAgent } from '../../src/service/agent-programs/agent-program.js';
import { ConfigError } from '../../src/config/config-error.js';
import { validateConfig } from '../../src/config/validate.js';
import { useProgramDir } from '../helpers/program-dir.js';

const { dir, script } = useProgramDir('tether-agents-');

describe('[agents.<name>] in the config', () => {
  const refusal = (raw: unknown): ConfigError => {
    try {
      validateConfig(raw, 'config.toml', { agentKinds: agentKinds() });
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      return err as ConfigError;
    }
    throw new Error('accepted');
  };

  it('takes named agents with the keys of [agent], args and kind defaulted', () => {
    const config = validateConfig(
      { agents: { claude: { command: 'claude' }, cx: { command: 'codex --full-auto', args: ['-m', 'o3'], kind: 'codex' } } },
      'f',
    );
    expect(config.agents).toEqual({
      claude: { command: 'claude', args: [], kind: 'auto' },
      cx: { command: 'codex --full-auto', args: ['-m', 'o3'], kind: 'codex' },
    });
    expect(agentNames(config)).toEqual(['default', 'claude', 'cx']);
    expect(agentTable(config, 'default')?.table).toBe('[agent]');
    expect(agentTable(config, 'cx')?.config.kind).toBe('codex');
    expect(agentTable(config, 'nope')).toBeNull();
    // A name that is an Object property is not an agent.
    expect(agentTable(config, 'toString')).toBeNull();
  });

  it('refuses bad names, missing commands, unknown keys and bad kinds, naming the key', () => {
    expect(refusal({ agents: { 'a b': { command: 'claude' } } }).message).toBe(
      'config.toml: agents."a b": an agent name must be 1 to 32 letters, digits, "_" or "-", and not "default" (that is [agent]), got "a b"',
    );
    expect(refusal({ agents: { default: { command: 'claude' } } }).key).toBe('agents.default');
    expect(refusal({ agents: { ['x'.repeat(33)]: { command: 'claude' } } }).message).toMatch(/an agent name must be 1 to 32/);
    expect(refusal({ agents: { 'a;rm -rf': { command: 'claude' } } }).key).toBe('agents."a;rm -rf"');
    expect(refusal({ agents: { claude: {} } }).message).toMatch(
      /^config\.toml: agents\.claude\.command is missing: it must be a command line/,
    );
    expect(refusal({ agents: { claude: { command: 'claude', model: 'x' } } }).message).toBe(
      'config.toml: unknown key agents.claude.model; known keys in [agents.claude]: command, args, kind',
    );
    expect(refusal({ agents: { claude: { command: 'claude', kind: 'gpt' } } }).message).toContain(
      `agents.claude.kind must be one of ${agentKinds()
        .map((k) => JSON.stringify(k))
        .join(', ')}, got "gpt"`,
    );
    expect(refusal({ agents: { claude: { command: 'claude $HOME' } } }).message).toContain('agents.claude.command must be a command line');
    expect(refusal({ agents: 5 }).key).toBe('agents');
  });
});

describe('which kind an agent is', () => {
  it('auto: by the program name, or where its link leads; an explicit kind wins', () => {
    const claude = script('claude');
    const codex = script('codex');
    const wrapper = script('my-claude.sh');
    const link = join(dir, 'cc');
    symlinkSync(claude, link);
    expect(detectAgentKind(claude)).toBe('claude');
    expect(detectAgentKind(codex)).toBe('codex');
    expect(detectAgentKind(link)).toBe('claude');
    expect(detectAgentKind(wrapper)).toBe('other');
    expect(detectAgentKind('/nonexistent/thing')).toBe('other');
    expect(resolveAgentKind('claude', wrapper)).toBe('claude');
    expect(resolveAgentKind('other', claude)).toBe('other');
    expect(resolveAgentKind('auto', codex)).toBe('codex');
  });
});

describe('the argv of each kind', () => {
  // What the daemon gives each adapter: its node, its built tree, what it wrote for the agent (Claude Code's settings).
  const integration: LaunchContext = { node: '/usr/bin/node', distDir: '/t/dist', prepared: '/d/agents/claude-settings.json' };
  const hostile = ['--model', "x'; rm -rf ~ #", '$(id)', '`id`', 'a b', ''];

  it('adds exactly the integration after the configured words, each value one word', () => {
    expect(integratedArgv('claude', ['/bin/claude', ...hostile], integration)).toEqual([
      '/bin/claude',
      ...hostile,
      '--settings',
      '/d/agents/claude-settings.json',
    ]);
    expect(integratedArgv('claude', ['/bin/claude'], integration, { conversation: '0b9e7c2a-1f7e-4a55-9f3b-6c1d2e3f4a5b' })).toEqual([
      '/bin/claude',
      '--settings',
      '/d/agents/claude-settings.json',
      '--resume',
      '0b9e7c2a-1f7e-4a55-9f3b-6c1d2e3f4a5b',
    ]);
    expect(integratedArgv('codex', ['/bin/codex', 'a b'], integration, { conversation: 'th-1' })).toEqual([
      '/bin/codex',
      'a b',
      '-c',
      'notify=["/usr/bin/node", "/t/dist/agent/codex/notify.js"]',
      'resume',
      'th-1',
    ]);
    expect(integratedArgv('pi', ['/bin/pi'], integration, { sessionFile: '/s/x.jsonl' })).toEqual([
      '/bin/pi',
      '--session',
      '/s/x.jsonl',
      '-e',
      '/t/dist/extension/index.js',
      '--tether',
    ]);
    expect(integratedArgv('other', ['/bin/aider', ...hostile], integration)).toEqual(['/bin/aider', ...hostile]);
  });

  it('never puts a conversation id that could read as an option or hold a space on the command line', () => {
    for (const bad of ['--dangerously-skip-permissions', '-x', 'a b', 'x;y', '', 'é']) {
      expect(integratedArgv('claude', ['/bin/claude'], integration, { conversation: bad })).toEqual([
        '/bin/claude',
        '--settings',
        '/d/agents/claude-settings.json',
      ]);
      expect(integratedArgv('codex', ['/bin/codex'], integration, { conversation: bad })).toEqual([
        '/bin/codex',
        '-c',
        'notify=["/usr/bin/node", "/t/dist/agent/codex/notify.js"]',
      ]);
    }
  });

  it('a Claude agent from the config gets the socket and its settings; kind other gets neither', () => {
    const claude = script('claude');
    const launch = resolveAgent(
      { command: `claude --model 'opus 4'`, args: ['--verbose'], kind: 'auto' },
      { PATH: dir },
      {
        agentSocket: '/run/a.sock',
        prepared: { claude: '/d/s.json' },
      },
    )('/tmp');
    expect(launch.command).toEqual([claude, '--model', 'opus 4', '--verbose', '--settings', '/d/s.json']);
    expect(launch.env.TETHER_AGENT_SOCKET).toBe('/run/a.sock');
    const other = resolveAgent({ command: 'claude', args: [], kind: 'other' }, { PATH: dir }, { agentSocket: '/run/a.sock' })('/tmp');
    expect(other.command).toEqual([claude]);
    expect(other.env.TETHER_AGENT_SOCKET).toBeUndefined();
    expect(() => resolveAgent({ command: 'claude-x', args: [], kind: 'claude' }, { PATH: dir }, { table: '[agents.claude]' })).toThrow(
      /the agent program "claude-x" \(\[agents\.claude\] command\) was not found on PATH/,
    );
  });
});

/**
 * The hooks docs/agents.md "Claude Code" gives a meaning, in the order its table names them: the
 * capitalised names in backticks in the first column of the table headed "Claude Code hook".
 */
function documentedClaudeHooks(): string[] {
  const doc = readFileSync(new URL('../../docs/agents.md', import.meta.url), 'utf8');
  const table = doc.slice(doc.indexOf('| Claude Code hook |')).split('\n\n')[0]!;
  const firstCells = table.split('\n').map((row) => row.split('|')[1] ?? '');
  return [...new Set(firstCells.flatMap((cell) => [...cell.matchAll(/`([A-Z][A-Za-z]+)`/g)].map((m) => m[1]!)))];
}

describe("Claude Code's settings file", () => {
  it('runs the hook program for every event docs/agents.md gives a meaning, the paths quoted for sh', () => {
    expect(shellQuote("/opt/it's here/node")).toBe(`'/opt/it'\\''s here/node'`);
    const command = claudeHookCommand('/usr/bin/node', '/a b/hook.js');
    expect(command).toBe(`'/usr/bin/node' '/a b/hook.js'`);
    const { hooks } = claudeSettings(command);
    expect(documentedClaudeHooks()).toHaveLength(10);
    expect(Object.keys(hooks)).toEqual(documentedClaudeHooks());
    expect(hooks.PreToolUse).toEqual([{ matcher: '*', hooks: [{ type: 'command', command, timeout: 5 }] }]);
    expect(hooks.Stop).toEqual([{ hooks: [{ type: 'command', command, timeout: 5 }] }]);
  });
});

describe("Claude Code's hook events as agent state", () => {
  const session = { session_id: '5f0c2a6e-3b1d-4c8e-9a7f-2d4b6c8e0a1b', cwd: '/work/p' };
  const ev = (hook_event_name: string, more: Record<string, string> = {}) => readClaudeHook({ ...session, hook_event_name, ...more });

  it('maps each event as docs/agents.md says', () => {
    expect(ev('SessionStart', { source: 'startup' }).events).toEqual([{ type: 'event', event: 'agent.ready' }]);
    expect(ev('SessionStart', { source: 'compact' }).events).toEqual([]);
    expect(ev('UserPromptSubmit', { prompt: 'fix the build' })).toMatchObject({
      events: [{ type: 'event', event: 'agent.start' }],
      userMessage: 'fix the build',
      conversation: session.session_id,
      cwd: '/work/p',
    });
    expect(ev('PreToolUse', { tool_name: 'Bash', tool_use_id: 'toolu_1' }).events).toEqual([
      { type: 'event', event: 'tool.start', id: 'toolu_1', tool: 'Bash' },
    ]);
    expect(ev('PostToolUse', { tool_name: 'Bash', tool_use_id: 'toolu_1' }).events).toEqual([
      { type: 'event', event: 'tool.end', id: 'toolu_1' },
    ]);
    expect(ev('PostToolUseFailure', { tool_use_id: 'toolu_1' }).events).toEqual([{ type: 'event', event: 'tool.end', id: 'toolu_1' }]);
    expect(ev('PermissionRequest', { tool_name: 'Bash', concern: 'touch x' })).toMatchObject({
      events: [],
      asks: 'permission to use Bash',
      ask: { kind: 'permission', tool: 'Bash', concern: 'touch x' },
    });
    expect(
      ev('Notification', { notification_type: 'permission_prompt', message: 'Claude needs your permission to use Bash' }),
    ).toMatchObject({
      events: [{ type: 'event', event: 'agent.end', idle: true }],
      asks: 'Claude needs your permission to use Bash',
    });
    expect(ev('Notification', { message: 'Claude needs your permission to use Write' }).asks).toBe(
      'Claude needs your permission to use Write',
    );
    expect(ev('Notification', { notification_type: 'auth_success', message: 'ok' }).events).toEqual([]);
    // While its question is open, the permission notice that follows it changes nothing.
    expect(readClaudeHook({ hook_event_name: 'Notification', notification_type: 'permission_prompt', message: 'x' }, true).events).toEqual(
      [],
    );
    expect(ev('Stop', { stop_hook_active: 'false' }).events).toEqual([{ type: 'event', event: 'agent.end', idle: true }]);
    expect(ev('SessionEnd', { reason: 'exit' }).gone).toBe(true);
    expect(ev('SubagentStop').events).toEqual([]);
  });

  it('keeps only a session id safe for --resume; the cwd as reported (the hub checks it, for every agent)', () => {
    const out = readClaudeHook({ hook_event_name: 'Stop', session_id: '--resume-all', cwd: 'relative' });
    expect(out.conversation).toBeUndefined();
    expect(out.cwd).toBe('relative');
  });
});

describe("Codex's notify", () => {
  it('a turn of the session thread is awaiting-input; another thread, or another type, nothing', () => {
    const turn = { type: 'agent-turn-complete', 'thread-id': 'th1', 'turn-id': '1', cwd: '/w' };
    expect(readCodexNotify(turn, null)).toEqual({
      events: [{ type: 'event', event: 'agent.end', idle: true }],
      conversation: 'th1',
      cwd: '/w',
    });
    expect(readCodexNotify(turn, 'th1').events).toHaveLength(1);
    expect(readCodexNotify({ ...turn, 'thread-id': 'title' }, 'th1').events).toEqual([]);
    expect(readCodexNotify({ type: 'other' }, null).events).toEqual([]);
  });

  it('a thread the notify program found unsaved (the title generator, even when it finishes first) is ignored', () => {
    const title = { type: 'agent-turn-complete', 'thread-id': 'title', cwd: '/w', saved: 'false' };
    expect(readCodexNotify(title, null)).toEqual({ events: [] });
    const own = { type: 'agent-turn-complete', 'thread-id': 'th1', cwd: '/w', saved: 'true' };
    expect(readCodexNotify(own, null)).toMatchObject({ conversation: 'th1' });
  });

  it("a thread is saved when its rollout file is in its creation day's folder (or the day beside it)", () => {
    const dir = mkdtempSync(join(tmpdir(), 'tether-codex-rollout-'));
    try {
      // 0x019abc000000 ms: the id's creation time, as Codex's UUIDv7 thread ids carry it.
      const thread = '019abc00-0000-7000-8000-000000000001';
      const made = new Date(0x019abc000000);
      const two = (n: number) => String(n).padStart(2, '0');
      const day = join(dir, String(made.getFullYear()), two(made.getMonth() + 1), two(made.getDate()));
      expect(isSavedThread(dir, thread)).toBe(false);
      mkdirSync(day, { recursive: true });
      writeFileSync(join(day, `rollout-2025-11-25T10-00-00-${'019abc00-0000-7000-8000-000000000002'}.jsonl`), '');
      expect(isSavedThread(dir, thread)).toBe(false);
      writeFileSync(join(day, `rollout-2025-11-25T10-00-00-${thread}.jsonl`), '');
      expect(isSavedThread(dir, thread)).toBe(true);
      expect(isSavedThread(dir, 'not-a-uuid')).toBeNull();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect(codexSessionsDir({ CODEX_HOME: '/c' })).toBe('/c/sessions');
    expect(codexSessionsDir({ HOME: '/h' })).toBe('/h/.codex/sessions');
  });
});

describe('a hook report on the agent socket', () => {
  const report = {
    type: 'hook',
    v: 1,
    agent: 'claude',
    pane: '%3',
    tmuxSocket: '/tmp/tmux-0/default',
    pid: 42,
    fields: { hook_event_name: 'Stop' },
  };
  it('decodes with its fields, and refuses what breaks the rules', () => {
    expect(decodeAgentMessage(JSON.stringify(report))).toEqual(report);
    expect(decodeAgentMessage(JSON.stringify({ ...report, server: 7001 }))).toEqual({ ...report, server: 7001 });
    const proto = decodeAgentMessage(JSON.stringify(report).replace('"hook_event_name"', '"__proto__"'));
    expect(proto.type === 'hook' && Object.getPrototypeOf(proto.fields)).toBe(Object.prototype);
    for (const bad of [
      { ...report, agent: 'Claude Code' },
      { ...report, agent: 3 },
      { ...report, pane: '3' },
      { ...report, fields: { 'a b': 'x' } },
      { ...report, fields: { a: 1 } },
      { ...report, fields: { a: 'x'.repeat(4097) } },
      { ...report, fields: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`f${i}`, 'x'])) },
      { ...report, v: 2 },
      { ...report, server: 0 },
      { ...report, server: '7001' },
      { ...report, server: 1.5 },
    ]) {
      expect(() => decodeAgentMessage(JSON.stringify(bad))).toThrow(/./);
    }
  });

  it("names the pane, the server's socket and its pid as the pane's environment gives them; none outside a pane", () => {
    const fields = { hook_event_name: 'Stop' };
    expect(hookReport('claude', fields, { TMUX_PANE: '%3', TMUX: '/tmp/tmux-0/default,7001,0' }, 42)).toEqual({ ...report, server: 7001 });
    // A $TMUX without a pid (another multiplexer's, or cut) still places the pane; the daemon checks only the socket.
    expect(hookReport('claude', fields, { TMUX_PANE: '%3', TMUX: '/tmp/tmux-0/default' }, 42)).toEqual(report);
    expect(hookReport('claude', fields, { TMUX_PANE: '%3', TMUX: '/tmp/tmux-0/default,$(x),0' }, 42)).toEqual(report);
    expect(hookReport('claude', fields, { TMUX: '/tmp/tmux-0/default,7001,0' }, 42)).toBeNull();
    expect(hookReport('claude', fields, { TMUX_PANE: '%3' }, 42)).toBeNull();
  });
});

describe("Claude Code's command files", () => {
  it('reads the frontmatter description and argument hint, else the first line', () => {
    expect(readCommandFile('---\ndescription: "Review the diff"\nargument-hint: [pr]\nmodel: x\n---\nBody $ARGUMENTS\n')).toEqual({
      description: 'Review the diff',
      argumentHint: '[pr]',
    });
    expect(readCommandFile('\n# Fix the tests\nmore')).toEqual({ description: 'Fix the tests' });
    expect(readCommandFile('---\nallowed-tools: Bash\n---\n\nExplain $1')).toEqual({ description: 'Explain $1' });
    expect(readCommandFile('---\nunterminated: yes\nbody')).toEqual({ description: '---' });
  });

  it("lists the project's commands, then the user's, skipping names that are not one word", async () => {
    const home = join(dir, 'home');
    const project = join(dir, 'project');
    mkdirSync(join(home, '.claude', 'commands'), { recursive: true });
    mkdirSync(join(project, '.claude', 'commands'), { recursive: true });
    writeFileSync(join(home, '.claude', 'commands', 'standup.md'), '---\ndescription: Write my standup\n---\n...');
    writeFileSync(join(home, '.claude', 'commands', 'two words.md'), 'x');
    writeFileSync(join(home, '.claude', 'commands', 'notes.txt'), 'x');
    writeFileSync(join(project, '.claude', 'commands', 'deploy.md'), '---\ndescription: Deploy\nargument-hint: <env>\n---\n');
    expect(await claudeCustomCommands(project, { HOME: home })).toEqual([
      { name: 'deploy', description: 'Deploy (project)', args: { hint: '<env>' } },
      { name: 'standup', description: 'Write my standup (user)' },
    ]);
    expect(await claudeCustomCommands(null, { CLAUDE_CONFIG_DIR: join(home, '.claude') })).toEqual([
      { name: 'standup', description: 'Write my standup (user)' },
    ]);
    expect(await claudeCustomCommands(join(dir, 'none'), {})).toEqual([]);
  });
});

describe("the user's own Codex notify", () => {
  it("a notify among the configured arguments is handed to tether's program, which replaces it on the command line", () => {
    const ctx: LaunchContext = { node: '/usr/bin/node', distDir: '/t/dist', prepared: null };
    const argv = integratedArgv('codex', ['/bin/codex', '-c', 'notify=["notify-send", "Codex"]'], ctx);
    expect(argv).toEqual([
      '/bin/codex',
      '-c',
      'notify=["notify-send", "Codex"]',
      '-c',
      'notify=["/usr/bin/node", "/t/dist/agent/codex/notify.js", "--then", "[\\"notify-send\\",\\"Codex\\"]"]',
    ]);
    // The last -c wins, as in Codex; a value that is not a program is not one.
    expect(notifyOfArgs(['-c', 'notify=["a"]', '--config', 'notify = ["b", "c d"]'])).toEqual(['b', 'c d']);
    expect(notifyOfArgs(['-c', 'notify="just a string"'])).toBeNull();
    expect(notifyOfArgs(['-c', 'model=o3'])).toBeNull();
    // tether's own program is never run again from it.
    expect(notifyOfArgs(['-c', 'notify=["node", "/x/dist/agent/codex/notify.js"]'])).toBeNull();
  });

  it("otherwise the config file's top-level notify; --then wins over it", () => {
    const home = mkdtempSync(join(tmpdir(), 'tether-codex-notify-'));
    try {
      const env = { CODEX_HOME: home };
      expect(userNotify([], env)).toBeNull();
      writeFileSync(join(home, 'config.toml'), 'model = "o3"\nnotify = ["/usr/bin/notify-send", "done"]\n[tui]\nnotifications = true\n');
      expect(userNotify([], env)).toEqual(['/usr/bin/notify-send', 'done']);
      expect(userNotify(['--then', '["x"]'], env)).toEqual(['x']);
      writeFileSync(join(home, 'config.toml'), 'notify = [');
      expect(userNotify([], env)).toBeNull();
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});

describe("Claude Code's questions as asks", () => {
  it('a permission: yes (1), the "don\'t ask again" choice (2) only when Claude suggests one, no (Escape)', () => {
    const plain = claudePermission({ tool_name: 'Bash', concern: 'touch x', detail: 'Touch it' });
    expect(plain).toMatchObject({ kind: 'permission', tool: 'Bash', concern: 'touch x', detail: 'Touch it', landing: 'screen' });
    expect(plain.choices.map((c) => [c.id, c.keys, c.effect])).toEqual([
      ['yes', [{ type: 'keys', data: '1' }], 'run'],
      ['no', [{ type: 'key', name: 'escape' }], 'wait'],
    ]);
    const suggestions = JSON.stringify([
      { type: 'addDirectories', directories: ['/tmp/hx'] },
      { type: 'setMode', mode: 'acceptEdits' },
    ]);
    const always = claudePermission({ tool_name: 'Bash', concern: 'touch x', suggestions });
    expect(always.choices.map((c) => c.id)).toEqual(['yes', 'always', 'no']);
    expect(always.choices[1]).toMatchObject({ label: 'Yes, and always allow access to /tmp/hx', keys: [{ type: 'keys', data: '2' }] });
    const rule = JSON.stringify([{ type: 'addRules', rules: [{ toolName: 'WebFetch', ruleContent: 'domain:example.com' }] }]);
    expect(claudePermission({ tool_name: 'WebFetch', concern: 'https://example.com', suggestions: rule }).choices[1]?.label).toBe(
      "Yes, and don't ask again for domain:example.com",
    );
  });

  it('a question of one single-choice question: its options, each picked by its digit; others are not offered', () => {
    const questions = (qs: unknown) => ({ tool_name: 'AskUserQuestion', questions: JSON.stringify(qs) });
    const one = claudeQuestion(questions([{ question: 'Which color?', header: 'Color', multiSelect: false, options: ['Red', 'Blue'] }]));
    expect(one).toMatchObject({ kind: 'question', concern: 'Which color?', detail: 'Color' });
    expect(one?.choices.map((c) => [c.id, c.label, c.keys, c.effect])).toEqual([
      ['1', 'Red', [{ type: 'keys', data: '1' }], 'resume'],
      ['2', 'Blue', [{ type: 'keys', data: '2' }], 'resume'],
    ]);
    expect(claudeQuestion(questions([{ question: 'a', header: '', multiSelect: true, options: ['x', 'y'] }]))).toBeNull();
    expect(
      claudeQuestion(
        questions([
          { question: 'a', header: '', multiSelect: false, options: ['x'] },
          { question: 'b', header: '', multiSelect: false, options: ['y'] },
        ]),
      ),
    ).toBeNull();
    expect(claudeQuestion({ tool_name: 'AskUserQuestion', questions: '[' })).toBeNull();
  });

  it("the hook program's derived fields: what the tool is about, the question's options, the suggestions, all within a field's limit", () => {
    expect(derivedClaudeFields({ tool_input: { command: 'ls', description: 'List' } })).toEqual({ concern: 'ls', detail: 'List' });
    expect(derivedClaudeFields({ tool_input: { file_path: '/a/b', content: 'x'.repeat(100_000) } })).toEqual({ concern: '/a/b' });
    const many = Array.from({ length: 12 }, (_, i) => ({ label: `${i}`.repeat(300), description: 'd' }));
    const big = derivedClaudeFields({
      tool_input: { questions: [{ question: 'q'.repeat(3000), header: 'h', multiSelect: false, options: many }] },
    });
    expect(big.questions!.length).toBeLessThanOrEqual(4096);
    expect((JSON.parse(big.questions!) as { options: string[] }[])[0]!.options).toHaveLength(12);
    expect(derivedClaudeFields({ tool_input: { questions: [] }, tool_response: { answers: { 'Which?': 'Blue' } } }).answer).toBe('Blue');
    const s = derivedClaudeFields({ permission_suggestions: [{ type: 'addDirectories', directories: ['/x'], destination: 'session' }] });
    expect(JSON.parse(s.suggestions!)).toEqual([{ type: 'addDirectories', directories: ['/x'] }]);
    expect(derivedClaudeFields('nope')).toEqual({});
  });
});
