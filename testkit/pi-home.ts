/**
 * A temporary home for the real pi (the one tether bundles), for the tests and the benchmarks:
 * `PI_CODING_AGENT_DIR` with a `models.json` whose one provider (`fake`) points at a fake
 * chat-completions server, settings that pick it by default and keep start-up quiet, and
 * `PI_OFFLINE=1` so pi never reaches for the network. The benchmarks' home has a working
 * directory of its own too; the tests' (test/helpers/pi-home.ts) takes extras (a prompt
 * template, an extension).
 *
 * Invariant: everything lives in temp dirs that `cleanup` removes.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The fake provider's name and its models: the agent's and the one auto-naming uses. */
export const PI_FAKE_PROVIDER = 'fake';
export const PI_FAKE_MODEL = 'fake-agent';
export const PI_NAMING_MODEL = 'fake-namer';

export interface PiAgentDir {
  /** PI_CODING_AGENT_DIR. */
  readonly dir: string;
  /** The variables pi needs: PI_CODING_AGENT_DIR and PI_OFFLINE. */
  readonly env: Record<string, string>;
  cleanup(): void;
}

export interface PiBenchHome extends PiAgentDir {
  /** The working directory pi runs in. */
  readonly cwd: string;
}

/** pi's own directory (`PI_CODING_AGENT_DIR`) in a temp dir, its provider the fake at `baseUrl`. */
export function piAgentDir(baseUrl: string): PiAgentDir {
  const dir = mkdtempSync(join(tmpdir(), 'tether-pi-home-'));
  const model = (id: string) => ({ id, name: id, reasoning: false, input: ['text'], contextWindow: 128_000, maxTokens: 4096 });
  const models = {
    providers: {
      [PI_FAKE_PROVIDER]: {
        baseUrl,
        api: 'openai-completions',
        apiKey: 'fake-key',
        compat: { supportsDeveloperRole: false, supportsReasoningEffort: false },
        models: [model(PI_FAKE_MODEL), model(PI_NAMING_MODEL)],
      },
    },
  };
  writeFileSync(join(dir, 'models.json'), JSON.stringify(models, null, 2));
  const settings = {
    defaultProvider: PI_FAKE_PROVIDER,
    defaultModel: PI_FAKE_MODEL,
    quietStartup: true,
    collapseChangelog: true,
    // A failed fake request should end the turn at once, not be retried with back-off.
    retry: { enabled: false },
  };
  writeFileSync(join(dir, 'settings.json'), JSON.stringify(settings, null, 2));
  return {
    dir,
    env: { PI_CODING_AGENT_DIR: dir, PI_OFFLINE: '1' },
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** The benchmarks' pi home: pi's directory, and a working directory of its own. */
export function piBenchHome(baseUrl: string): PiBenchHome {
  const agent = piAgentDir(baseUrl);
  const cwd = mkdtempSync(join(tmpdir(), 'tether-pi-cwd-'));
  return {
    ...agent,
    cwd,
    cleanup: () => {
      agent.cleanup();
      rmSync(cwd, { recursive: true, force: true });
    },
  };
}
