/**
 * A temporary home for the real Gemini CLI, pointed at the fake Gemini server: a
 * GEMINI_CLI_HOME whose `.gemini/settings.json` selects API-key auth (a base URL without a saved
 * auth type stops the CLI), turns off statistics and the update check, turns on its terminal
 * notifications, and holds the user's own hooks, which record each event's JSON (one line each)
 * for the test to read; the working directory trusted through the environment.
 *
 * Invariant: nothing here reaches the user's own ~/.gemini; everything lives in one temp dir.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readJsonLines, recordingHooks, type HookRecord } from './hook-recorder.js';

/** The fake key (the CLI sends it as `x-goog-api-key`). */
export const GEMINI_FAKE_KEY = 'tether-fake-gemini-key';

/**
 * The hook events the user's recording hooks listen to (Gemini CLI 0.61's names): the ones a turn,
 * a tool call, a confirmation and a session's end fire, and a compression's.
 */
export const GEMINI_HOOK_EVENTS: readonly string[] =
  'SessionStart BeforeAgent BeforeTool AfterTool AfterAgent Notification SessionEnd PreCompress'.split(' ');

export type GeminiHookRecord = HookRecord;

export interface GeminiHome {
  /** GEMINI_CLI_HOME (its `.gemini` is the CLI's `~/.gemini`). */
  readonly home: string;
  /** The working directory the agent runs in. */
  readonly cwd: string;
  /** The variables gemini needs: its home, the fake's URL and key, trust of the workspace. */
  readonly env: Record<string, string>;
  /** The user's settings file. */
  readonly settingsFile: string;
  /** Where the user's hooks write, one JSON object a line. */
  readonly hookLog: string;
  /** Every hook call recorded so far, in order. */
  hooks(): GeminiHookRecord[];
  /** Every chat file the CLI saved (`.gemini/tmp/<project>/chats/*`), sorted. */
  chatFiles(): string[];
  /** Writes a custom command (`<name>.toml`, `a/b` for `/a:b`) in the user's commands folder. */
  addCommand(name: string, description: string, prompt: string): void;
  cleanup(): void;
}

function toml(value: string): string {
  return JSON.stringify(value);
}

export function geminiHome(baseUrl: string): GeminiHome {
  const root = mkdtempSync(join(tmpdir(), 'tether-gemini-'));
  const home = join(root, 'home');
  const cwd = join(root, 'work');
  const dotGemini = join(home, '.gemini');
  mkdirSync(dotGemini, { recursive: true });
  mkdirSync(cwd, { recursive: true });
  const { hooks, hookLog } = recordingHooks(root, GEMINI_HOOK_EVENTS);
  const settingsFile = join(dotGemini, 'settings.json');
  const settings = {
    security: { auth: { selectedType: 'gemini-api-key' } },
    privacy: { usageStatisticsEnabled: false },
    general: { enableAutoUpdate: false, enableAutoUpdateNotification: false, enableNotifications: true },
    ui: { hideTips: true },
    hooks,
  };
  writeFileSync(settingsFile, JSON.stringify(settings, null, 2));
  const chats = (): string[] => {
    const tmp = join(dotGemini, 'tmp');
    if (!existsSync(tmp)) return [];
    return readdirSync(tmp, { recursive: true, encoding: 'utf8' })
      .filter((p) => p.includes('chats') && p.endsWith('.jsonl'))
      .sort();
  };
  return {
    home,
    cwd,
    env: {
      HOME: home,
      GEMINI_CLI_HOME: home,
      GOOGLE_GEMINI_BASE_URL: baseUrl,
      GEMINI_API_KEY: GEMINI_FAKE_KEY,
      GEMINI_CLI_TRUST_WORKSPACE: 'true',
      NO_BROWSER: '1',
    },
    settingsFile,
    hookLog,
    hooks: () => readJsonLines<GeminiHookRecord>(hookLog),
    chatFiles: chats,
    addCommand: (name, description, prompt) => {
      const file = join(dotGemini, 'commands', `${name}.toml`);
      mkdirSync(join(file, '..'), { recursive: true });
      writeFileSync(file, `description = ${toml(description)}\nprompt = ${toml(prompt)}\n`);
    },
    // The agent may still be writing its files for a moment after its tmux server died.
    cleanup: () => rmSync(root, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 }),
  };
}
