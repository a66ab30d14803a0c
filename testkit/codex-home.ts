/**
 * A temporary CODEX_HOME for the real Codex, pointed at the fake Responses server: a
 * config.toml with one custom provider (`fake`, `wire_api = "responses"`), the working
 * directory trusted, the shell tool allowed to run without asking, no update check and no
 * background daemon (it would outlive the test's tmux server), a notify program and lifecycle
 * hooks (CODEX_HOME/hooks.json) that record each call's JSON (one line each) for the test to read.
 *
 * Invariant: nothing here reaches the user's own ~/.codex; everything lives in one temp dir.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readJsonLines, recordingHooks, type HookRecord } from './hook-recorder.js';

/** The provider id and model the config selects, and the variable that holds the fake key. */
export const CODEX_PROVIDER = 'fake';
export const CODEX_MODEL = 'fake-codex';
export const CODEX_KEY_VAR = 'TETHER_FAKE_CODEX_KEY';

/** The hook events the recording hooks.json listens to (Codex's names, as Claude Code's). */
export const CODEX_HOOK_EVENTS = ['SessionStart', 'UserPromptSubmit', 'PreToolUse', 'PermissionRequest', 'PostToolUse', 'Stop'] as const;

/** One recorded hook call: the JSON Codex wrote to the hook's stdin. */
export type CodexHookRecord = HookRecord;

/** One recorded notification: the JSON Codex passed as the notify program's last argument. */
export interface CodexNotifyRecord {
  readonly type: string;
  readonly [field: string]: unknown;
}

export interface CodexHome {
  /** CODEX_HOME. */
  readonly dir: string;
  /** The working directory the agent runs in (trusted in config.toml). */
  readonly cwd: string;
  /** The variables codex needs: CODEX_HOME, HOME and the fake key. */
  readonly env: Record<string, string>;
  /** Where the notify program writes, one JSON object a line. */
  readonly notifyLog: string;
  /** The notify program as a TOML array: for `-c notify=<this>` or the config's `notify`. */
  readonly notifyToml: string;
  /** Where the hooks (CODEX_HOME/hooks.json) write, one JSON object a line. */
  readonly hookLog: string;
  /** Every hook call recorded so far, in order. */
  hooks(): CodexHookRecord[];
  /** Every notification recorded so far, in order. */
  notifications(): CodexNotifyRecord[];
  /** Every session file under CODEX_HOME/sessions (relative paths), sorted. */
  sessionFiles(): string[];
  cleanup(): void;
}

/** A node script that appends its last argument (one JSON object) as one line to the file named by argv[2]. */
const RECORDER = `const fs = require('node:fs');
const s = process.argv[process.argv.length - 1];
let line;
try { line = JSON.stringify(JSON.parse(s)); } catch { line = JSON.stringify({ type: 'unparsed', raw: s }); }
fs.appendFileSync(process.argv[2], line + '\\n');
`;

const tomlString = (s: string): string => JSON.stringify(s);

function listFiles(dir: string, prefix = ''): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? listFiles(join(dir, e.name), `${prefix}${e.name}/`) : [`${prefix}${e.name}`],
  );
}

export function codexHome(baseUrl: string): CodexHome {
  const root = mkdtempSync(join(tmpdir(), 'tether-codex-'));
  const dir = join(root, 'codex-home');
  const home = join(root, 'home');
  const cwd = join(root, 'work');
  for (const d of [dir, home, cwd]) mkdirSync(d, { recursive: true });
  const recorder = join(root, 'record-notify.cjs');
  writeFileSync(recorder, RECORDER);
  const notifyLog = join(root, 'notify.jsonl');
  const notifyToml = `[${[process.execPath, recorder, notifyLog].map(tomlString).join(', ')}]`;
  // Hooks in Claude Code's format; Codex asks once on screen whether to trust them.
  const { hooks, hookLog } = recordingHooks(root, CODEX_HOOK_EVENTS);
  writeFileSync(join(dir, 'hooks.json'), JSON.stringify({ hooks }, null, 2));
  const config = [
    `model = ${tomlString(CODEX_MODEL)}`,
    `model_provider = ${tomlString(CODEX_PROVIDER)}`,
    // The shell tool runs without asking and outside a sandbox (the test's commands are its own).
    'approval_policy = "never"',
    'sandbox_mode = "danger-full-access"',
    'check_for_update_on_startup = false',
    '',
    `[model_providers.${CODEX_PROVIDER}]`,
    'name = "tether fake"',
    `base_url = ${tomlString(baseUrl)}`,
    'wire_api = "responses"',
    `env_key = ${tomlString(CODEX_KEY_VAR)}`,
    // A failed fake request should end the turn at once, not be retried with back-off.
    'request_max_retries = 0',
    'stream_max_retries = 0',
    '',
    '[features]',
    // Without this Codex starts detached servers that outlive the tmux pane.
    'daemon_auto_start = false',
    // Lifecycle hooks from CODEX_HOME/hooks.json.
    'hooks = true',
    '',
    `[projects.${tomlString(cwd)}]`,
    'trust_level = "trusted"',
    '',
    '[notice]',
    'hide_full_access_warning = true',
    '',
  ].join('\n');
  writeFileSync(join(dir, 'config.toml'), config);
  return {
    dir,
    cwd,
    env: { CODEX_HOME: dir, HOME: home, [CODEX_KEY_VAR]: 'fake-codex-key' },
    notifyLog,
    notifyToml,
    hookLog,
    hooks: () => readJsonLines<CodexHookRecord>(hookLog),
    notifications: () => readJsonLines<CodexNotifyRecord>(notifyLog),
    sessionFiles: () => listFiles(join(dir, 'sessions')).sort(),
    // The agent may still be writing its files for a moment after its tmux server died.
    cleanup: () => rmSync(root, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 }),
  };
}
