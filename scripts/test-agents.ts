/**
 * Installs the real coding agents the tests drive (Claude Code, Codex, Gemini CLI and opencode, pinned in
 * test/agents/package.json and its lock file) into test/agents/node_modules, which git ignores.
 * They are test-only and large (hundreds of MB each), so the project's own `npm ci` never
 * fetches them; `npm test` runs this first. When all are already there at the pinned versions
 * it only says so (a version check, no network). Otherwise it runs `npm ci` there, then checks
 * again; Claude Code's and opencode's postinstall (each links the platform's native binary into
 * place) is run by hand when npm did not run it.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { AGENT_PACKAGES, AGENTS_DIR, agentInstallProblem, pinnedVersion, type AgentName } from '../testkit/agent-bins.js';

const AGENTS: readonly AgentName[] = ['claude', 'codex', 'gemini', 'opencode'];

function problems(): string[] {
  return AGENTS.map(agentInstallProblem).filter((p): p is string => p !== null);
}

function run(cmd: string, args: string[], cwd: string): void {
  console.log(`test-agents: ${cmd} ${args.join(' ')} (in ${cwd})`);
  const r = spawnSync(cmd, args, { cwd, stdio: 'inherit' });
  if (r.status !== 0) {
    console.error(`test-agents: ${cmd} ${args.join(' ')} failed (${r.error?.message ?? `exit ${String(r.status)}`})`);
    process.exit(1);
  }
}

function main(): void {
  const pins = AGENTS.map((a) => `${AGENT_PACKAGES[a].pkg}@${pinnedVersion(a)}`).join(', ');
  const before = problems();
  if (before.length === 0) {
    console.log(`test-agents: ${pins} already installed in ${AGENTS_DIR}`);
    return;
  }
  console.log(`test-agents: installing ${pins} into ${AGENTS_DIR}: ${before.join('; ')}`);
  run('npm', ['ci', '--no-audit', '--no-fund'], AGENTS_DIR);
  if (agentInstallProblem('claude')?.includes('placeholder')) {
    run(process.execPath, ['install.cjs'], join(AGENTS_DIR, 'node_modules', AGENT_PACKAGES.claude.pkg));
  }
  if (agentInstallProblem('opencode') !== null) {
    run(process.execPath, ['postinstall.mjs'], join(AGENTS_DIR, 'node_modules', AGENT_PACKAGES.opencode.pkg));
  }
  const after = problems();
  if (after.length > 0) {
    console.error(`test-agents: still not usable after npm ci: ${after.join('; ')}`);
    process.exit(1);
  }
  console.log(`test-agents: installed ${pins}`);
}

main();
