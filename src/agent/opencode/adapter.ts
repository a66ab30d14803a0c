/**
 * opencode's adapter (docs/agents.md "opencode"): tether's plugin loaded through
 * `OPENCODE_CONFIG_CONTENT` beside the user's own config and plugins (launch.ts), which reports
 * the events of opencode's bus to the daemon (plugin.ts); those become state, asks (its
 * permission prompt, its question), the conversation a restore reopens with `opencode -s <id>`
 * and the session's name (opencode's own title) (events.ts); its slash commands are its built-ins
 * and the user's and project's custom commands (commands.ts).
 */
import type { AgentAdapter } from '../contract/adapter.js';
import { opencodeCommands } from './commands.js';
import { OpencodeReader } from './events.js';
import { CONFIG_CONTENT_ENV, configContent, opencodeArgv } from './launch.js';

export const opencodeAdapter: AgentAdapter = {
  kind: 'opencode',
  label: 'opencode',
  product: 'opencode',
  install: 'npm install -g opencode-ai',
  programs: ['opencode'],
  packageCli: /[\\/]opencode-ai[\\/]bin[\\/]opencode(\.exe)?$/,
  passedEnv: [],
  needsSocketPath: true,
  env: (ctx, env): Record<string, string> => {
    const content = configContent(ctx, env);
    return content !== null ? { [CONFIG_CONTENT_ENV]: content } : {};
  },
  argv: (argv, _ctx, resume) => opencodeArgv(argv, resume.conversation ?? null),
  commands: (ctx) => opencodeCommands(ctx),
  start: () => {
    const reader = new OpencodeReader();
    return {
      readHook: (session, fields) => reader.read(session, fields),
      forget: (session) => reader.forget(session),
    };
  },
};
