/**
 * A temporary home for the real opencode, pointed at a fake OpenAI-compatible chat server: XDG
 * config, data, state and cache folders of its own, a user config (`opencode.json`) with one
 * provider (`fake`, opencode's built-in `@ai-sdk/openai-compatible`: nothing is downloaded), the
 * bash tool asking before it runs, no update check, no share; the user's own plugin (it records
 * every event it sees, one JSON line each), to show it keeps working beside tether's; and one
 * custom command file.
 *
 * opencode installs `@opencode-ai/plugin` into every config folder it reads at start unless that
 * folder's `node_modules` and `package-lock.json` already list it (offline, a plugin then waits
 * 120 s for the install): the config folder is given both, so it installs nothing.
 *
 * Invariant: nothing here reaches the user's own ~/.config/opencode; everything lives in one temp dir.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { readJsonLines } from './hook-recorder.js';

/** The model the config selects (`provider/model`). */
export const OPENCODE_MODEL = 'fake/m';
/** The version of the plugin package opencode would install (its own). */
const PLUGIN_PACKAGE_VERSION = '1.18.33';

/** One event the user's own plugin saw. */
export interface OpencodeEventRecord {
  readonly type: string;
  /** When the plugin saw it (epoch ms). */
  readonly at: number;
  readonly properties?: Record<string, unknown>;
}

export interface OpencodeHome {
  readonly root: string;
  /** The working directory the agent runs in. */
  readonly cwd: string;
  /** `$XDG_CONFIG_HOME/opencode`: the user's config folder. */
  readonly configDir: string;
  /** The user's `opencode.json`, as written. */
  readonly configText: string;
  /** The variables opencode needs: HOME, the XDG folders, the offline switches. */
  readonly env: Record<string, string>;
  /** Every event the user's own plugin recorded, in order. */
  events(): OpencodeEventRecord[];
  cleanup(): void;
}

/** The user's plugin: appends each event (all but streaming deltas) to the file it names. */
const userPlugin = (log: string): string => `import { appendFileSync } from 'node:fs';
export const UserRecorder = async () => ({
  event: async ({ event }) => {
    if (event.type === 'message.part.delta') return;
    try { appendFileSync(${JSON.stringify(log)}, JSON.stringify({ type: event.type, at: Date.now(), properties: event.properties }) + '\\n'); } catch {}
  },
});
`;

export function opencodeHome(baseUrl: string): OpencodeHome {
  const root = mkdtempSync(join(tmpdir(), 'tether-opencode-'));
  const home = join(root, 'home');
  const cwd = join(root, 'work');
  const xdg = { config: join(root, 'config'), data: join(root, 'data'), state: join(root, 'state'), cache: join(root, 'cache') };
  const configDir = join(xdg.config, 'opencode');
  for (const d of [home, cwd, ...Object.values(xdg), join(configDir, 'node_modules'), join(configDir, 'commands')])
    mkdirSync(d, { recursive: true });
  // What opencode's own install would leave: it then installs nothing.
  const deps = { '@opencode-ai/plugin': PLUGIN_PACKAGE_VERSION };
  writeFileSync(join(configDir, 'package.json'), JSON.stringify({ dependencies: deps }, null, 2));
  writeFileSync(
    join(configDir, 'package-lock.json'),
    JSON.stringify({ lockfileVersion: 3, packages: { '': { dependencies: deps } } }, null, 2),
  );
  const log = join(root, 'user-plugin.jsonl');
  const plugin = join(root, 'user-plugin.js');
  writeFileSync(plugin, userPlugin(log));
  writeFileSync(join(configDir, 'commands', 'x.md'), '---\ndescription: Run the project check\n---\nRun the check.\n');
  const config = {
    $schema: 'https://opencode.ai/config.json',
    model: OPENCODE_MODEL,
    small_model: OPENCODE_MODEL,
    autoupdate: false,
    share: 'disabled',
    // Every command asks, but the marker command (last match wins).
    permission: { bash: { '*': 'ask', 'echo tether-*': 'allow' } },
    plugin: [pathToFileURL(plugin).href],
    provider: {
      fake: {
        npm: '@ai-sdk/openai-compatible',
        options: { baseURL: baseUrl, apiKey: 'fake-opencode-key' },
        models: { m: { tool_call: true } },
      },
    },
  };
  const configText = `${JSON.stringify(config, null, 2)}\n`;
  writeFileSync(join(configDir, 'opencode.json'), configText);
  return {
    root,
    cwd,
    configDir,
    configText,
    env: {
      HOME: home,
      XDG_CONFIG_HOME: xdg.config,
      XDG_DATA_HOME: xdg.data,
      XDG_STATE_HOME: xdg.state,
      XDG_CACHE_HOME: xdg.cache,
      OPENCODE_DISABLE_AUTOUPDATE: '1',
      OPENCODE_DISABLE_MODELS_FETCH: '1',
      OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
    },
    events: () => readJsonLines<OpencodeEventRecord>(log),
    // The agent may still be writing its database for a moment after its tmux server died.
    cleanup: () => rmSync(root, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 }),
  };
}

/** The user's config file as it is now (to check that nothing of tether's was written there). */
export function readUserConfig(home: OpencodeHome): string {
  return readFileSync(join(home.configDir, 'opencode.json'), 'utf8');
}
