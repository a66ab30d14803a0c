/**
 * Every session on the tmux server, tether's and the user's, as one `list-panes -a` reads them
 * (with tether's options of each, kept by src/tmux/sessions/session-options.ts), and each session's
 * latest activity.
 */
import { isEmptyServerError, isNoServerError, type TmuxCli } from '../exec.js';
import { CREATED_RE, optionStoreOf, sessionKey, type SessionKey, type SessionOptionStore } from './session-options.js';
import { PANE_ID_RE, SESSION_OPTIONS, optionFormat, optionSetFormat } from '../layout.js';
import { parseWorktreeOption, readOptions } from './sessions.js';
import type { SessionWorktree } from '../../machines/session.machine.js';

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
  /** Its `@description` (null when unset, or not tether's), as tether last read or wrote it. */
  readonly description: string | null;
  /** The git worktree it was made in (`@tether-worktree`); null for any other session. */
  readonly worktree: SessionWorktree | null;
  /** `@tether-pane` while that pane exists, else the session's first pane. */
  readonly paneId: string;
  readonly paneDead: boolean;
  readonly paneDeadStatus: number | null;
  readonly panePid: number | null;
  /** The pid of the tmux server that holds it. */
  readonly serverPid: number | null;
  /** When that server started (`start_time`, epoch seconds): with the pid, it names the server. */
  readonly serverStarted: number | null;
}

/**
 * Fields read in one `list-panes -a`, separated by US (0x1f), one pane per line. Only fields that
 * cannot hold a control character are read this way (tmux rewrites control characters in session
 * names as visible escapes), and the one option tether writes in a fixed shape (`@tether-pane`),
 * last, checked against its shape. Options that hold free text are read exactly, one value per
 * command (`readOptions`), and kept (src/tmux/sessions/session-options.ts).
 */
const LIST_FIELDS = [
  '#{pid}',
  '#{start_time}',
  '#{session_id}',
  '#{session_name}',
  '#{session_created}',
  '#{session_attached}',
  optionSetFormat(SESSION_OPTIONS.created),
  '#{pane_id}',
  '#{pane_dead}',
  '#{pane_dead_status}',
  '#{pane_pid}',
  optionFormat(SESSION_OPTIONS.pane),
] as const;
const SEP = '\x1f';
const LIST_FORMAT = LIST_FIELDS.join(SEP);

/** The `list-panes` command a listing runs (over a control client, or as its own process). */
export const LIST_PANES_COMMAND: readonly string[] = ['list-panes', '-a', '-F', LIST_FORMAT];

interface PaneRow {
  serverPid: string;
  serverStarted: number | null;
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
}

function parsePaneRow(line: string): PaneRow | null {
  const [
    serverPid = '',
    started = '',
    sessionId = '',
    name = '',
    created,
    attached,
    tether,
    paneId = '',
    dead,
    deadStatus = '',
    pid = '',
    ...rest
  ] = line.split(SEP);
  // `@tether-pane` is last: a hand-set value holding a US only fails its shape check.
  const recordedPane = rest.join(SEP);
  if (!/^\d+$/.test(serverPid) || !/^\$\d+$/.test(sessionId) || !PANE_ID_RE.test(paneId)) return null;
  return {
    serverPid,
    serverStarted: /^\d+$/.test(started) ? Number(started) : null,
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
  };
}

/** The options read once per session, in the order `readFixed` reads them. */
const FIXED_OPTIONS = [
  SESSION_OPTIONS.created,
  SESSION_OPTIONS.project,
  SESSION_OPTIONS.cwd,
  SESSION_OPTIONS.agent,
  SESSION_OPTIONS.worktree,
] as const;

export interface ListOptions {
  /**
   * Runs the `list-panes` command (`LIST_PANES_COMMAND`) and answers its output: a control
   * client of the same server, so that a listing starts no process. Without it, or when it
   * fails, the command runs as a process of its own.
   */
  readonly query?: ((command: readonly string[]) => Promise<Buffer>) | null;
  /** Read every tether session's description from tmux again (discovery's scans do). */
  readonly refresh?: boolean;
}

/**
 * Every session on the server, tether's and the user's; [] when no server runs. The options of
 * a tether session come from the store (src/tmux/sessions/session-options.ts); those it does not hold yet,
 * and with `refresh` every description, are read in one batch of tmux invocations.
 */
export async function listSessions(cli: TmuxCli, opts: ListOptions = {}): Promise<TmuxSessionInfo[]> {
  // Sessions tether makes after this are not in the answer, and keep what the store holds of them.
  const mark = optionStoreOf(cli).mark();
  let stdout: Buffer | null = null;
  if (opts.query) stdout = await opts.query(LIST_PANES_COMMAND).catch(() => null);
  if (stdout === null) {
    try {
      ({ stdout } = await cli.run(LIST_PANES_COMMAND));
    } catch (err) {
      if (isNoServerError(err) || isEmptyServerError(err)) return [];
      throw err;
    }
  }
  const bySession = new Map<string, PaneRow[]>();
  for (const line of stdout.toString('utf8').split('\n')) {
    const row = line === '' ? null : parsePaneRow(line);
    if (!row) continue;
    const rows = bySession.get(row.sessionId);
    if (rows) rows.push(row);
    else bySession.set(row.sessionId, [row]);
  }
  const store = optionStoreOf(cli);
  const firsts = [...bySession.values()].map((rows) => rows[0]!);
  const tether = firsts.filter((r) => r.tether).map((r) => ({ row: r, key: sessionKey(r.serverPid, r.sessionId, r.created) }));
  store.reconcile(
    tether.map((t) => ({ name: t.row.name, key: t.key })),
    mark,
  );
  const lacks = (t: { key: SessionKey }): boolean => store.fixed(t.key) === null || store.description(t.key) === undefined;
  const lacking = tether.filter((t) => opts.refresh === true || lacks(t));
  // What another read (or the session's making) is already fetching is waited for, not read
  // twice; a refresh reads anew.
  const waited = opts.refresh === true ? [] : lacking.filter((t) => store.pendingRead(t.row.name, t.key) !== undefined);
  const pending = new Set(waited.map((t) => store.pendingRead(t.row.name, t.key)!));
  await Promise.all([
    readMissing(
      cli,
      store,
      lacking.filter((t) => !waited.includes(t)),
    ),
    ...[...pending].map((read) => read.catch(() => undefined)),
  ]);
  // A make or a read that failed filled nothing: what it would have is read now.
  await readMissing(cli, store, waited.filter(lacks));
  return [...bySession.values()].map((rows) => describeSession(rows, store));
}

/** Reads the options the store lacks (or, for a refresh, the descriptions) of these sessions, in one batch. */
async function readMissing(cli: TmuxCli, store: SessionOptionStore, sessions: readonly { row: PaneRow; key: SessionKey }[]): Promise<void> {
  if (sessions.length === 0) return;
  const read = fill(cli, store, sessions);
  store.reading(
    sessions.map((s) => s.key),
    read,
  );
  await read;
}

async function fill(cli: TmuxCli, store: SessionOptionStore, sessions: readonly { row: PaneRow; key: SessionKey }[]): Promise<void> {
  const plans = sessions.map((s) => ({
    ...s,
    writes: store.writesTo(s.key),
    options: [...(store.fixed(s.key) === null ? FIXED_OPTIONS : []), SESSION_OPTIONS.description],
  }));
  let values: (string | null)[];
  try {
    values = await readOptions(
      cli,
      plans.flatMap((p) => p.options.map((option) => ({ target: p.row.sessionId, option }))),
    );
  } catch (err) {
    if (isNoServerError(err)) return;
    throw err;
  }
  let i = 0;
  for (const p of plans) {
    const read = values.slice(i, i + p.options.length);
    i += p.options.length;
    const description = read[read.length - 1] ?? null;
    if (p.options.length === 1) {
      store.filled(p.key, { description }, p.writes);
      continue;
    }
    const [created = null, project = null, cwd = null, agent = null, worktree = null] = read;
    store.filled(
      p.key,
      {
        fixed: {
          createdAt: created !== null && CREATED_RE.test(created) ? created : null,
          project,
          cwd,
          agent,
          worktree: parseWorktreeOption(worktree),
        },
        description,
      },
      p.writes,
    );
  }
}

/** One session's info, its options as the store holds them. */
function describeSession(rows: PaneRow[], store: SessionOptionStore): TmuxSessionInfo {
  const first = rows[0]!;
  const key = sessionKey(first.serverPid, first.sessionId, first.created);
  const fixed = first.tether ? store.fixed(key) : null;
  const pane = rows.find((r) => r.paneId === first.recordedPane) ?? first;
  return {
    name: first.name,
    sessionId: first.sessionId,
    created: first.created,
    attachedClients: first.attached,
    isTether: first.tether,
    createdAt: fixed?.createdAt ?? null,
    project: fixed?.project ?? null,
    cwd: fixed?.cwd ?? null,
    agent: fixed?.agent ?? null,
    description: first.tether ? (store.description(key) ?? null) : null,
    worktree: fixed?.worktree ?? null,
    paneId: pane.paneId,
    paneDead: pane.dead,
    paneDeadStatus: pane.dead ? pane.deadStatus : null,
    panePid: pane.pid,
    serverPid: Number(first.serverPid),
    serverStarted: first.serverStarted,
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
