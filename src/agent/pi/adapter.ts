/**
 * pi's adapter (docs/agents.md "pi"): pi loads tether's extension (`-e <dist>/extension/index.js
 * --tether`), which speaks the agent socket's `hello`/`event` protocol itself over a lasting
 * connection (src/extension/ is its in-agent half), so the daemon has nothing to read for it.
 * Its slash commands are pi's built-ins and what the extension reports.
 */
import { join } from 'node:path';
import type { AgentAdapter } from '../contract/adapter.js';
import { mergeCommands } from '../contract/commands.js';
import { bundledPi } from './bundled.js';
import { BUILTIN_COMMANDS } from './commands.js';
import { piArgv } from './launch.js';

export const piAdapter: AgentAdapter = {
  kind: 'pi',
  label: 'pi',
  product: 'pi',
  install: 'npm install -g @mariozechner/pi-coding-agent',
  programs: ['pi'],
  packageCli: /[\\/]pi-coding-agent[\\/]dist[\\/]cli\.js$/,
  passedEnv: ['PI_OFFLINE', 'PI_CODING_AGENT_DIR'],
  // The extension finds the daemon's socket itself (it may start the daemon, too).
  needsSocketPath: false,
  bundled: () => {
    const script = bundledPi();
    return script === null ? null : [process.execPath, script];
  },
  argv: (argv, ctx, resume) => piArgv(argv, join(ctx.distDir, 'extension', 'index.js'), resume.sessionFile ?? null),
  commands: ({ reported }) => (reported ? mergeCommands(BUILTIN_COMMANDS, reported) : BUILTIN_COMMANDS),
};
