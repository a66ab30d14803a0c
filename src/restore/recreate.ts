/**
 * Bringing a session back from its record (src/restore/records.ts) after its tmux server was lost: a tmux
 * session of the same name, in the directory the agent started in, the agent reopening the
 * conversation pi kept (`--session <file>`), the description and the stream reservation put back
 * (positions after a restore start above every one handed out before). docs/reliability.md says
 * what is restored and what cannot be.
 *
 * Invariant: a record that cannot be restored is marked so, with the reason, before the failure
 * is reported: it is shown to the user, and tried again only once `restoreObstacle` finds the
 * reason gone (src/restore/retry.ts), never in a loop of failures. A failure carries the
 * attention (docs/push.md) once per reason: the record keeps the reasons told (`told`) until the
 * session runs again, so a restore that keeps failing while its retry comes and goes tells each
 * reason once, and a new reason, or the first failure after the session came back, is told.
 */
import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { isDomainError } from '../errors.js';
import type { Logger } from '../log.js';
import type { SessionRecord, SessionRecords } from './records.js';
import type { TmuxCli } from '../tmux/exec.js';
import { SESSION_OPTIONS } from '../tmux/layout.js';
import { hasSession } from '../tmux/sessions/sessions.js';
import { createSession } from '../tmux/sessions/session-create.js';
import type { CarriesAttention, SessionAttention } from '../actors/attention.js';
import type { AgentLaunch } from '../actors/session.actor.js';
import { DEFAULT_AGENT_NAME } from '../config/schema.js';

/** How many told reasons a record keeps (the oldest is dropped past it). */
export const MAX_TOLD_REASONS = 16;

export interface RestoreDeps {
  readonly cli: TmuxCli;
  readonly records: SessionRecords;
  /**
   * The agent a restored session runs: the configured agent it ran (`agent`, `default` for
   * `[agent]`), reopening pi's `sessionFile` or another agent's `conversation` when there is one.
   */
  readonly agent: (
    id: string,
    agent: string,
    resume: { readonly sessionFile: string | null; readonly conversation: string | null },
  ) => AgentLaunch;
  readonly now: () => number;
  readonly log: Logger;
}

/**
 * The session could not be brought back; its record says why. Internal (start-up restore, never
 * a client's answer), and kept apart from DomainError because it carries what the session actor
 * acts on: the attention to raise with the user (`attentionOf`), once per reason until the session runs again.
 */
export class RestoreError extends Error implements CarriesAttention {
  constructor(
    readonly id: string,
    readonly why: string,
    /** Set when this failure's reason was not told yet since the session last ran: the user is told (once per reason). */
    readonly attention: SessionAttention | null = null,
  ) {
    super(`session ${id} could not be restored: ${why}`);
    this.name = 'RestoreError';
  }
}

/** Why the record cannot be restored here, or null when it can. */
async function obstacle(record: SessionRecord, launch: AgentLaunch): Promise<string | null> {
  const cwd = record.cwd;
  if (cwd !== null) {
    try {
      if (!(await stat(cwd)).isDirectory()) return `its directory ${cwd} is not a directory any more`;
      await access(cwd, constants.X_OK);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      return code === 'ENOENT' ? `its directory ${cwd} is gone` : `its directory ${cwd} cannot be entered (${code ?? 'error'})`;
    }
  }
  const program = launch.command[0];
  if (program === undefined) return 'the agent command is empty';
  if (program.includes('/')) {
    try {
      await access(program, constants.X_OK);
    } catch {
      return `its agent ${program} is missing`;
    }
  }
  return null;
}

/**
 * Why `record` cannot be restored now (its directory, its agent, its name taken in tmux), or
 * null when nothing stands in the way: asked of an unrestorable record before it is tried again.
 */
export async function restoreObstacle(deps: Pick<RestoreDeps, 'cli' | 'agent'>, record: SessionRecord): Promise<string | null> {
  let launch: AgentLaunch;
  try {
    launch = deps.agent(record.name, record.agent ?? DEFAULT_AGENT_NAME, { sessionFile: null, conversation: null });
  } catch (err) {
    return (err as Error).message;
  }
  const why = await obstacle(record, launch);
  if (why !== null) return why;
  try {
    return (await hasSession(deps.cli, record.name)) ? 'another tmux session has its name now' : null;
  } catch (err) {
    return `tmux could not be asked: ${(err as Error).message}`;
  }
}

/** Makes session `id` again in tmux from its record (the session actor's `restoring`); resolves with the new agent pane's id. */
export async function recreateSession(deps: RestoreDeps, id: string): Promise<{ paneId: string }> {
  const record = deps.records.read(id);
  if (!record) throw new RestoreError(id, 'it has no record');
  if (record.ended) throw new RestoreError(id, record.ended.detail);
  const giveUp = (why: string): never => {
    const before = deps.records.read(id);
    // Marked already for this very reason, or told it since the session last ran (a retry that
    // failed the same way, after its mark was cleared to try): nothing new to tell.
    const marked = before?.ended?.reason === 'unrestorable' && before.ended.detail === why;
    const told = before?.told ?? [];
    const known = marked || told.includes(why);
    try {
      deps.records.update(id, {
        ...(marked ? {} : { ended: { reason: 'unrestorable', detail: why, at: new Date(deps.now()).toISOString() } }),
        ...(known ? {} : { told: [...told, why].slice(-MAX_TOLD_REASONS) }),
      });
    } catch (err) {
      deps.log.warn({ session: id, err: (err as Error).message }, 'the session record could not be updated');
    }
    deps.log.warn({ session: id, why }, 'session could not be restored');
    const attention: SessionAttention | null = known
      ? null
      : { kind: 'unrestorable', reason: why, name: record.name, description: record.description };
    throw new RestoreError(id, why, attention);
  };
  const sessionFile = record.sessionFile !== null && (await exists(record.sessionFile)) ? record.sessionFile : null;
  let launch: AgentLaunch;
  try {
    launch = deps.agent(id, record.agent ?? DEFAULT_AGENT_NAME, { sessionFile, conversation: record.conversation ?? null });
  } catch (err) {
    return giveUp((err as Error).message);
  }
  const why = await obstacle(record, launch);
  if (why !== null) return giveUp(why);
  let created: { paneId: string };
  try {
    created = await createSession(deps.cli, {
      name: id,
      command: launch.command,
      env: { ...launch.env },
      ...(launch.agent !== undefined ? { agent: launch.agent } : {}),
      ...((record.cwd ?? launch.cwd) !== undefined ? { cwd: record.cwd ?? launch.cwd } : {}),
      // The same worktree: the session comes back where its agent worked, and says so.
      worktree: record.worktree ?? null,
      createdAt: record.createdAt,
      // The description, the positions handed out before and a scheduled continue (armed again
      // once the sessions are restored) are born with it: every reader of tmux finds them.
      options: {
        ...(record.description !== '' ? { [SESSION_OPTIONS.description]: record.description } : {}),
        [SESSION_OPTIONS.seq]: String(record.reservedSeq),
        ...(record.continue ? { [SESSION_OPTIONS.continue]: record.continue } : {}),
      },
    });
  } catch (err) {
    if (isDomainError(err, 'session-exists')) return giveUp('another tmux session has its name now');
    return giveUp(`tmux could not create it: ${(err as Error).message}`);
  }
  deps.log.info(
    {
      session: id,
      cwd: record.cwd,
      ...(record.worktree ? { worktree: record.worktree.branch } : {}),
      agent: record.agent ?? DEFAULT_AGENT_NAME,
      conversation: sessionFile ?? record.conversation ?? null,
      ...(record.sessionFile !== sessionFile ? { missing: record.sessionFile } : {}),
    },
    'session restored after its tmux server was lost',
  );
  return created;
}

async function exists(path: string): Promise<boolean> {
  try {
    await access(path, constants.R_OK);
    return true;
  } catch {
    return false;
  }
}
