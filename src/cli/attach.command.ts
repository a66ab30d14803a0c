/**
 * `tether attach [session]`: reattach when the session exists, else create it detached running
 * the agent, then attach (docs/contract.md "Session lifecycle": absent --attach CLI--> running). A running
 * daemon picks a new session up by itself (tmux tells it, or its rescan finds it).
 */
import { spawnSync } from 'node:child_process';
import { Command, Option } from 'clipanion';
import { adapterOf, agentKinds } from '../agent/contract/kinds.js';
import { loadConfig } from '../config/load.js';
import { resolvePaths } from '../config/paths.js';
import { agentSocketPath } from '../agent/wire/socket-path.js';
import { TmuxCli } from '../tmux/exec.js';
import { isValidSessionName } from '../protocol/session-name.js';
import { listSessions } from '../tmux/sessions/session-list.js';
import { createInWorktree, worktreesInUse } from '../service/workspaces/worktree-session.js';
import type { SessionWorktree } from '../machines/session.machine.js';
import { worktreesRoot } from '../config/data-layout.js';
import { DomainError } from '../errors.js';
import type { TetherConfig } from '../config/schema.js';
import { createSession } from '../tmux/sessions/session-create.js';
import { tmuxTarget } from '../tmux/target.js';
import { checkTmuxVersion, readTmuxVersion } from '../tmux/version.js';
import { agentNames, agentTable, prepareAdapters, resolveAgent, resolveAgentProgram } from '../service/agent-programs/agent-program.js';
import { DEFAULT_AGENT_NAME, isValidAgentName } from '../config/schema.js';
import { asRefusal, CliError, reportFailure } from '../runtime/fail.js';

export class AttachCommand extends Command {
  static override paths = [['attach']];
  static override usage = Command.Usage({
    description: 'Attach to a tether session, creating it (running the agent) when it does not exist',
    examples: [
      ['Attach to the default session', 'tether attach'],
      ['Create a session for a project without attaching', 'tether attach webapp --detach'],
      ['Create a session running the agent configured as [agents.reviewer]', 'tether attach review --agent reviewer'],
      ['Start an agent on a new branch in its own git worktree (session "fix-login")', 'tether attach --worktree fix/login'],
    ],
  });

  session = Option.String({ required: false, name: 'session' });
  detach = Option.Boolean('--detach', false, { description: 'Create the session but do not attach to it' });
  agent = Option.String('--agent', {
    description: 'The configured agent a new session runs: "default" ([agent]) or the name of an [agents.<name>]',
  });

  worktree = Option.String('--worktree', {
    description: 'A new session works in a git worktree of its own on this branch (made from HEAD, or --from), outside the repository',
  });
  from = Option.String('--from', { description: 'With --worktree: the ref a new branch starts from (default HEAD)' });

  async execute(): Promise<number> {
    try {
      return await this.run();
    } catch (err) {
      return reportFailure(err, this.context.stderr);
    }
  }

  private async run(): Promise<number> {
    const env = process.env;
    const { config } = await loadConfig(resolvePaths(env), env, { agentKinds: agentKinds() });
    if (this.from !== undefined && this.worktree === undefined) throw new CliError('--from needs --worktree', 2);
    const name = this.session ?? (this.worktree !== undefined ? sessionNameOf(this.worktree) : config.agent.default_session);
    if (!isValidSessionName(name)) {
      throw new CliError(`invalid session name "${name}": use 1-64 letters, digits, "_" or "-"`, 2);
    }
    const agentName = this.agent ?? DEFAULT_AGENT_NAME;
    const table = isValidAgentName(agentName) ? agentTable(config, agentName) : null;
    if (!table) {
      throw new CliError(
        `no agent named ${JSON.stringify(agentName.slice(0, 40))} is configured; the configured agents are: ${agentNames(config).join(', ')}`,
        2,
      );
    }
    const target = tmuxTarget(config.tmux.socket);
    checkTmuxVersion(await readTmuxVersion(target));
    const cli = new TmuxCli(target);
    const existing = (await listSessions(cli)).find((s) => s.name === name);
    if (existing && this.worktree !== undefined && existing.worktree?.branch !== this.worktree)
      throw new CliError(`session ${name} exists already and does not work on branch ${this.worktree}: name another session`, 2);
    if (!existing) {
      const paths = resolvePaths(env);
      const kind = resolveAgentProgram(table.config, env, table.table).kind;
      // A session made here reports to the daemon through the same integration as one the daemon makes.
      const prepared = prepareAdapters(
        paths.dataDir,
        (label, err) => {
          throw new CliError(`${label}'s integration could not be written in ${paths.dataDir}: ${err.message}`);
        },
        (k) => k === kind,
        env,
      );
      const launchIn = resolveAgent(table.config, env, {
        table: table.table,
        // Hook programs are told where the socket is; a plugin that finds it itself is not (as it always was).
        ...(adapterOf(kind)?.needsSocketPath ? { agentSocket: agentSocketPath(paths.runDir) } : {}),
        prepared,
      });
      const create = async (cwd: string, worktree: SessionWorktree | null): Promise<SessionWorktree | null> => {
        const launch = launchIn(cwd);
        await createSession(cli, {
          name,
          agent: agentName,
          command: launch.command,
          env: { ...launch.env },
          ...(launch.cwd !== undefined ? { cwd: launch.cwd } : {}),
          worktree,
          createdAt: new Date().toISOString(),
        });
        return worktree;
      };
      const made =
        this.worktree === undefined
          ? await create(process.cwd(), null)
          : await this.inWorktree(cli, config, paths.dataDir, this.worktree, create);
      const where = made ? ` in worktree ${made.path} (branch ${made.branch})` : '';
      this.context.stdout.write(`created session ${name}${where}\n`);
    }
    if (this.detach) return 0;
    // Inside tmux already: switch this client instead of nesting tmux in tmux.
    const args = env.TMUX ? ['switch-client', '-t', `=${name}`] : ['attach-session', '-t', `=${name}`];
    const result = spawnSync(target.bin, [...target.socketArgs, ...args], { stdio: 'inherit' });
    return result.status ?? 1;
  }

  /** A new session in a worktree of its own, from the repository of the current directory; a refusal is exit 2 and leaves nothing. */
  private async inWorktree<T>(
    cli: TmuxCli,
    config: TetherConfig,
    dataDir: string,
    branch: string,
    create: (cwd: string, worktree: SessionWorktree) => Promise<T>,
  ): Promise<T> {
    const request = {
      repoDir: process.cwd(),
      branch,
      ...(this.from !== undefined ? { from: this.from } : {}),
      root: worktreesRoot(config.worktrees.dir, dataDir),
      inUse: () => worktreesInUse(cli),
    };
    // A session that cannot be made fails as it does without a worktree, not as a refusal (exit 2).
    const created = (worktree: SessionWorktree) => create(worktree.path, worktree).catch((err: unknown) => Promise.reject(asRefusal(err)));
    try {
      return await createInWorktree(request, created);
    } catch (err) {
      if (err instanceof DomainError && err.code !== 'git-unavailable') throw new CliError(err.reason, 2);
      throw err;
    }
  }
}

/** A session name made of a branch name: what a session name cannot hold becomes `-`. */
export function sessionNameOf(branch: string): string {
  const name = branch
    .replace(/[^A-Za-z0-9_-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 64);
  return name === '' ? 'worktree' : name;
}
