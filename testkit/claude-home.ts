/**
 * A temporary home for the real Claude Code, pointed at the fake Anthropic server: a HOME whose
 * `~/.claude.json` answers the first-run dialogs (onboarding done, the API key approved, the
 * working directory trusted), the environment that keeps it offline, and a settings file whose
 * hooks record every event's JSON (one line each) for the test to read.
 *
 * Invariant: nothing here reaches the user's own ~/.claude; everything lives in one temp dir.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readJsonLines, recordingHooks, type HookRecord } from './hook-recorder.js';

/** The fake key; Claude Code remembers a key as approved by its last 20 characters. */
export const CLAUDE_FAKE_KEY = 'sk-ant-api03-tether-fake-key-0123456789abcdefghij';

/** The hook events the recording settings listen to (every one Claude Code 2.1 documents for a turn). */
export const CLAUDE_HOOK_EVENTS = [
  'SessionStart',
  'UserPromptSubmit',
  'PreToolUse',
  'PermissionRequest',
  'PostToolUse',
  'Notification',
  'Stop',
  'SubagentStop',
  'PreCompact',
  'SessionEnd',
] as const;

/** One recorded hook call: the JSON Claude Code wrote to the hook's stdin. */
export type ClaudeHookRecord = HookRecord;

export interface ClaudeHome {
  /** The temp HOME. */
  readonly home: string;
  /** The working directory the agent runs in (trusted in ~/.claude.json). */
  readonly cwd: string;
  /** The variables claude needs: HOME, the fake's URL and key, and the offline switches. */
  readonly env: Record<string, string>;
  /** A settings file whose hooks record each event into `hookLog` (pass with `--settings`). */
  readonly settingsFile: string;
  /** Where the hooks write, one JSON object a line. */
  readonly hookLog: string;
  /** Every hook call recorded so far, in order. */
  hooks(): ClaudeHookRecord[];
  /** Where Claude Code keeps a session's transcript. */
  transcriptDir(): string;
  cleanup(): void;
}

export interface ClaudeHomeOptions {
  /** Bash commands allowed without asking (settings `permissions.allow`); none: every command asks. */
  readonly allowBash?: boolean;
}

export function claudeHome(baseUrl: string, opts: ClaudeHomeOptions = {}): ClaudeHome {
  const root = mkdtempSync(join(tmpdir(), 'tether-claude-'));
  const home = join(root, 'home');
  const cwd = join(root, 'work');
  mkdirSync(join(home, '.claude'), { recursive: true });
  mkdirSync(cwd, { recursive: true });
  const project = {
    allowedTools: [],
    hasTrustDialogAccepted: true,
    hasCompletedProjectOnboarding: true,
    projectOnboardingSeenCount: 1,
    hasClaudeMdExternalIncludesApproved: false,
  };
  const config = {
    numStartups: 5,
    hasCompletedOnboarding: true,
    lastOnboardingVersion: '2.1.328',
    hasSeenAutoDefaultNudge: true,
    bypassPermissionsModeAccepted: true,
    autoUpdates: false,
    theme: 'dark',
    customApiKeyResponses: { approved: [CLAUDE_FAKE_KEY.slice(-20)], rejected: [] },
    projects: { [cwd]: project },
  };
  writeFileSync(join(home, '.claude.json'), JSON.stringify(config, null, 2));
  const { hooks, hookLog } = recordingHooks(root, CLAUDE_HOOK_EVENTS);
  const settingsFile = join(root, 'settings.json');
  const permissions = opts.allowBash ? { allow: ['Bash'] } : { allow: [] };
  writeFileSync(settingsFile, JSON.stringify({ hooks, permissions }, null, 2));
  return {
    home,
    cwd,
    env: {
      HOME: home,
      ANTHROPIC_BASE_URL: baseUrl,
      ANTHROPIC_API_KEY: CLAUDE_FAKE_KEY,
      DISABLE_AUTOUPDATER: '1',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_TELEMETRY: '1',
      DISABLE_ERROR_REPORTING: '1',
    },
    settingsFile,
    hookLog,
    hooks: () => readJsonLines<ClaudeHookRecord>(hookLog),
    transcriptDir: () => join(home, '.claude', 'projects', cwd.replace(/[^A-Za-z0-9]/g, '-')),
    // The agent may still be writing its files for a moment after its tmux server died.
    cleanup: () => rmSync(root, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 }),
  };
}
