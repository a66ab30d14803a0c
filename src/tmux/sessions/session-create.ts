/**
 * Creating a tether session on the tmux server, and starting its agent again in a dead pane,
 * through `TmuxCli` (execFile).
 *
 * Invariants:
 * - Data (project, env, cwd, the agent's argv) reaches tmux byte for byte and is never parsed by
 *   a shell, split into commands or expanded as a format.
 * - Only the session's own options and hooks are set; global options are never touched (an SSH
 *   user of the same server must notice nothing).
 */
import { DomainError } from '../../errors.js';
import { TmuxCommandError, type TmuxCli } from '../exec.js';
import { tmuxArgumentRefusal, escapeArgvArg } from '../quote.js';
import { PANE_ID_RE, SESSION_MADE_FORMAT, SESSION_OPTIONS, parseSessionMade } from '../layout.js';
import { CREATED_RE, optionStoreOf, sessionKey } from './session-options.js';
import {
  checkOptionName,
  checkSessionName,
  encodeWorktreeOption,
  killSession,
  parseWorktreeOption,
  readUserOption,
  sessionExists,
} from './sessions.js';
import type { SessionWorktree } from '../../machines/session.machine.js';

const ENV_NAME_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The agent window's fixed size: the phone renders this grid whatever clients attach. */
export const AGENT_COLUMNS = 120;
export const AGENT_ROWS = 40;
/** Scrollback lines of the agent pane (docs/contract.md "Limits": snapshot depth). */
export const AGENT_HISTORY_LIMIT = 10_000;
/** Name of the window the session is born with; replaced by the agent window at once. */
const PLACEHOLDER_WINDOW = 'tether-init';
/** Runs in the new window as its hook's target: later windows get the agent window's treatment. */
export const AFTER_NEW_WINDOW_HOOK = `set-option -w remain-on-exit on ; resize-window -x ${AGENT_COLUMNS} -y ${AGENT_ROWS}`;

export interface CreateSessionOptions {
  readonly name: string;
  /** The agent's argv: run directly (execvp), never through a shell. */
  readonly command: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
  readonly cwd?: string;
  readonly project?: string;
  /** ISO 8601; stored as `@created`, which marks the session as tether's. */
  readonly createdAt: string;
  /** The configured agent's name (`default` for `[agent]`), stored as `@tether-agent`. */
  readonly agent?: string;
  /** The git worktree `cwd` is, stored as `@tether-worktree`. */
  readonly worktree?: SessionWorktree | null;
  /**
   * More of tether's user options (`@name` -> value) set in the same invocation: a restored
   * session's description, stream position and continue are there from its first moment, so
   * no reader (discovery, the record keeper, the link) finds it without them.
   */
  readonly options?: Readonly<Record<string, string>>;
}

/** `new-window -c` expands formats in the directory: `##` is a literal `#`. */
function escapeFormat(text: string): string {
  return text.replaceAll('#', '##');
}

/**
 * The agent window's name: its program's (`pi`, `claude`, `codex`), fixed. A window named at its
 * creation has tmux's automatic-rename off; with it on, every command the agent runs renamed the
 * window twice, and each rename is a notification to every control client of the server, which
 * no gate of tether's can hold back from a client in its handshake (tmux 3.3a crashes then:
 * src/tmux/topology-gate.ts).
 */
export function agentWindowName(command: readonly string[]): string {
  const program = command[0] ?? '';
  return program.slice(program.lastIndexOf('/') + 1) || 'agent';
}

/** The agent's argv as tmux gets it: tmux runs a one-word command through the shell; env(1) keeps it a plain exec. */
function agentArgv(command: readonly string[]): string[] {
  return command.length === 1 ? ['/usr/bin/env', '--', ...command] : [...command];
}

export interface RespawnPaneOptions {
  /** The dead agent pane (`%N`). */
  readonly paneId: string;
  /** The agent's argv, as at creation. */
  readonly command: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
  /** The directory to start in; without it tmux keeps the pane's own (where it first started). */
  readonly cwd?: string;
}

/**
 * The tmux command that starts the agent again in its pane: the same pane id, its history kept.
 * Without `-k`: tmux refuses a pane whose program still runs, so a respawn never kills an agent.
 */
export function respawnPaneCommand(opts: RespawnPaneOptions): string[] {
  if (!PANE_ID_RE.test(opts.paneId)) throw tmuxArgumentRefusal('a pane id looks like %N');
  if (opts.command.length === 0) throw tmuxArgumentRefusal('the agent command is empty');
  const env = Object.entries(opts.env ?? {});
  for (const [key] of env) if (!ENV_NAME_RE.test(key)) throw tmuxArgumentRefusal('an environment variable name is malformed');
  return [
    'respawn-pane',
    '-t',
    opts.paneId,
    ...(opts.cwd !== undefined ? ['-c', escapeFormat(opts.cwd)] : []),
    ...env.flatMap(([k, v]) => ['-e', `${k}=${v}`]),
    '--',
    ...agentArgv(opts.command),
  ];
}

/** Starts the agent again in its dead pane; a pane whose program runs is refused by tmux (`session-running`). */
export async function respawnPane(cli: TmuxCli, opts: RespawnPaneOptions): Promise<void> {
  try {
    await cli.run(respawnPaneCommand(opts));
  } catch (err) {
    if (err instanceof TmuxCommandError && /still active/.test(err.stderr))
      throw new DomainError('session-running', paneStillRuns(opts.paneId));
    throw err;
  }
}

/**
 * What a respawn of a pane whose program still runs is refused with; the session machine keeps
 * only the text of an actor's error, so `isPaneStillRunning` reads it back from there.
 */
const paneStillRuns = (paneId: string): string => `pane ${paneId} still runs its program`;
export const isPaneStillRunning = (error: string): boolean => /\bpane \S+ still runs its program\b/.test(error);

/** The one tmux command list that creates a session (see `createSession`). */
export function createSessionCommands(opts: CreateSessionOptions): string[][] {
  const { name } = opts;
  if (opts.command.length === 0) throw tmuxArgumentRefusal('the agent command is empty');
  const env = Object.entries(opts.env ?? {});
  for (const [key] of env) if (!ENV_NAME_RE.test(key)) throw tmuxArgumentRefusal('an environment variable name is malformed');
  const options = Object.entries(opts.options ?? {});
  for (const [option] of options) checkOptionName(option);
  const cwd = opts.cwd !== undefined ? ['-c', escapeFormat(opts.cwd)] : [];
  const argv = agentArgv(opts.command);
  const session = `=${name}:`;
  const agentWindow = `=${name}:{start}`;
  return [
    // A placeholder window first: history-limit applies to panes made after it is set.
    [
      'new-session',
      '-d',
      '-s',
      name,
      '-x',
      String(AGENT_COLUMNS),
      '-y',
      String(AGENT_ROWS),
      '-n',
      PLACEHOLDER_WINDOW,
      ...cwd,
      '--',
      'cat',
      '-',
    ],
    ['set-option', '-t', session, 'history-limit', String(AGENT_HISTORY_LIMIT)],
    ['set-option', '-t', session, SESSION_OPTIONS.created, opts.createdAt],
    [
      'new-window',
      '-k',
      '-t',
      agentWindow,
      '-P',
      '-F',
      SESSION_MADE_FORMAT,
      // Named, so automatic-rename is off for it (`-n` is a format: `##` is a literal `#`).
      '-n',
      escapeFormat(agentWindowName(opts.command)),
      ...cwd,
      ...env.flatMap(([k, v]) => ['-e', `${k}=${v}`]),
      '--',
      ...argv,
    ],
    // Manual size: attached terminals of any size leave the agent's grid alone.
    ['resize-window', '-t', agentWindow, '-x', String(AGENT_COLUMNS), '-y', String(AGENT_ROWS)],
    ['set-option', '-w', '-t', agentWindow, 'remain-on-exit', 'on'],
    ['set-option', '-F', '-t', agentWindow, SESSION_OPTIONS.pane, '#{pane_id}'],
    ...(opts.project !== undefined ? [['set-option', '-t', session, SESSION_OPTIONS.project, opts.project]] : []),
    // The directory exactly as given: `session_path` is the same, but formats rewrite control characters.
    ...(opts.cwd !== undefined ? [['set-option', '-t', session, SESSION_OPTIONS.cwd, opts.cwd]] : []),
    ...(opts.agent !== undefined ? [['set-option', '-t', session, SESSION_OPTIONS.agent, opts.agent]] : []),
    ...(opts.worktree ? [['set-option', '-t', session, SESSION_OPTIONS.worktree, encodeWorktreeOption(opts.worktree)]] : []),
    // The value follows the option name, without -F: stored as given, never expanded.
    ...options.map(([option, value]) => ['set-option', '-t', session, option, value]),
    // Last, so it does not fire for the agent window itself.
    ['set-hook', '-t', session, 'after-new-window', AFTER_NEW_WINDOW_HOOK],
  ];
}

/**
 * Creates a detached session running the agent in a 120x40 window with 10000 lines of history
 * that stays visible when the agent exits; one tmux invocation, so no other client sees it half
 * made. Resolves with the agent's pane id.
 */
export async function createSession(cli: TmuxCli, opts: CreateSessionOptions): Promise<{ paneId: string }> {
  checkSessionName(opts.name);
  const commands = createSessionCommands(opts);
  // Refuse unsendable data (NUL) here, before anything runs.
  for (const cmd of commands) for (const arg of cmd) escapeArgvArg(arg);
  // Listings that see the session before this call returns wait for the options it holds.
  const made = cli.runList(commands).then(({ stdout }) => holdMade(cli, opts, stdout));
  optionStoreOf(cli).making(opts.name, made);
  let paneId: string | null;
  try {
    paneId = await made;
  } catch (err) {
    if (err instanceof TmuxCommandError && /duplicate session/.test(err.stderr)) throw sessionExists(opts.name);
    await removeHalfMadeSession(cli, opts);
    throw err;
  }
  if (paneId === null) throw new Error(`tmux created session ${opts.name} but printed no pane id`);
  return { paneId };
}

/**
 * What the creation printed (its pane, the session's identity): tether's options as the one
 * invocation set them are held from now on (src/tmux/sessions/session-options.ts), never read back.
 * Answers the pane id; null when tmux printed none.
 */
function holdMade(cli: TmuxCli, opts: CreateSessionOptions, stdout: Buffer): string | null {
  const printed = parseSessionMade(stdout.toString('utf8'));
  if (!printed) return null;
  const { paneId, serverPid, sessionId, created } = printed;
  optionStoreOf(cli).made(opts.name, sessionKey(serverPid, sessionId, created), {
    fixed: {
      createdAt: CREATED_RE.test(opts.createdAt) ? opts.createdAt : null,
      project: opts.project ?? null,
      cwd: opts.cwd ?? null,
      agent: opts.agent ?? null,
      // As a read gives it back: the fields the option holds.
      worktree: opts.worktree ? parseWorktreeOption(encodeWorktreeOption(opts.worktree)) : null,
    },
    description: opts.options?.[SESSION_OPTIONS.description] ?? null,
  });
  return paneId;
}

/** After a failure past `new-session`, kills the session if it carries this attempt's `@created`. */
async function removeHalfMadeSession(cli: TmuxCli, opts: CreateSessionOptions): Promise<void> {
  try {
    if ((await readUserOption(cli, opts.name, SESSION_OPTIONS.created)) === opts.createdAt) await killSession(cli, opts.name);
  } catch {
    // Nothing was made, or it is already gone: the original error is the one to report.
  }
}
