/**
 * Gemini CLI's adapter (docs/agents.md "Gemini CLI"): tether's hooks as an extension of tether's
 * own in a Gemini home in the data dir (`GEMINI_CLI_HOME`: the user's files linked, their
 * settings too, so what Gemini writes is in the user's own files; tether's hooks never are), a
 * conversation reopened with `--resume <session id>`, its hook reports read into agent state and
 * asks, and its slash commands (its built-ins, then the project's and the user's TOML command files).
 */
import { join } from 'node:path';
import type { AgentAdapter } from '../contract/adapter.js';
import { mergeCommands } from '../contract/commands.js';
import { geminiCustomCommands, GEMINI_BUILTIN_COMMANDS } from './commands.js';
import { GeminiReader } from './events.js';
import { geminiHookCommand } from './extension.js';
import { geminiHomePath, writeGeminiHome } from './home.js';
import { geminiArgv, geminiEnv } from './launch.js';

export const geminiAdapter: AgentAdapter = {
  kind: 'gemini',
  label: 'Gemini',
  product: 'Gemini CLI',
  install: 'npm install -g @google/gemini-cli',
  programs: ['gemini'],
  packageCli: /[\\/]@google[\\/]gemini-cli[\\/]bundle[\\/]gemini\.js$/,
  passedEnv: [],
  needsSocketPath: true,
  prepare: (dataDir, ctx) =>
    writeGeminiHome(dataDir, geminiHookCommand(ctx.node, join(ctx.distDir, 'agent', 'gemini', 'hook.js')), ctx.env),
  preparedAt: geminiHomePath,
  argv: (argv, _ctx, resume) => geminiArgv(argv, resume.conversation ?? null),
  env: (ctx, env) => geminiEnv(ctx.prepared, env),
  commands: async ({ cwd, env }) => mergeCommands(GEMINI_BUILTIN_COMMANDS, await geminiCustomCommands(cwd, env)),
  start: (rt) => {
    const reader = new GeminiReader(rt);
    return {
      readHook: (session, fields) => reader.read(session, fields),
      forget: (session) => reader.forget(session),
    };
  },
};
