/**
 * Every session on the tmux server, tether's and the user's, as one `list-panes -a` reads them
 * (with the options tether set once at creation, read once per session), and each session's
 * latest activity.
 */
import { isEmptyServerError, isNoServerError, isNoSessionError, type TmuxCli } from './exec.js';
import { AGENT_OPTION, CWD_OPTION, PANE_ID_RE, WORKTREE_OPTION, parseWorktreeOption, readOption } from './sessions.js';
import type { SessionWorktree } from '../machines/session.machine.js';

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
  /** The git worktree it was made in (`@tether-worktree`); null for any other session. */
  readonly worktree: SessionWorktree | null;
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
  readonly worktree: SessionWorktree | null;
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
    if (isNoServerError(err) || isEmptyServerError(err)) return [];
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
  let fixed: FixedOptions = { project: null, cwd: null, agent: null, worktree: null };
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
          worktree: parseWorktreeOption(await readOption(cli, first.sessionId, WORKTREE_OPTION)),
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
    worktree: fixed.worktree,
    paneId: pane.paneId,
    paneDead: pane.dead,
    paneDeadStatus: pane.dead ? pane.deadStatus : null,
    panePid: pane.pid,
    serverPid: /^\d+$/.test(first.serverPid) ? Number(first.serverPid) : null,
  };
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
