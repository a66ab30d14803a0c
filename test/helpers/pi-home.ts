/**
 * A temporary pi home for the real agent: `PI_CODING_AGENT_DIR` with a `models.json` whose one
 * provider (`fake`) points at the fake model server, settings that pick it by default and keep
 * start-up quiet, and `PI_OFFLINE=1` so pi never reaches for the network. Extras (a prompt
 * template, an extension) can be written into it.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The fake provider's name and its models: the agent's and the one auto-naming uses. */
export const FAKE_PROVIDER = 'fake';
export const FAKE_AGENT_MODEL = 'fake-agent';
export const FAKE_NAMING_MODEL = 'fake-namer';

export interface PiHome {
  /** PI_CODING_AGENT_DIR. */
  readonly dir: string;
  /** The variables pi needs: PI_CODING_AGENT_DIR and PI_OFFLINE. */
  readonly env: Record<string, string>;
  /** Writes `<dir>/prompts/<name>.md`. */
  addPromptTemplate(name: string, description: string, body: string): void;
  /** Writes `<dir>/extensions/<name>.ts` (auto-discovered by pi). */
  addExtension(name: string, source: string): void;
  cleanup(): void;
}

export function piHome(baseUrl: string): PiHome {
  const dir = mkdtempSync(join(tmpdir(), 'tether-pi-home-'));
  const model = (id: string) => ({ id, name: id, reasoning: false, input: ['text'], contextWindow: 128_000, maxTokens: 4096 });
  const models = {
    providers: {
      [FAKE_PROVIDER]: {
        baseUrl,
        api: 'openai-completions',
        apiKey: 'fake-key',
        compat: { supportsDeveloperRole: false, supportsReasoningEffort: false },
        models: [model(FAKE_AGENT_MODEL), model(FAKE_NAMING_MODEL)],
      },
    },
  };
  writeFileSync(join(dir, 'models.json'), JSON.stringify(models, null, 2));
  const settings = {
    defaultProvider: FAKE_PROVIDER,
    defaultModel: FAKE_AGENT_MODEL,
    quietStartup: true,
    collapseChangelog: true,
    // A failed fake request should end the turn at once, not be retried with back-off.
    retry: { enabled: false },
  };
  writeFileSync(join(dir, 'settings.json'), JSON.stringify(settings, null, 2));
  return {
    dir,
    env: { PI_CODING_AGENT_DIR: dir, PI_OFFLINE: '1' },
    addPromptTemplate: (name, description, body) => {
      mkdirSync(join(dir, 'prompts'), { recursive: true });
      writeFileSync(join(dir, 'prompts', `${name}.md`), `---\ndescription: ${description}\n---\n${body}\n`);
    },
    addExtension: (name, source) => {
      mkdirSync(join(dir, 'extensions'), { recursive: true });
      writeFileSync(join(dir, 'extensions', `${name}.ts`), source);
    },
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}
