/**
 * Claude Code's slash commands for `GET /sessions/:id/commands`: its built-ins (a fixed list,
 * Claude Code 2.1), then the project's and the user's custom commands, read by the daemon from
 * `<cwd>/.claude/commands/*.md` and `~/.claude/commands/*.md` (`$CLAUDE_CONFIG_DIR/commands`
 * when that is set), each described by its frontmatter `description` (else its first line).
 *
 * The files are read as every markdown command directory is (agent/contract/command-files.ts):
 * bounded, a file that cannot be read or a name that is not one short word left out.
 */
import { join } from 'node:path';
import { readCommandDir } from '../contract/command-files.js';
import type { SlashCommand } from '../contract/commands.js';
import { claudeUserDir } from './user-statusline.js';

export const CLAUDE_BUILTIN_COMMANDS: readonly SlashCommand[] = Object.freeze([
  { name: 'add-dir', description: 'Add a new working directory' },
  { name: 'agents', description: 'Manage agent configurations' },
  { name: 'clear', description: 'Clear conversation history and free up context' },
  { name: 'compact', description: 'Clear conversation history but keep a summary in context' },
  { name: 'config', description: 'Open config panel' },
  { name: 'context', description: 'Visualize current context usage' },
  { name: 'cost', description: 'Show the total cost and duration of the current session' },
  { name: 'doctor', description: 'Diagnose and verify your Claude Code installation and settings' },
  { name: 'exit', description: 'Exit the REPL' },
  { name: 'export', description: 'Export the current conversation to a file or clipboard' },
  { name: 'help', description: 'Show help and available commands' },
  { name: 'hooks', description: 'Manage hook configurations for tool events' },
  { name: 'ide', description: 'Manage IDE integrations and show status' },
  { name: 'init', description: 'Initialize a new CLAUDE.md file with codebase documentation' },
  { name: 'login', description: 'Sign in with your Anthropic account' },
  { name: 'logout', description: 'Sign out from your Anthropic account' },
  { name: 'mcp', description: 'Manage MCP servers' },
  { name: 'memory', description: 'Edit Claude memory files' },
  { name: 'model', description: 'Set the AI model for Claude Code' },
  { name: 'output-style', description: 'Set the output style' },
  { name: 'permissions', description: 'Manage allow and deny tool permission rules' },
  { name: 'plugin', description: 'Manage Claude Code plugins' },
  { name: 'pr-comments', description: 'Get comments from a GitHub pull request' },
  { name: 'release-notes', description: 'View release notes' },
  { name: 'resume', description: 'Resume a conversation' },
  { name: 'review', description: 'Review a pull request' },
  { name: 'rewind', description: 'Restore the code and/or conversation to a previous point' },
  { name: 'security-review', description: 'Complete a security review of the pending changes on the current branch' },
  { name: 'status', description: 'Show Claude Code status including version, model, account and connectivity' },
  { name: 'statusline', description: "Set up Claude Code's status line UI" },
  { name: 'terminal-setup', description: 'Install Shift+Enter key binding for newlines' },
  { name: 'todos', description: 'List current todo items' },
  { name: 'usage', description: 'Show plan usage limits' },
  { name: 'vim', description: 'Toggle between Vim and Normal editing modes' },
]);

/** Claude's custom commands for a session working in `cwd`: the project's first, then the user's. */
export async function claudeCustomCommands(cwd: string | null, env: NodeJS.ProcessEnv): Promise<SlashCommand[]> {
  const user = claudeUserDir(env);
  const [project, own] = await Promise.all([
    cwd !== null ? readCommandDir(join(cwd, '.claude', 'commands'), 'project', true) : Promise.resolve([]),
    user !== null ? readCommandDir(join(user, 'commands'), 'user', true) : Promise.resolve([]),
  ]);
  return [...project, ...own];
}
