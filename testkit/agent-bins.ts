/**
 * Where the test-only installs of the real agents are (test/agents/node_modules, installed by
 * scripts/test-agents.ts from test/agents/package-lock.json) and whether they are there at the
 * pinned versions. A test that needs an agent calls `agentBin`: a missing or wrong install is
 * an error naming the command that installs it, never a skipped test.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The folder of the test-only agents' package.json and lock file. */
export const AGENTS_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', 'test', 'agents');

/** The command that installs them (what `npm test` runs first). */
export const AGENTS_INSTALL_COMMAND = 'npm run test:agents';

/**
 * `npm test` installs the agents while the first tests already run (scripts/test.ts): it names a
 * file in TETHER_TEST_AGENTS_PENDING that says `installing` until the install is done, is
 * removed when it succeeded, and says why when it failed. A file that imports this module waits
 * here, at its import, until then (test/sequencer.ts starts such files after the others that fill
 * the wait); without the variable, or once the file is gone, nothing waits.
 */
export const AGENTS_PENDING_VAR = 'TETHER_TEST_AGENTS_PENDING';

/** The longest wait for the install: npm's own bound on a slow registry is of this order. */
const AGENTS_PENDING_MAX_MS = 15 * 60_000;

async function untilInstalled(marker: string | undefined): Promise<void> {
  const deadline = Date.now() + AGENTS_PENDING_MAX_MS;
  for (;;) {
    let said: string;
    try {
      said = readFileSync(marker ?? '', 'utf8').trim();
    } catch {
      return; // gone (or never there): the install is done
    }
    if (said !== 'installing') throw new Error(`the agents' install failed (${said}): see npm test's "agents" step`);
    if (Date.now() > deadline) throw new Error(`the agents' install was still under way after ${AGENTS_PENDING_MAX_MS / 60_000} min`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

await untilInstalled(process.env[AGENTS_PENDING_VAR]);

export type AgentName = 'claude' | 'codex' | 'gemini' | 'opencode';

interface AgentPackage {
  readonly pkg: string;
  /** The program, relative to the package folder. */
  readonly bin: string;
}

export const AGENT_PACKAGES: Record<AgentName, AgentPackage> = {
  // The postinstall step copies the platform's native binary over this placeholder.
  claude: { pkg: '@anthropic-ai/claude-code', bin: 'bin/claude.exe' },
  // A node launcher that runs the platform package's binary (an optional dependency).
  codex: { pkg: '@openai/codex', bin: 'bin/codex.js' },
  // A node bundle (node >= 20), no native binary.
  gemini: { pkg: '@google/gemini-cli', bin: 'bundle/gemini.js' },
  // The postinstall step links the platform package's binary over this placeholder.
  opencode: { pkg: 'opencode-ai', bin: 'bin/opencode.exe' },
};

/** Smallest size of a real (native) claude binary; the placeholder the package ships is tiny. */
const MIN_NATIVE_BYTES = 1024 * 1024;

function readJson(path: string): Record<string, unknown> {
  return JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
}

/** The version test/agents/package.json pins for an agent. */
export function pinnedVersion(agent: AgentName): string {
  const deps = readJson(join(AGENTS_DIR, 'package.json')).dependencies as Record<string, string>;
  return deps[AGENT_PACKAGES[agent].pkg]!;
}

/** Why the agent's install is not usable (missing, wrong version, placeholder binary), or null. */
export function agentInstallProblem(agent: AgentName): string | null {
  const { pkg, bin } = AGENT_PACKAGES[agent];
  const dir = join(AGENTS_DIR, 'node_modules', pkg);
  const manifest = join(dir, 'package.json');
  if (!existsSync(manifest)) return `${pkg} is not installed in ${AGENTS_DIR}`;
  const have = readJson(manifest).version;
  const want = pinnedVersion(agent);
  if (have !== want) return `${pkg} is ${String(have)} in ${AGENTS_DIR}, not the pinned ${want}`;
  const program = join(dir, bin);
  if (!existsSync(program)) return `${program} is missing`;
  if ((agent === 'claude' || agent === 'opencode') && statSync(program).size < MIN_NATIVE_BYTES)
    return `${program} is the placeholder (its postinstall did not run)`;
  // The codex launcher runs the binary of an optional dependency named after the platform.
  const native = join(AGENTS_DIR, 'node_modules', '@openai', `codex-${process.platform}-${process.arch}`);
  if (agent === 'codex' && !existsSync(native)) return `${native} (codex's platform binary) is missing`;
  return null;
}

/** The agent's program, or an error that says how to install it. */
export function agentBin(agent: AgentName): string {
  const problem = agentInstallProblem(agent);
  if (problem) throw new Error(`${problem}: run "${AGENTS_INSTALL_COMMAND}" (npm test runs it first)`);
  return join(AGENTS_DIR, 'node_modules', AGENT_PACKAGES[agent].pkg, AGENT_PACKAGES[agent].bin);
}

/** Variables of the test's own environment that would point an agent elsewhere than the fakes: never passed on. */
export const AGENT_ENV_CLEARED = [
  'ANTHROPIC_AUTH_TOKEN',
  'ANTHROPIC_MODEL',
  'CLAUDE_CODE_USE_BEDROCK',
  'CLAUDE_CODE_USE_VERTEX',
  'CLAUDE_CONFIG_DIR',
  'CLAUDECODE',
  'OPENAI_API_KEY',
  'OPENAI_BASE_URL',
  'GEMINI_API_KEY',
  'GOOGLE_API_KEY',
  'GOOGLE_GEMINI_BASE_URL',
  'GOOGLE_GENAI_USE_VERTEXAI',
  'GOOGLE_CLOUD_PROJECT',
  'GEMINI_CLI_HOME',
  'GEMINI_CLI_SYSTEM_SETTINGS_PATH',
  // Gemini CLI runs headless (no prompt: "No input provided via stdin") when CI or GITHUB_ACTIONS
  // is "true", as the suite's CI sets it.
  'CI',
  'GITHUB_ACTIONS',
] as const;
