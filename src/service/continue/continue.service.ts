/**
 * Continue when it resets, chosen once (docs/api.md "Continue"): a person schedules the text
 * (`continue` by default) to be typed into a session's pane when its agent's usage limit resets,
 * or at a time they pick; tether types it then, once, if the agent is still stopped.
 *
 * One continue machine per session (src/machines/continue.machine.ts) decides; this service keeps
 * the schedule in the session's tmux user option (src/tmux/sessions/continue-option.ts: no file of
 * tether's own, so it outlives the daemon), arms its timer, watches the agent (a turn started
 * first skips it), types it through the input path of `POST /sessions/:id/input` and records it
 * in the answer log as an answer of the device that scheduled it.
 *
 * Invariants: a schedule is marked typed in tmux before its keys are sent, so no restart types it
 * twice (at most once: a daemon killed between the two types nothing); nothing is typed unless
 * the machine entered `typing`; a schedule read back at start that came due more than
 * LATE_AFTER_MS before is skipped, one due while the daemon was down is typed RESTART_GRACE_MS
 * after the start (the agents report again first), and one read back that comes due before its
 * agent reported waits for that report, at most AGENT_WAIT_MS.
 */
import { randomUUID } from 'node:crypto';
import { createActor, waitFor, type Actor, type InspectionEvent } from 'xstate';
import { continueMachine, type ContinueEvent } from '../../machines/continue.machine.js';
import type { Logger } from '../../log.js';
import type { ContinueSchedule } from '../../protocol/continue.js';
import type { AgentStateFact } from '../../protocol/frames.js';
import { typeLine, type LinePane } from '../prompts/typed-line.js';
import type { Stop } from '../../protocol/stop.js';
import type { AnswerLog } from '../answers/answer-log.js';
import { checkContinueRequest } from './continue-request.js';
import { DomainError } from '../../errors.js';

/** A schedule that came due while the daemon was down, longer ago than this, is skipped. */
export const LATE_AFTER_MS = 60 * 60 * 1000;
/** One due while the daemon was down (or about to be) waits this long after the start: the agents report again first. */
export const RESTART_GRACE_MS = 5_000;
/** The longest a new schedule waits for one being typed to finish. */
const TYPING_WAIT_MS = 15_000;
/** One read back at start waits, when due, at most this long for the session's agent to report (a restored session's agent is still starting). */
export const AGENT_WAIT_MS = 30_000;

/** What the service reads of the agents (the agent hub). */
export interface ContinueAgents {
  current(id: string): AgentStateFact | null;
  /** Why the session's agent stopped, while it is stopped (docs/api.md "Stops"), or null. */
  stopOf(id: string): Stop | null;
  subscribeEvery(listener: (id: string, fact: AgentStateFact) => void): () => void;
}

/** Where the schedules are kept (the sessions' tmux user option). */
export interface ContinueStore {
  read(id: string): Promise<ContinueSchedule | null>;
  write(id: string, schedule: ContinueSchedule): Promise<void>;
}

export interface ContinueDeps {
  readonly agents: ContinueAgents;
  /** Throws `session-not-found` for a session tmux does not hold. */
  readonly known: (id: string) => Promise<void>;
  readonly store: ContinueStore;
  /** Typing into the pane (`POST /sessions/:id/input`'s path), and the timing of its output. */
  readonly panes: LinePane;
  readonly answers: Pick<AnswerLog, 'append'>;
  readonly now: () => number;
  readonly log: Logger;
  /** XState inspection of a session's continue actor (the /ops view, the model test). */
  readonly inspect?: (id: string) => (ev: InspectionEvent) => void;
  readonly restartGraceMs?: number;
  /** Calls `fn` in `ms` (setTimeout, unref'd, by default); returns the cancel. */
  readonly timer?: (fn: () => void, ms: number) => () => void;
}

function realTimer(fn: () => void, ms: number): () => void {
  const t = setTimeout(fn, ms);
  t.unref();
  return () => clearTimeout(t);
}

/** Told of each change of a session's schedule. */
export type ContinueListener = (schedule: ContinueSchedule) => void;

interface Entry {
  readonly actor: Actor<typeof continueMachine>;
  /** Cancels the armed timer. */
  timer: (() => void) | null;
  readonly listeners: Set<ContinueListener>;
  /** The last value written to tmux, and the writes queued. */
  written: string | null;
  writes: Promise<void>;
  /** Due, read back at start, waiting for the session's agent to report first. */
  awaitingAgent: boolean;
}

const iso = (ms: number) => new Date(ms).toISOString();
const inTurn = (fact: AgentStateFact | null) => fact?.value === 'thinking' || fact?.value === 'tool';

export class ContinueService {
  private readonly entries = new Map<string, Entry>();
  private readonly stopWatching: () => void;

  constructor(private readonly deps: ContinueDeps) {
    this.stopWatching = deps.agents.subscribeEvery((id, fact) => this.agentMoved(id, fact));
  }

  /** Schedules session `id`'s continue (replacing one that waits); throws `session-not-found`, `no-usage-limit`, `invalid`. */
  async schedule(id: string, body: { at: string; text?: string }, by: string): Promise<ContinueSchedule> {
    await this.deps.known(id);
    const now = this.deps.now();
    const request = checkContinueRequest(body, this.deps.agents.stopOf(id), now);
    const schedule: ContinueSchedule = {
      id: randomUUID(),
      at: iso(request.at),
      text: request.text,
      by,
      stopId: request.stopId,
      status: 'waiting',
    };
    const entry = this.entry(id);
    // One being typed this very moment is let finish: the new one follows its outcome.
    if (entry.actor.getSnapshot().value === 'typing')
      await waitFor(entry.actor, (snap) => snap.value !== 'typing', { timeout: TYPING_WAIT_MS });
    await this.persist(id, entry, schedule, true);
    entry.actor.send({ type: 'continue.schedule', schedule });
    this.arm(id, entry, request.at - now);
    this.deps.log.info({ session: id, at: schedule.at, by, stop: schedule.stopId }, 'a continue was scheduled');
    return schedule;
  }

  /** Cancels session `id`'s waiting continue; throws `session-not-found`, `continue-not-found`. */
  async cancel(id: string): Promise<ContinueSchedule> {
    await this.deps.known(id);
    const entry = this.entries.get(id);
    if (!entry || entry.actor.getSnapshot().value !== 'waiting')
      throw new DomainError('continue-not-found', `no continue waits in session "${id}"`);
    this.send(entry, { type: 'continue.cancel', at: iso(this.deps.now()) });
    const schedule = this.of(id)!;
    await entry.writes;
    return schedule;
  }

  /** Session `id`'s schedule (waiting, or its outcome), or null. */
  of(id: string): ContinueSchedule | null {
    return this.entries.get(id)?.actor.getSnapshot().context.schedule ?? null;
  }

  /** Calls `listener` on each change of session `id`'s schedule; returns the unsubscribe. */
  onChange(id: string, listener: ContinueListener): () => void {
    const entry = this.entry(id);
    entry.listeners.add(listener);
    return () => entry.listeners.delete(listener);
  }

  /** At the daemon's start: reads each session's schedule back from tmux and arms the waiting ones. */
  async restore(ids: readonly string[]): Promise<void> {
    const grace = this.deps.restartGraceMs ?? RESTART_GRACE_MS;
    for (const id of ids) {
      const schedule = await this.deps.store.read(id).catch(() => null);
      // A session whose entry exists already (a stream listening) but holds nothing is read back too.
      if (schedule === null || (this.entries.get(id)?.actor.getSnapshot().value ?? 'none') !== 'none') continue;
      const entry = this.entry(id);
      entry.written = JSON.stringify(schedule);
      entry.actor.send({ type: 'continue.restore', schedule });
      if (schedule.status !== 'waiting') continue;
      const now = this.deps.now();
      const at = Date.parse(schedule.at);
      this.deps.log.info({ session: id, at: schedule.at }, 'a waiting continue was read back from tmux');
      if (at < now - LATE_AFTER_MS) this.due(id, entry, true);
      else this.arm(id, entry, Math.max(at - now, grace));
    }
  }

  /** Forgets a session that ended. */
  forget(id: string): void {
    const entry = this.entries.get(id);
    if (!entry) return;
    entry.timer?.();
    entry.actor.stop();
    this.entries.delete(id);
  }

  stop(): void {
    this.stopWatching();
    for (const id of [...this.entries.keys()]) this.forget(id);
  }

  private entry(id: string): Entry {
    const found = this.entries.get(id);
    if (found) return found;
    const inspect = this.deps.inspect?.(id);
    const actor = createActor(continueMachine, inspect ? { id: 'continue', inspect } : {});
    const entry: Entry = { actor, timer: null, listeners: new Set(), written: null, writes: Promise.resolve(), awaitingAgent: false };
    let before = actor.getSnapshot();
    actor.subscribe((snap) => {
      const was = before;
      before = snap;
      const schedule = snap.context.schedule;
      if (schedule === null || schedule === was.context.schedule) return;
      if (snap.value !== 'waiting' && entry.timer) {
        entry.timer();
        entry.timer = null;
      }
      if (snap.value === 'typing' && was.value !== 'typing') void this.type(id, entry, schedule);
      else void this.persist(id, entry, schedule, false);
      for (const listener of entry.listeners) listener(schedule);
    });
    actor.start();
    this.entries.set(id, entry);
    return entry;
  }

  private send(entry: Entry, event: ContinueEvent): void {
    entry.actor.send(event);
  }

  /** Writes `schedule` to tmux after the writes before it; `strict`: a failure throws (else it is logged). */
  private persist(id: string, entry: Entry, schedule: ContinueSchedule, strict: boolean): Promise<void> {
    const value = JSON.stringify(schedule);
    const write = entry.writes.then(async () => {
      if (entry.written === value) return;
      await this.deps.store.write(id, schedule);
      entry.written = value;
    });
    entry.writes = write.catch((err: Error) => {
      if (!strict) this.deps.log.warn({ session: id, err: err.message }, 'a continue could not be written to tmux');
    });
    return strict ? write : entry.writes;
  }

  private arm(id: string, entry: Entry, inMs: number): void {
    entry.timer?.();
    entry.timer = (this.deps.timer ?? realTimer)(() => this.due(id, entry, false), Math.max(0, inMs));
  }

  private due(id: string, entry: Entry, late: boolean): void {
    entry.timer?.();
    entry.timer = null;
    const { agents } = this.deps;
    if (!late && !entry.awaitingAgent && entry.actor.getSnapshot().context.restored && agents.current(id) === null) {
      // Read back at start and no agent reported yet (one restored after a reboot is starting): it goes first.
      entry.awaitingAgent = true;
      this.arm(id, entry, AGENT_WAIT_MS);
      return;
    }
    entry.awaitingAgent = false;
    this.send(entry, {
      type: 'continue.due',
      stopId: agents.stopOf(id)?.id ?? null,
      busy: inTurn(agents.current(id)),
      late,
      at: iso(this.deps.now()),
    });
  }

  /** The agent of session `id` reported: a turn started, or another stop, skips the waiting continue. */
  private agentMoved(id: string, fact: AgentStateFact): void {
    const entry = this.entries.get(id);
    if (!entry) return;
    const snap = entry.actor.getSnapshot();
    if (snap.value !== 'waiting') return;
    const at = iso(this.deps.now());
    if (inTurn(fact)) return this.send(entry, { type: 'agent.moved-on', why: 'turn', at });
    if (entry.awaitingAgent) return this.due(id, entry, false);
    const stop = this.deps.agents.stopOf(id);
    const scheduled = snap.context.schedule?.stopId ?? null;
    if (!snap.context.restored && scheduled !== null && stop !== null && stop.id !== scheduled)
      this.send(entry, { type: 'agent.moved-on', why: 'stop', at });
  }

  /** Marks the schedule typed in tmux, then types its text and Enter; records it as the device's answer. */
  private async type(id: string, entry: Entry, schedule: ContinueSchedule): Promise<void> {
    try {
      await this.persist(id, entry, schedule, true);
      await typeLine(this.deps.panes, id, schedule.text, this.deps.now);
    } catch (err) {
      this.deps.log.warn({ session: id, err: (err as Error).message }, 'a continue could not be typed');
      this.send(entry, { type: 'continue.failed', at: iso(this.deps.now()) });
      return;
    }
    this.send(entry, { type: 'continue.typed', at: iso(this.deps.now()) });
    this.deps.log.info({ session: id, by: schedule.by }, 'a scheduled continue was typed');
    void this.deps.answers.append({
      at: iso(this.deps.now()),
      session: id,
      agent: this.deps.agents.stopOf(id)?.agent ?? 'unknown',
      ask: schedule.id,
      kind: 'continue',
      concern: `scheduled continue, due ${schedule.at}`,
      choice: 'continue',
      label: null,
      by: schedule.by,
      landed: true,
    });
  }
}
