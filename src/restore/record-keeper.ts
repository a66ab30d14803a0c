/**
 * Keeps each tether session's record (src/restore/records.ts) in step with the session: written when its
 * link comes up (a session tether created or adopted), its description and state read again when
 * its meta changes or its agent exits, its reserved stream position and its agent's conversation
 * (pi's file, another agent's id) and its scheduled continue as they change; forgotten when the session ends on purpose (DELETE, killed in tmux). A session
 * lost with its tmux server keeps its record: that is what restoring it needs (src/restore/at-start.ts).
 *
 * Writes for one session never overlap: a change that arrives during a write is taken by one
 * more write after it. A write begun before the session was forgotten never lands: it reads tmux
 * first, and a session that ends meanwhile keeps no record. Nor does one begun before the session
 * was marked unrestorable (lost with its server, and not restored): the mark stays.
 */
import type { Logger } from '../log.js';
import type { ContinueSchedule } from '../protocol/continue.js';
import type { StoredPrompts } from '../protocol/prompt.schemas.js';
import type { SessionRecord, SessionRecords } from './records.js';
import type { TmuxCli } from '../tmux/exec.js';
import { listSessions } from '../tmux/sessions/session-list.js';
import { DEFAULT_AGENT_NAME } from '../config/schema.js';

export interface RecordKeeperDeps {
  readonly records: SessionRecords;
  readonly cli: TmuxCli;
  /** The agent's argv a new session of this name, running the configured agent `agent`, is launched with. */
  readonly agentCommand: (id: string, agent: string) => readonly string[];
  /** The conversation file the session's agent last reported, or null. */
  readonly sessionFile: (id: string) => string | null;
  /** The conversation id the session's agent last reported, or null. */
  readonly conversation?: (id: string) => string | null;
  /** The session's reserved stream position, or null when it has no runtime. */
  readonly reservedSeq: (id: string) => number | null;
  readonly now: () => number;
  readonly log: Logger;
  /**
   * Runs the session listing over a linked control client (the sidecar's `queryTmux`), so that a
   * write starts no tmux process; without it, or when none is linked, the listing is a process.
   */
  readonly query?: ((command: readonly string[]) => Promise<Buffer>) | null;
}

export class RecordKeeper {
  private readonly running = new Map<string, Promise<void>>();
  private readonly again = new Set<string>();
  /** How many times each session was forgotten: a write begun before the last forget is dropped. */
  private readonly forgets = new Map<string, number>();

  constructor(private readonly deps: RecordKeeperDeps) {}

  /** Brings `id`'s record in line with tmux and the agent; creates it for a tether session. */
  sync(id: string): Promise<void> {
    const current = this.running.get(id);
    if (current) {
      this.again.add(id);
      return current;
    }
    const run = this.write(id)
      .catch((err: Error) => this.deps.log.warn({ session: id, err: err.message }, 'the session record could not be written'))
      .finally(() => {
        this.running.delete(id);
        if (this.again.delete(id)) void this.sync(id);
      });
    this.running.set(id, run);
    return run;
  }

  /**
   * The session ended (deleted, killed on purpose, lost with its agent exited): it is not to come
   * back. A write already under way for it (it reads tmux first, which takes a while) does not
   * bring the record back when it finishes after this.
   */
  forget(id: string): void {
    this.forgets.set(id, (this.forgets.get(id) ?? 0) + 1);
    try {
      this.deps.records.remove(id);
    } catch (err) {
      this.deps.log.warn({ session: id, err: (err as Error).message }, 'the session record could not be removed');
    }
  }

  /** Quick updates that need no tmux: the reserved position and the conversation file. */
  note(id: string, change: Partial<Pick<SessionRecord, 'reservedSeq' | 'sessionFile' | 'conversation' | 'continue' | 'prompts'>>): void {
    try {
      this.deps.records.update(id, change);
    } catch (err) {
      this.deps.log.warn({ session: id, err: (err as Error).message }, 'the session record could not be updated');
    }
  }

  /** A continue scheduled for the session (or cleared): it comes back with the session after a restore. */
  noteContinue(id: string, schedule: ContinueSchedule | null): void {
    this.note(id, { continue: schedule === null ? null : JSON.stringify(schedule) });
  }

  /** The session's prompts as written to tmux: they come back with the session after a restore. */
  notePrompts(id: string, stored: StoredPrompts): void {
    this.note(id, { prompts: stored });
  }

  private async write(id: string): Promise<void> {
    const forgets = this.forgets.get(id) ?? 0;
    const began = this.deps.now();
    // One listing names the session and its server (pid and start time): no process of its own.
    const info = (await listSessions(this.deps.cli, { query: this.deps.query ?? null })).find((s) => s.name === id);
    if (!info?.isTether) return; // gone meanwhile, or not tether's: nothing to keep
    // As tether last wrote or read it (src/tmux/sessions/session-options.ts): a PATCH or an automatic name reaches it at once.
    const description = info.description ?? '';
    const { serverPid: pid, serverStarted: startTime } = info;
    const previous = this.deps.records.read(id);
    // Marked unrestorable while tmux was read: what this write read was the server since lost with
    // the session, and the mark stays until the retry restores it (src/restore/retry.ts). Written
    // over, the session left the list (not in tmux, not restoring, not unrestorable) and the retry.
    if (previous?.ended?.reason === 'unrestorable' && Date.parse(previous.ended.at) >= began) return;
    const agent = info.agent ?? previous?.agent ?? DEFAULT_AGENT_NAME;
    const at = new Date(this.deps.now()).toISOString();
    const record: SessionRecord = {
      v: 1,
      name: id,
      description,
      cwd: info.cwd ?? previous?.cwd ?? null,
      command: previous?.command ?? [...this.deps.agentCommand(id, agent)],
      sessionFile: this.deps.sessionFile(id) ?? previous?.sessionFile ?? null,
      agent,
      conversation: this.deps.conversation?.(id) ?? previous?.conversation ?? null,
      worktree: info.worktree ?? previous?.worktree ?? null,
      ...(previous?.continue != null ? { continue: previous.continue } : {}),
      ...(previous?.prompts != null ? { prompts: previous.prompts } : {}),
      createdAt: info.createdAt ?? previous?.createdAt ?? at,
      reservedSeq: Math.max(this.deps.reservedSeq(id) ?? 0, previous?.reservedSeq ?? 0),
      server: pid !== null && startTime !== null ? { pid, startTime } : (previous?.server ?? null),
      ended: info.paneDead
        ? previous?.ended?.reason === 'exited'
          ? previous.ended
          : { reason: 'exited', detail: `the agent exited${info.paneDeadStatus === null ? '' : ` with status ${info.paneDeadStatus}`}`, at }
        : null,
    };
    // Forgotten while tmux was read: the session ended meanwhile, and its record stays gone.
    if ((this.forgets.get(id) ?? 0) !== forgets) return;
    this.deps.records.write(record);
  }
}
