/**
 * Claude Code's adapter (docs/agents.md "Claude Code"): tether's hooks and statusLine in a
 * settings file given with `--settings` (written in the data dir; `~/.claude` is never edited), a
 * conversation reopened with `--resume <session id>`, its hook reports read into agent state and
 * asks, its statusLine's into usage windows, and its slash commands (its built-ins, then the
 * project's and the user's command files).
 */
import { join } from 'node:path';
import type { AgentAdapter } from '../contract/adapter.js';
import { mergeCommands } from '../contract/commands.js';
import { claudeCustomCommands, CLAUDE_BUILTIN_COMMANDS } from './commands.js';
import { ClaudeReader } from './reader.js';
import { claudeArgv } from './launch.js';
import { claudeHookCommand, claudeSettingsPath, writeClaudeSettings } from './settings.js';

export const claudeAdapter: AgentAdapter = {
  kind: 'claude',
  label: 'Claude',
  product: 'Claude Code',
  install: 'npm install -g @anthropic-ai/claude-code',
  programs: ['claude'],
  packageCli: /[\\/]@anthropic-ai[\\/]claude-code[\\/][^\\/]+$/,
  passedEnv: [],
  needsSocketPath: true,
  prepare: (dataDir, ctx) =>
    writeClaudeSettings(
      dataDir,
      claudeHookCommand(ctx.node, join(ctx.distDir, 'agent', 'claude', 'hook.js')),
      claudeHookCommand(ctx.node, join(ctx.distDir, 'agent', 'claude', 'statusline.js')),
    ),
  preparedAt: claudeSettingsPath,
  argv: (argv, ctx, resume) => claudeArgv(argv, ctx.prepared, resume.conversation ?? null),
  commands: async ({ cwd, env }) => mergeCommands(CLAUDE_BUILTIN_COMMANDS, await claudeCustomCommands(cwd, env)),
  start: (rt) => {
    const reader = new ClaudeReader(rt);
    return {
      readHook: (session, fields) => reader.read(session, fields),
      forget: (session) => reader.forget(session),
      stop: () => reader.stop(),
    };
  },
};
