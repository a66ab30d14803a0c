/**
 * A temporary pi home for the real agent: pi's directory of testkit/pi-home.ts (`models.json`
 * whose one provider, `fake`, points at the fake model server, settings that pick it by default
 * and keep start-up quiet, `PI_OFFLINE=1` so pi never reaches for the network), into which a
 * test can write extras (a prompt template, an extension).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { piAgentDir, type PiAgentDir } from '../../testkit/pi-home.js';

/** The fake provider's name, and the model auto-naming uses (the agent's own is the default). */
export { PI_FAKE_PROVIDER as FAKE_PROVIDER, PI_NAMING_MODEL as FAKE_NAMING_MODEL } from '../../testkit/pi-home.js';

export interface PiHome extends PiAgentDir {
  /** Writes `<dir>/prompts/<name>.md`. */
  addPromptTemplate(name: string, description: string, body: string): void;
  /** Writes `<dir>/extensions/<name>.ts` (auto-discovered by pi). */
  addExtension(name: string, source: string): void;
}

export function piHome(baseUrl: string): PiHome {
  const home = piAgentDir(baseUrl);
  const { dir } = home;
  return {
    ...home,
    addPromptTemplate: (name, description, body) => {
      mkdirSync(join(dir, 'prompts'), { recursive: true });
      writeFileSync(join(dir, 'prompts', `${name}.md`), `---\ndescription: ${description}\n---\n${body}\n`);
    },
    addExtension: (name, source) => {
      mkdirSync(join(dir, 'extensions'), { recursive: true });
      writeFileSync(join(dir, 'extensions', `${name}.ts`), source);
    },
  };
}
