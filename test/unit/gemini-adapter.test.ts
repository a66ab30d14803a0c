/**
 * Gemini CLI's adapter without the CLI: what each hook report means (docs/agents.md "Gemini
 * CLI"), its asks and the keys of each choice, tether's hooks in an extension of its own beside
 * the user's linked settings, and its TOML command files.
 */
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { resolveAgent } from '../../src/service/agent-programs/agent-program.js';
import { detectAgentKind } from '../../src/agent/contract/kinds.js';
import { readGeminiCommandDir } from '../../src/agent/gemini/commands.js';
import { GeminiReader, readGeminiHook } from '../../src/agent/gemini/events.js';
import { geminiExtensionHooks } from '../../src/agent/gemini/extension.js';
import { writeGeminiHome } from '../../src/agent/gemini/home.js';
import { derivedGeminiFields } from '../../src/agent/gemini/hook-fields.js';
import { geminiTurnFailure } from '../../src/agent/gemini/turn-failure.js';

const ID = '78fb38da-c35b-40c2-85cf-ba20b857c850';
const dir = mkdtempSync(join(tmpdir(), 'tether-gemini-unit-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('Gemini CLI hooks as agent state', () => {
  it('maps each hook to the state events, keeping the session id and the prompt', () => {
    const f = (hook_event_name: string, extra: Record<string, string> = {}) => ({ hook_event_name, session_id: ID, cwd: '/w', ...extra });
    expect(readGeminiHook(f('SessionStart', { source: 'startup' }))).toEqual({
      conversation: ID,
      cwd: '/w',
      events: [{ type: 'event', event: 'agent.ready' }],
    });
    expect(readGeminiHook(f('BeforeAgent', { prompt: 'hi' }))).toMatchObject({ events: [{ event: 'agent.start' }], userMessage: 'hi' });
    expect(readGeminiHook(f('BeforeTool', { tool_name: 'run_shell_command' })).events).toEqual([
      { type: 'event', event: 'tool.start', id: 'run_shell_command', tool: 'run_shell_command' },
    ]);
    expect(readGeminiHook(f('AfterTool', { tool_name: 'run_shell_command' })).events).toEqual([
      { type: 'event', event: 'tool.end', id: 'run_shell_command' },
    ]);
    expect(readGeminiHook(f('AfterAgent')).events).toEqual([{ type: 'event', event: 'agent.end', idle: true }]);
    expect(readGeminiHook(f('SessionEnd'))).toMatchObject({ events: [], gone: true });
    expect(readGeminiHook({ hook_event_name: 'SessionStart', session_id: '--evil' }).conversation).toBeUndefined();
  });

  it('titles the session with its first prompt, once, never a slash command', () => {
    const r = new GeminiReader({ report: () => undefined });
    expect(r.read('s', { hook_event_name: 'BeforeAgent', prompt: '/help' }).title).toBeUndefined();
    expect(r.read('s', { hook_event_name: 'BeforeAgent', prompt: 'fix the build' }).title).toBe('fix the build');
    expect(r.read('s', { hook_event_name: 'BeforeAgent', prompt: 'and the tests' }).title).toBeUndefined();
  });

  it('a confirmation is an ask with its three choices; the terminal allowing it ends the ask', () => {
    const r = new GeminiReader({ report: () => undefined });
    r.read('s', { hook_event_name: 'BeforeTool', tool_name: 'run_shell_command', concern: 'touch x', detail: 'Touch' });
    const o = r.read('s', { hook_event_name: 'Notification', notification_type: 'ToolPermission', confirm: 'exec', concern: 'touch x' });
    expect(o.ask).toMatchObject({ kind: 'permission', tool: 'run_shell_command', concern: 'touch x', detail: 'Touch' });
    expect(o.ask?.choices.map((c) => [c.id, c.keys])).toEqual([
      ['yes', [{ type: 'keys', data: '1' }]],
      ['always', [{ type: 'keys', data: '2' }]],
      ['no', [{ type: 'key', name: 'escape' }]],
    ]);
    expect(r.read('s', { hook_event_name: 'AfterTool', tool_name: 'run_shell_command' }).askEnded).toEqual({
      why: 'terminal',
      answered: 'allowed',
    });
  });

  it('an ask_user form of one choice question is an ask of its options; another form only waits', () => {
    const questions = (q: unknown[]) => derivedGeminiFields({ tool_input: { questions: q } }).questions!;
    const one = questions([{ question: 'Which?', header: 'C', type: 'choice', options: [{ label: 'red' }, { label: 'blue' }] }]);
    const r = new GeminiReader({ report: () => undefined });
    r.read('s', { hook_event_name: 'BeforeTool', tool_name: 'ask_user', questions: one });
    const o = r.read('s', { hook_event_name: 'Notification', notification_type: 'ToolPermission', confirm: 'ask_user' });
    expect(o.ask?.choices.map((c) => [c.id, c.label, c.keys])).toEqual([
      ['1', 'red', [{ type: 'keys', data: '1' }]],
      ['2', 'blue', [{ type: 'keys', data: '2' }]],
    ]);
    r.read('s', { hook_event_name: 'BeforeTool', tool_name: 'ask_user', questions: questions([{ question: 'Name?', type: 'text' }]) });
    const text = r.read('s', { hook_event_name: 'Notification', notification_type: 'ToolPermission', confirm: 'ask_user' });
    expect(text.ask).toBeUndefined();
    expect(text).toMatchObject({ asks: 'a question', events: [{ event: 'agent.end', idle: true }] });
  });
});

describe("a Gemini CLI turn's failure, from its chat file", () => {
  const line = (r: unknown) => JSON.stringify(r);
  const prompt = line({ id: 'a', type: 'user', content: [{ text: 'hi' }] });
  const info = line({ id: 'c', type: 'info', content: 'This request failed.' });
  it('a quota error is a usage limit, another API error an error, an answer no stop', () => {
    const quota = line({ id: 'b', type: 'error', content: '[API Error: You have exhausted your daily quota on this model.]\nPlease wait' });
    expect(geminiTurnFailure([prompt, '{"$set":{}}', quota, info].join('\n'))).toEqual({
      kind: 'usage-limit',
      message: 'You have exhausted your daily quota on this model.\nPlease wait',
    });
    const other = line({ id: 'b', type: 'error', content: '[API Error: Internal error]' });
    expect(geminiTurnFailure([prompt, other, info].join('\n'))).toEqual({ kind: 'error', message: 'Internal error' });
    expect(geminiTurnFailure([prompt, other, prompt, line({ id: 'd', type: 'gemini', content: 'ok' })].join('\n'))).toBeNull();
  });
});

describe("Gemini CLI's home and commands", () => {
  it("puts tether's hooks in an extension of its own, links the user's settings, and never writes the user's file", () => {
    const hooks = geminiExtensionHooks("'node' 'hook.js'").hooks as Record<string, { matcher?: string; hooks: { command: string }[] }[]>;
    expect(hooks.BeforeTool).toEqual([{ matcher: '*', hooks: [expect.objectContaining({ name: 'tether', command: "'node' 'hook.js'" })] }]);
    expect(Object.keys(hooks)).toContain('AfterAgent');

    const home = join(dir, 'user');
    mkdirSync(join(home, '.gemini', 'commands'), { recursive: true });
    const userSettings = '// mine\n{"general": {"vimMode": true}}';
    writeFileSync(join(home, '.gemini', 'settings.json'), userSettings);
    const made = writeGeminiHome(join(dir, 'data'), 'hook', { GEMINI_CLI_HOME: home });
    expect(readlinkSync(join(made, '.gemini', 'settings.json'))).toBe(join(home, '.gemini', 'settings.json'));
    expect(readFileSync(join(made, '.gemini', 'extensions', 'tether', 'hooks', 'hooks.json'), 'utf8')).toContain('"command": "hook"');
    expect(readFileSync(join(home, '.gemini', 'settings.json'), 'utf8')).toBe(userSettings);
  });

  it('lists TOML commands by file name, a subfolder as a:b, described by description else the prompt', async () => {
    const cmds = join(dir, 'cmds');
    mkdirSync(join(cmds, 'git'), { recursive: true });
    writeFileSync(join(cmds, 'hello.toml'), 'description = "Say hello"\nprompt = "Hello {{args}}"\n');
    writeFileSync(join(cmds, 'git', 'commit.toml'), 'prompt = """\nWrite a commit message\nfor the staged change"""\n');
    expect(await readGeminiCommandDir(cmds, 'user')).toEqual([
      { name: 'git:commit', description: 'Write a commit message (user)' },
      { name: 'hello', description: 'Say hello (user)' },
    ]);
  });
});

describe('Gemini CLI launched by tether', () => {
  it('runs with tether home in its pane, reopens a conversation, and is named with its install when missing', () => {
    const bin = join(dir, 'bin');
    mkdirSync(bin, { recursive: true });
    const gemini = join(bin, 'gemini');
    writeFileSync(gemini, '#!/bin/sh\n');
    chmodSync(gemini, 0o755);
    expect(detectAgentKind(gemini)).toBe('gemini');
    const launch = resolveAgent(
      { command: 'gemini', args: ['-m', 'x'], kind: 'auto' },
      { PATH: bin },
      { agentSocket: '/run/a.sock', prepared: { gemini: '/d/gemini-home' } },
    );
    expect(launch('/tmp')).toMatchObject({
      command: [gemini, '-m', 'x'],
      env: { GEMINI_CLI_HOME: '/d/gemini-home', TETHER_AGENT_SOCKET: '/run/a.sock' },
    });
    expect(launch('/tmp', { conversation: ID }).command).toEqual([gemini, '-m', 'x', '--resume', ID]);
    expect(launch('/tmp', { conversation: '--evil' }).command).toEqual([gemini, '-m', 'x']);
    // Not prepared (its home could not be written): it runs as the user's own Gemini, without tether's hooks.
    expect(resolveAgent({ command: 'gemini', args: [], kind: 'auto' }, { PATH: bin })('/tmp').env.GEMINI_CLI_HOME).toBeUndefined();
    expect(() =>
      resolveAgent({ command: 'gemini', args: [], kind: 'auto' }, { PATH: join(dir, 'none') }, { table: '[agents.gemini]' }),
    ).toThrow(
      'the agent program "gemini" ([agents.gemini] command) was not found on PATH: Gemini CLI is not installed: install it with "npm install -g @google/gemini-cli", or set [agents.gemini] command in the config to a program on PATH or a full path',
    );
  });
});
