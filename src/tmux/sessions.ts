/**
 * Tether's sessions on the tmux server, through `TmuxCli` (execFile): create, list, kill, and the
 * user options that mark and describe them.
 *
 * Invariants:
 * - Session names are checked before anything runs; targets are exact (`=name`, `=name:`).
 * - Data (project, option values, env, cwd, the agent's argv) reaches tmux byte for byte and is
 *   never parsed by a shell, split into commands or expanded as a format.
 * - Only the session's own options and hooks are set; global options are never touched (an SSH
 *   user of the same server must notice nothing).
 */
import { DomainError } from '../errors.js';
import { TmuxCommandError, isNoServerError, isNoSessionError, type TmuxCli } from './exec.js';
import { tmuxArgumentRefusal, escapeArgvArg } from './quote.js';
import { SESSION_NAME_RULE, isValidSessionName } from '../protocol/session-name.js';

/** User options tether owns. */
const OPTION_NAME_RE = /^@[a-z-]+$/;
const ENV_NAME_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;
const PANE_ID_RE = /^%\d+$/;

/** The agent window's fixed size: the phone renders this grid whatever clients attach. */
export const AGENT_COLUMNS = 120;
export const AGENT_ROWS = 40;
/** Scrollback lines of the agent pane (docs/contract.md "Limits": snapshot depth). */
export const AGENT_HISTORY_LIMIT = 10_000;
/** Name of the window the session is born with; replaced by the agent window at once. */
const PLACEHOLDER_WINDOW = 'tether-init';
/** Runs in the new window as its hook's target: later windows get the agent window's treatment. */
export const AFTER_NEW_WINDOW_HOOK = `set-option -w remain-on-exit on ; resize-window -x ${AGENT_COLUMNS} -y ${AGENT_ROWS}`;

/** Creating a session whose name is taken: `session-exists`. */
export const sessionExists = (session: string): DomainError => new DomainError('session-exists', `session ${session} already exists`);

/** A session (or the whole server) is not there: `session-not-found`, which `isNoSessionError` recognises by its cause. */
const sessionNotFound = (session: string, cause: unknown): DomainError =>
  new DomainError('session-not-found', `session ${session} does not exist`, { cause });

function checkSessionName(name: string): void {
  if (!isValidSessionName(name)) throw tmuxArgumentRefusal(`a session name is ${SESSION_NAME_RULE}`);
}

function checkOptionName(option: string): void {
  if (!OPTION_NAME_RE.test(option)) throw tmuxArgumentRefusal('a tether option name looks like @name');
}

/** Maps "no such session" and "no server" to `session-not-found`; anything else passes. */
function notFoundOr(err: unknown, name: string): unknown {
  return isNoSessionError(err) || isNoServerError(err) ? sessionNotFound(name, err) : err;
}

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
}

/** The session option holding the directory the agent started in, exactly. */
export const CWD_OPTION = '@tether-cwd';
/** The session option naming the configured agent it runs (`default`, or an `[agents.<name>]`). */
export const AGENT_OPTION = '@tether-agent';

/** `new-window -c` expands formats in the directory: `##` is a literal `#`. */
function escapeFormat(text: string): string {
  return text.replaceAll('#', '##');
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
export const isPaneStillRunning = (error: string): boolean => /pane %\d+ still runs its program/.test(error);

/** The one tmux command list that creates a session (see `createSession`). */
export function createSessionCommands(opts: CreateSessionOptions): string[][] {
  const { name } = opts;
  if (opts.command.length === 0) throw tmuxArgumentRefusal('the agent command is empty');
  const env = Object.entries(opts.env ?? {});
  for (const [key] of env) if (!ENV_NAME_RE.test(key)) throw tmuxArgumentRefusal('an environment variable name is malformed');
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
    ['set-option', '-t', session, '@created', opts.createdAt],
    [
      'new-window',
      '-k',
      '-t',
      agentWindow,
      '-P',
      '-F',
      '#{pane_id}',
      ...cwd,
      ...env.flatMap(([k, v]) => ['-e', `${k}=${v}`]),
      '--',
      ...argv,
    ],
    // Manual size: attached terminals of any size leave the agent's grid alone.
    ['resize-window', '-t', agentWindow, '-x', String(AGENT_COLUMNS), '-y', String(AGENT_ROWS)],
    ['set-option', '-w', '-t', agentWindow, 'remain-on-exit', 'on'],
    ['set-option', '-F', '-t', agentWindow, '@tether-pane', '#{pane_id}'],
    ...(opts.project !== undefined ? [['set-option', '-t', session, '@project', opts.project]] : []),
    // The directory exactly as given: `session_path` is the same, but formats rewrite control characters.
    ...(opts.cwd !== undefined ? [['set-option', '-t', session, CWD_OPTION, opts.cwd]] : []),
    ...(opts.agent !== undefined ? [['set-option', '-t', session, AGENT_OPTION, opts.agent]] : []),
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
  let stdout: Buffer;
  try {
    ({ stdout } = await cli.runList(commands));
  } catch (err) {
    if (err instanceof TmuxCommandError && /duplicate session/.test(err.stderr)) throw sessionExists(opts.name);
    await removeHalfMadeSession(cli, opts);
    throw err;
  }
  const paneId = stdout
    .toString('utf8')
    .split('\n')
    .find((l) => PANE_ID_RE.test(l));
  if (paneId === undefined) throw new Error(`tmux created session ${opts.name} but printed no pane id`);
  return { paneId };
}

/** After a failure past `new-session`, kills the session if it carries this attempt's `@created`. */
async function removeHalfMadeSession(cli: TmuxCli, opts: CreateSessionOptions): Promise<void> {
  try {
    if ((await readUserOption(cli, opts.name, '@created')) === opts.createdAt) await killSession(cli, opts.name);
  } catch {
    // Nothing was made, or it is already gone: the original error is the one to report.
  }
}

/** One session as `listSessions` sees it. */
export interface TmuxSessionInfo {
  readonly name: string;
  /** `$<n>`. */
  readonly sessionId: string;
  /** tmux's `session_created`, epoch seconds. */
  readonly created: number;
  /** Clients attached, control-mode clients (tether's own included) counted. */
  readonly attachedClients: number;
  /** Carries `@created`. */
  readonly isTether: boolean;
  readonly createdAt: string | null;
  readonly project: string | null;
  /** The directory the agent started in (`@tether-cwd`); null for a session made before tether recorded it, or not tether's. */
  readonly cwd: string | null;
  /** The configured agent it runs (`@tether-agent`); null for a session made before tether recorded it, or not tether's. */
  readonly agent: string | null;
  /** `@tether-pane` while that pane exists, else the session's first pane. */
  readonly paneId: string;
  readonly paneDead: boolean;
  readonly paneDeadStatus: number | null;
  readonly panePid: number | null;
  /** The pid of the tmux server that holds it. */
  readonly serverPid: number | null;
}

/**
 * Fields read in one `list-panes -a`, separated by US (0x1f), one pane per line. Fields that
 * cannot hold a control character are read this way (tmux rewrites control characters in session
 * names as visible escapes), and so are the two options tether writes in a fixed shape
 * (`@tether-pane`, `@created`), last, each checked against its shape. Free-form options
 * (`@project`) are read one by one, exactly, and only once per session: they never change.
 */
const LIST_FIELDS = [
  'pid',
  'session_id',
  'session_name',
  'session_created',
  'session_attached',
  '?@created,1,0',
  'pane_id',
  'pane_dead',
  'pane_dead_status',
  'pane_pid',
  '@tether-pane',
  '@created',
] as const;
const SEP = '\x1f';
const LIST_FORMAT = LIST_FIELDS.map((f) => `#{${f}}`).join(SEP);
/** The shape tether writes `@created` in (`Date.toISOString`). */
const CREATED_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,3})?Z$/;

interface PaneRow {
  serverPid: string;
  sessionId: string;
  name: string;
  created: number;
  attached: number;
  tether: boolean;
  paneId: string;
  dead: boolean;
  deadStatus: number | null;
  pid: number | null;
  recordedPane: string | null;
  createdAt: string | null;
}

function parsePaneRow(line: string): PaneRow | null {
  const [
    serverPid = '',
    sessionId = '',
    name = '',
    created,
    attached,
    tether,
    paneId = '',
    dead,
    deadStatus = '',
    pid = '',
    recordedPane = '',
    ...rest
  ] = line.split(SEP);
  // `@created` is last: a hand-set value holding a US only fails its shape check.
  const createdAt = rest.join(SEP);
  if (!/^\d+$/.test(serverPid) || !/^\$\d+$/.test(sessionId) || !PANE_ID_RE.test(paneId)) return null;
  return {
    serverPid,
    sessionId,
    name,
    created: Number(created),
    attached: Number(attached),
    tether: tether === '1',
    paneId,
    dead: dead === '1',
    deadStatus: /^\d+$/.test(deadStatus) ? Number(deadStatus) : null,
    pid: /^\d+$/.test(pid) ? Number(pid) : null,
    recordedPane: PANE_ID_RE.test(recordedPane) ? recordedPane : null,
    createdAt: CREATED_RE.test(createdAt) ? createdAt : null,
  };
}

/** The options tether sets once, when it creates a session, and never changes. */
interface FixedOptions {
  readonly project: string | null;
  readonly cwd: string | null;
  readonly agent: string | null;
}

/**
 * `@project` and `@tether-cwd` by session (server pid, session id, `@created`): set once in the
 * invocation that creates the session, so read once. Entries of sessions no longer listed are dropped.
 */
const fixedOptions = new WeakMap<TmuxCli, Map<string, FixedOptions>>();

/** Every session on the server, tether's and the user's; [] when no server runs. */
export async function listSessions(cli: TmuxCli): Promise<TmuxSessionInfo[]> {
  let stdout: Buffer;
  try {
    ({ stdout } = await cli.run(['list-panes', '-a', '-F', LIST_FORMAT]));
  } catch (err) {
    if (isNoServerError(err)) return [];
    throw err;
  }
  const bySession = new Map<string, PaneRow[]>();
  for (const line of stdout.toString('utf8').split('\n')) {
    const row = line === '' ? null : parsePaneRow(line);
    if (!row) continue;
    const rows = bySession.get(row.sessionId);
    if (rows) rows.push(row);
    else bySession.set(row.sessionId, [row]);
  }
  let cache = fixedOptions.get(cli);
  if (!cache) fixedOptions.set(cli, (cache = new Map<string, FixedOptions>()));
  const known = cache;
  const sessions = await Promise.all([...bySession.values()].map((rows) => describeSession(cli, rows, known)));
  const listed = new Set([...bySession.values()].map((rows) => projectKey(rows[0]!)));
  for (const key of known.keys()) if (!listed.has(key)) known.delete(key);
  return sessions.filter((s): s is TmuxSessionInfo => s !== null);
}

function projectKey(row: PaneRow): string {
  return `${row.serverPid}\0${row.sessionId}\0${row.createdAt ?? ''}`;
}

/** Builds one session's info; null when it vanished while its options were being read. */
async function describeSession(cli: TmuxCli, rows: PaneRow[], cache: Map<string, FixedOptions>): Promise<TmuxSessionInfo | null> {
  const first = rows[0]!;
  let fixed: FixedOptions = { project: null, cwd: null, agent: null };
  if (first.tether) {
    const key = projectKey(first);
    const known = cache.get(key);
    if (known) fixed = known;
    else {
      try {
        fixed = {
          project: await readOption(cli, first.sessionId, '@project'),
          cwd: await readOption(cli, first.sessionId, CWD_OPTION),
          agent: await readOption(cli, first.sessionId, AGENT_OPTION),
        };
      } catch (err) {
        if (isNoSessionError(err) || isNoServerError(err)) return null;
        throw err;
      }
      cache.set(key, fixed);
    }
  }
  const pane = rows.find((r) => r.paneId === first.recordedPane) ?? first;
  return {
    name: first.name,
    sessionId: first.sessionId,
    created: first.created,
    attachedClients: first.attached,
    isTether: first.tether,
    createdAt: first.tether ? first.createdAt : null,
    project: fixed.project,
    cwd: fixed.cwd,
    agent: fixed.agent,
    paneId: pane.paneId,
    paneDead: pane.dead,
    paneDeadStatus: pane.dead ? pane.deadStatus : null,
    panePid: pane.pid,
    serverPid: /^\d+$/.test(first.serverPid) ? Number(first.serverPid) : null,
  };
}

/** True when the session exists (false too when no server runs). */
export async function hasSession(cli: TmuxCli, name: string): Promise<boolean> {
  checkSessionName(name);
  try {
    await cli.run(['has-session', '-t', `=${name}`]);
    return true;
  } catch (err) {
    if (isNoSessionError(err) || isNoServerError(err)) return false;
    throw err;
  }
}

/** Kills the session; `session-not-found` when it (or the server) is not there. */
export async function killSession(cli: TmuxCli, name: string): Promise<void> {
  checkSessionName(name);
  try {
    await cli.run(['kill-session', '-t', `=${name}`]);
  } catch (err) {
    throw notFoundOr(err, name);
  }
}

/**
 * A session's option value, exact (`show-options -qv` prints the value plus one newline);
 * null when unset. `-q` also silences a missing session, so `has-session` runs first in the
 * same invocation and stops it with an error.
 */
async function readOption(cli: TmuxCli, sessionTarget: string, option: string): Promise<string | null> {
  const { stdout } = await cli.runList([
    ['has-session', '-t', sessionTarget],
    ['show-options', '-qv', '-t', `${sessionTarget}:`, option],
  ]);
  if (stdout.length === 0) return null;
  const end = stdout[stdout.length - 1] === 0x0a ? stdout.length - 1 : stdout.length;
  return stdout.toString('utf8', 0, end);
}

/** Reads one of tether's user options; null when unset; `session-not-found` when the session is not there. */
export async function readUserOption(cli: TmuxCli, name: string, option: string): Promise<string | null> {
  checkSessionName(name);
  checkOptionName(option);
  try {
    return await readOption(cli, `=${name}`, option);
  } catch (err) {
    throw notFoundOr(err, name);
  }
}

/** Sets one of tether's user options to `value` exactly (any text but NUL; empty allowed). */
export async function setUserOption(cli: TmuxCli, name: string, option: string, value: string): Promise<void> {
  checkSessionName(name);
  checkOptionName(option);
  try {
    // Without -F the value is stored as given: no format expansion. It follows the option
    // name, so a leading "-" is not taken for a flag.
    await cli.run(['set-option', '-t', `=${name}:`, option, value]);
  } catch (err) {
    throw notFoundOr(err, name);
  }
}

/** Removes one of tether's user options (no error when it was unset). */
export async function unsetUserOption(cli: TmuxCli, name: string, option: string): Promise<void> {
  checkSessionName(name);
  checkOptionName(option);
  try {
    await cli.run(['set-option', '-u', '-t', `=${name}:`, option]);
  } catch (err) {
    throw notFoundOr(err, name);
  }
}

/** A session's latest activity in tmux (output, input, an attach), epoch ms, and clients now. */
export interface TmuxActivity {
  readonly lastActivityMs: number;
  readonly attachedClients: number;
}

/** Activity of every session by name (the start-up cleanup of idle buffers); empty with no server. */
export async function sessionActivity(cli: TmuxCli): Promise<Map<string, TmuxActivity>> {
  const out = new Map<string, TmuxActivity>();
  let stdout: Buffer;
  try {
    ({ stdout } = await cli.run([
      'list-windows',
      '-a',
      '-F',
      '#{session_name}\t#{session_activity}\t#{session_last_attached}\t#{window_activity}\t#{session_attached}',
    ]));
  } catch (err) {
    if (isNoServerError(err)) return out;
    throw err;
  }
  for (const line of stdout.toString('utf8').split('\n')) {
    const [name, ...rest] = line.split('\t');
    if (!name || rest.length !== 4) continue;
    const [sessionAct, lastAttached, windowAct, attached] = rest.map((v) => (/^\d+$/.test(v) ? Number(v) : 0));
    const latest = Math.max(sessionAct!, lastAttached!, windowAct!) * 1000;
    const prev = out.get(name);
    out.set(name, { lastActivityMs: Math.max(prev?.lastActivityMs ?? 0, latest), attachedClients: attached! });
  }
  return out;
}
