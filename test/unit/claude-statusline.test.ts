/**
 * tether's Claude Code statusLine, piece by piece (docs/agents.md "Usage"): which of the user's
 * statusLines it runs in its place (the project's local settings, the project's, the user's; never
 * tether's own), the fields its `StatusLine` report carries, what Claude's adapter makes of them
 * (the usage windows, no state event), and the settings file that names it.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { claudeAdapter } from '../../src/agent/claude/adapter.js';
import { claudeUsage, readClaudeHook } from '../../src/agent/claude/events.js';
import { CLAUDE_STATUSLINE_FIELDS, claudeStatusLineFields } from '../../src/agent/claude/hook-fields.js';
import { claudeHookCommand, claudeSettings } from '../../src/agent/claude/settings.js';
import {
  isTethersStatusLine,
  NO_STATUS_LINE,
  statusLineCommandOf,
  statusLineProjectDir,
  statusLineSources,
  userStatusLine,
} from '../../src/agent/claude/user-statusline.js';
import type { HookOutcome } from '../../src/agent/contract/adapter.js';
import { MAX_HOOK_FIELDS } from '../../src/agent/wire/hook-wire.js';
import { silentLogger } from '../../src/log.js';

/** A statusLine input as Claude Code 2.1.328 writes it after an answer at 42 % / 17 % (measured, shortened). */
const INPUT = {
  session_id: '2897c28a-efd0-4757-8ce7-0c553e09ab29',
  transcript_path: '/h/.claude/projects/-w/2897c28a-efd0-4757-8ce7-0c553e09ab29.jsonl',
  cwd: '/w/sub',
  model: { id: 'claude-sonnet-5-5', display_name: 'Sonnet 5.5' },
  workspace: { current_dir: '/w/sub', project_dir: '/w', added_dirs: [] },
  version: '2.1.328',
  rate_limits: { five_hour: { used_percentage: 42, resets_at: 1796428898 }, seven_day: { used_percentage: 17, resets_at: 1796857298 } },
};

const settings = (command: unknown): string => JSON.stringify({ statusLine: { type: 'command', command } });

describe("the user's own statusLine, found as Claude finds it", () => {
  const env = { HOME: '/home/u' };

  it("looks in the project's local settings, then the project's, then the user's ($CLAUDE_CONFIG_DIR when set)", () => {
    expect(statusLineSources('/w', env)).toEqual([
      '/w/.claude/settings.local.json',
      '/w/.claude/settings.json',
      '/home/u/.claude/settings.json',
    ]);
    expect(statusLineSources('/w', { HOME: '/home/u', CLAUDE_CONFIG_DIR: '/cfg' })).toEqual([
      '/w/.claude/settings.local.json',
      '/w/.claude/settings.json',
      '/cfg/settings.json',
    ]);
    expect(statusLineSources(null, {})).toEqual([]);
  });

  it('takes the first file that names a command: local over project over user', () => {
    const files: Record<string, string> = {
      '/w/.claude/settings.local.json': settings('local'),
      '/w/.claude/settings.json': settings('project'),
      '/home/u/.claude/settings.json': settings('user'),
    };
    const read = (path: string): string | null => files[path] ?? null;
    expect(userStatusLine('/w', env, read)).toBe('local');
    delete files['/w/.claude/settings.local.json'];
    expect(userStatusLine('/w', env, read)).toBe('project');
    // A statusLine without a command (Claude merges its padding) does not hide the next one.
    files['/w/.claude/settings.json'] = JSON.stringify({ statusLine: { padding: 2 } });
    expect(userStatusLine('/w', env, read)).toBe('user');
    // A file that is not JSON, or names no statusLine, is skipped.
    files['/w/.claude/settings.local.json'] = '{ not json';
    files['/w/.claude/settings.json'] = JSON.stringify({ hooks: {} });
    expect(userStatusLine('/w', env, read)).toBe('user');
    delete files['/home/u/.claude/settings.json'];
    expect(userStatusLine('/w', env, read)).toBeNull();
  });

  it("never takes tether's own statusLine program (no loop), nor an empty command or one that is not text", () => {
    const own = claudeHookCommand('/usr/bin/node', '/opt/tether/dist/agent/claude/statusline.js');
    expect(isTethersStatusLine(own)).toBe(true);
    expect(userStatusLine('/w', { HOME: '/home/u' }, (p) => (p === '/home/u/.claude/settings.json' ? settings(own) : null))).toBeNull();
    for (const command of ['', '   ', 7, null, ['ls']]) expect(statusLineCommandOf(settings(command))).toBeNull();
    expect(statusLineCommandOf(null)).toBeNull();
    expect(statusLineCommandOf('[]')).toBeNull();
    expect(statusLineCommandOf(settings('~/.claude/line.sh --x'))).toBe('~/.claude/line.sh --x');
  });

  const root = mkdtempSync(join(tmpdir(), 'tether-statusline-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('reads the real files at each call: a statusLine the user adds applies at once', () => {
    const home = join(root, 'home');
    const project = join(root, 'project');
    mkdirSync(join(home, '.claude'), { recursive: true });
    mkdirSync(join(project, '.claude'), { recursive: true });
    expect(userStatusLine(project, { HOME: home })).toBeNull();
    writeFileSync(join(home, '.claude', 'settings.json'), settings('echo mine'));
    expect(userStatusLine(project, { HOME: home })).toBe('echo mine');
    writeFileSync(join(project, '.claude', 'settings.local.json'), settings('echo local'));
    expect(userStatusLine(project, { HOME: home })).toBe('echo local');
  });

  it("finds the project in the input: workspace.project_dir, else cwd, else the program's own", () => {
    expect(statusLineProjectDir(INPUT, '/fallback')).toBe('/w');
    expect(statusLineProjectDir({ cwd: '/c' }, '/fallback')).toBe('/c');
    expect(statusLineProjectDir({ workspace: { project_dir: 'relative' }, cwd: 5 }, '/fallback')).toBe('/fallback');
    expect(statusLineProjectDir('not json', null)).toBeNull();
  });

  it('prints, for a user without one, an SGR reset: no visible character', () => {
    expect(NO_STATUS_LINE).toBe('\u001b[0m');
  });
});

describe('the StatusLine report', () => {
  it('carries each window Claude gave as short text, with the session', () => {
    const fields = claudeStatusLineFields(INPUT);
    expect(fields).toEqual({
      hook_event_name: 'StatusLine',
      session_id: INPUT.session_id,
      cwd: '/w/sub',
      five_hour_used: '42',
      five_hour_resets: '1796428898',
      seven_day_used: '17',
      seven_day_resets: '1796857298',
    });
    expect(Object.keys(fields!).every((k) => CLAUDE_STATUSLINE_FIELDS.includes(k))).toBe(true);
    expect(CLAUDE_STATUSLINE_FIELDS.length).toBeLessThanOrEqual(MAX_HOOK_FIELDS);
  });

  it('is not sent without a window: the start-up run, an API key login, only a spend limit', () => {
    const { rate_limits: _gone, ...startUp } = INPUT;
    expect(claudeStatusLineFields(startUp)).toBeNull();
    expect(claudeStatusLineFields({ ...INPUT, rate_limits: {} })).toBeNull();
    expect(claudeStatusLineFields({ ...INPUT, rate_limits: { spend_limit: { used_percentage: 3, resets_at: 1 } } })).toBeNull();
    expect(claudeStatusLineFields({ ...INPUT, rate_limits: null })).toBeNull();
    expect(claudeStatusLineFields('garbage')).toBeNull();
  });

  it('passes odd figures on as they came (the daemon decides), one window alone too', () => {
    const odd = { five_hour: { used_percentage: 'abc', resets_at: null }, seven_day: { used_percentage: 'x'.repeat(500) } };
    expect(claudeStatusLineFields({ rate_limits: odd })).toEqual({
      hook_event_name: 'StatusLine',
      five_hour_used: 'abc',
      five_hour_resets: '',
      seven_day_used: 'x'.repeat(64),
      seven_day_resets: '',
    });
    expect(claudeStatusLineFields({ rate_limits: { seven_day: { used_percentage: 99.9, resets_at: 5 } } })).toEqual({
      hook_event_name: 'StatusLine',
      seven_day_used: '99.9',
      seven_day_resets: '5',
    });
  });
});

describe("Claude's adapter reads a StatusLine report as usage windows, never as a state", () => {
  const fields = claudeStatusLineFields(INPUT)!;

  it('gives both windows, the percent as Claude gave it and the reset in epoch ms', () => {
    expect(readClaudeHook(fields)).toEqual({
      conversation: INPUT.session_id,
      cwd: '/w/sub',
      events: [],
      usage: {
        windows: [
          { name: 'five_hour', usedPercent: 42, resetsAt: 1796428898000 },
          { name: 'seven_day', usedPercent: 17, resetsAt: 1796857298000 },
        ],
      },
    });
  });

  it('rounds to 0.1, clamps nothing, and gives NaN or null for what is not a number', () => {
    const usage = (used: string, resets: string) =>
      claudeUsage({ hook_event_name: 'StatusLine', five_hour_used: used, five_hour_resets: resets });
    expect(usage('42.56', '1796428898')?.windows[0]).toEqual({ name: 'five_hour', usedPercent: 42.6, resetsAt: 1796428898000 });
    expect(usage('-30', '1')?.windows[0]).toEqual({ name: 'five_hour', usedPercent: -30, resetsAt: 1000 });
    expect(usage('750', '1')?.windows[0]?.usedPercent).toBe(750);
    expect(usage('abc', 'abc')?.windows[0]).toEqual({ name: 'five_hour', usedPercent: Number.NaN, resetsAt: null });
    expect(usage('', '')?.windows[0]).toEqual({ name: 'five_hour', usedPercent: Number.NaN, resetsAt: null });
    expect(claudeUsage({ hook_event_name: 'StatusLine' })).toBeNull();
    expect(readClaudeHook({ hook_event_name: 'StatusLine', session_id: INPUT.session_id })).toEqual({
      conversation: INPUT.session_id,
      events: [],
    });
  });

  it('through the adapter: an open question stays open, no report back', () => {
    const reported: HookOutcome[] = [];
    const runner = claudeAdapter.start!({ env: {}, now: () => 0, log: silentLogger, report: (_s, o) => reported.push(o) });
    const ask = runner.readHook!('cc', { hook_event_name: 'PermissionRequest', tool_name: 'Bash', concern: 'rm -rf build' }, null);
    expect(ask.ask).toBeDefined();
    const usage = runner.readHook!('cc', fields, null);
    expect(usage.events).toEqual([]);
    expect(usage.askEnded).toBeUndefined();
    expect(usage.usage?.windows.map((w) => w.name)).toEqual(['five_hour', 'seven_day']);
    // The question is still open: the asked tool's end is the terminal's answer.
    expect(runner.readHook!('cc', { hook_event_name: 'PostToolUse', tool_name: 'Bash' }, null).askEnded?.why).toBe('terminal');
    expect(reported).toEqual([]);
    runner.stop?.();
  });
});

describe("tether's settings file names the statusLine program", () => {
  it("sets only its type and command, so the user's padding and refreshInterval still apply (Claude merges them)", () => {
    const hook = claudeHookCommand('/usr/bin/node', '/t/dist/agent/claude/hook.js');
    const line = claudeHookCommand('/usr/bin/node', '/t/dist/agent/claude/statusline.js');
    const s = claudeSettings(hook, line);
    expect(s.statusLine).toEqual({ type: 'command', command: `'/usr/bin/node' '/t/dist/agent/claude/statusline.js'` });
    expect(Object.keys(s)).toEqual(['hooks', 'statusLine']);
  });
});
