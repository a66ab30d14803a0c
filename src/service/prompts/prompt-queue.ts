/**
 * One session's prompts (docs/api.md "Prompts"): the queue in order, one prompt machine per
 * undecided prompt (src/machines/prompt.machine.ts); the decided ones and the writing of the list
 * to tmux are its ledger's (prompt-ledger.ts). The prompt service (prompts.service.ts) holds one
 * per session and feeds it the agent's moves; this file decides whose turn it is and runs each
 * prompt's typing.
 *
 * Whose turn: the first queued prompt, once the session's agent awaits input with no open ask,
 * no prompt is being typed, and the turn the last submitted prompt started has ended (the agent
 * was seen in a turn since its keys went, and is waiting again; or TURN_START_WAIT passed with
 * the agent waiting and no turn seen: a prompt that started none). A program that reports nothing
 * (a plain shell) takes them one after another.
 *
 * Invariants: one prompt is typed at a time; a prompt is written to tmux as `typing` before its
 * first key (a failed write types nothing); each change is written, in order, after the ones
 * before; a prompt leaves the queue only decided.
 */
import { createActor, type Actor, type SnapshotFrom } from 'xstate';
import { promptMachine, type PromptEvent } from '../../machines/prompt.machine.js';
import type { AgentStateFact } from '../../protocol/frames.js';
import { PROMPT_FAIL_REASONS, promptDigest, reportIsPrompt, type PromptRecord } from '../../protocol/prompt.js';
import type { StoredPrompts } from '../../protocol/prompt.schemas.js';
import { PromptLedger, type FoundPrompt } from './prompt-ledger.js';
import { screenShowsPrompt } from './prompt-screen.js';
import type { PromptDeps } from './prompt-deps.js';
import { pressEnter, typeLine } from './typed-line.js';

type Snap = SnapshotFrom<typeof promptMachine>;

/** Whether the agent is in a turn. */
export const inTurn = (fact: AgentStateFact | null): boolean => fact?.value === 'thinking' || fact?.value === 'tool';
/** Whether the agent awaits input with no open ask. */
export const awaitsInput = (fact: AgentStateFact | null): boolean =>
  (fact?.value === 'awaiting-input' || fact?.value === 'idle') && fact.ask === undefined;

interface Entry {
  readonly actor: Actor<typeof promptMachine>;
  record: PromptRecord;
  /** Its clients were told of it: a new prompt only once it is written to tmux. */
  told: boolean;
  /** Cancels the armed wait. */
  timer: (() => void) | null;
}

export class SessionPrompts {
  private readonly queue: Entry[] = [];
  /** The decided prompts, and the writing of the whole list to tmux. */
  private readonly ledger: PromptLedger;
  /**
   * The turn the last submitted prompt started: the next waits for its end (a turn seen, then the
   * agent waiting), or, once TURN_START_WAIT passed with no turn seen (`expired`), for the agent waiting.
   */
  private gate: { turnSeen: boolean; expired: boolean; cancel: () => void } | null = null;
  /** The agent was seen in a turn since the prompt being typed got its keys. */
  private turnSeen = false;
  /** Polls while queued prompts wait for the daemon to know what the session runs. */
  private unknownTimer: (() => void) | null = null;
  private closed = false;

  constructor(
    private readonly id: string,
    private readonly deps: PromptDeps,
  ) {
    this.ledger = new PromptLedger(id, deps, () => this.queue.map((e) => e.record));
  }

  /** Takes what tmux (or the record) kept: undecided ones queue again, one caught being typed fails. */
  restore(stored: StoredPrompts | null): void {
    if (stored === null) return;
    for (const record of this.ledger.restore(stored)) this.add(record, { type: 'prompt.restore', record, at: this.iso() });
  }

  /** The prompt of that id: undecided, listed decided, or remembered (its record then given `text`, which is not kept). */
  find(promptId: string): FoundPrompt | null {
    const held = this.queue.find((e) => e.record.id === promptId)?.record;
    if (held) return { record: () => held, digest: promptDigest(held.text) };
    return this.ledger.find(promptId);
  }

  /** Queued (or being typed) prompts. */
  get undecided(): number {
    return this.queue.length;
  }

  /** Queues a new prompt and writes it to tmux (strict: a failed write takes it back and throws). */
  async enqueue(record: PromptRecord): Promise<PromptRecord> {
    const entry = this.add(record, { type: 'prompt.queue', record }, false);
    try {
      await this.ledger.persist(true);
    } catch (err) {
      entry.timer?.();
      entry.actor.stop();
      this.queue.splice(this.queue.indexOf(entry), 1);
      throw err;
    }
    entry.told = true;
    this.deps.changed?.(this.id, entry.record);
    this.pump();
    return entry.record;
  }

  /** The undecided prompts and the newest decided ones, oldest first. */
  list(): PromptRecord[] {
    return this.ledger.list();
  }

  /** Cancels a queued prompt; returns it, or null when it is not queued. */
  cancel(promptId: string): PromptRecord | null {
    const entry = this.queue.find((e) => e.record.id === promptId);
    if (!entry || !entry.actor.getSnapshot().matches('queued')) return null;
    entry.actor.send({ type: 'prompt.cancel', at: this.iso() });
    return entry.record;
  }

  /** The agent moved: a turn seen, a turn ended (the gate opens), or it waits for input (the next one's turn). */
  agentMoved(fact: AgentStateFact): void {
    if (inTurn(fact)) {
      this.turnSeen = true;
      if (this.gate) this.gate.turnSeen = true;
    }
    if ((this.gate?.turnSeen || this.gate?.expired) && awaitsInput(fact)) this.openGate();
    this.pump();
  }

  /** The agent reported a prompt the user submitted: the one being typed, if it is its text. */
  agentSaid(text: string): void {
    const entry = this.typing();
    if (entry && reportIsPrompt(entry.record.text, text)) entry.actor.send({ type: 'agent.took', at: this.iso() });
  }

  /** The agent exited or the session was deleted: every undecided prompt fails. */
  ended(why: 'exited' | 'deleted'): void {
    for (const entry of [...this.queue]) entry.actor.send({ type: 'session.ended', why, at: this.iso() });
  }

  /** Stops every machine and timer (the daemon stops, or the session is forgotten). */
  close(): void {
    this.closed = true;
    this.gate?.cancel();
    this.unknownTimer?.();
    for (const entry of this.queue) {
      entry.timer?.();
      entry.actor.stop();
    }
  }

  /** Types the first queued prompt when it is its turn. */
  pump(): void {
    if (this.closed || this.gate !== null || this.typing() !== null) return;
    const next = this.queue.find((e) => e.actor.getSnapshot().matches('queued'));
    if (!next) return;
    const reports = this.deps.agents.reportsPrompts(this.id);
    if (reports === null) return this.pollUnknown();
    if (reports && !awaitsInput(this.deps.agents.current(this.id))) return;
    next.actor.send({ type: 'prompt.turn' });
  }

  private pollUnknown(): void {
    if (this.unknownTimer) return;
    this.unknownTimer = this.deps.timer(() => {
      this.unknownTimer = null;
      this.pump();
    }, this.deps.waits.unknownPollMs);
  }

  private typing(): Entry | null {
    return this.queue.find((e) => e.actor.getSnapshot().matches('typing')) ?? null;
  }

  private add(record: PromptRecord, first: PromptEvent, told = true): Entry {
    const inspect = this.deps.inspect?.(this.id, record.id);
    const actor = createActor(promptMachine, inspect ? { id: `prompt:${record.id}`, inspect } : {});
    const entry: Entry = { actor, record, timer: null, told };
    this.queue.push(entry);
    let before = actor.getSnapshot();
    actor.subscribe((snap) => {
      const was = before;
      before = snap;
      this.moved(entry, was, snap);
    });
    actor.start();
    actor.send(first);
    return entry;
  }

  /** What a prompt's move asks for: its keys, its waits, its place among the decided. */
  private moved(entry: Entry, was: Snap, snap: Snap): void {
    const record = snap.context.record;
    if (record === null) return;
    type Value = Parameters<Snap['matches']>[0];
    const entered = (state: Value) => snap.matches(state) && !was.matches(state);
    entry.record = record;
    if (entry.timer && !snap.matches({ typing: 'confirming' }) && !snap.matches({ typing: 'waiting' })) {
      entry.timer();
      entry.timer = null;
    }
    if (snap.status === 'done') this.decide(entry);
    else if (entered('typing')) void this.type(entry);
    else if (entered({ typing: 'confirming' })) this.arm(entry, this.deps.waits.confirmMs, () => void this.lookAtBox(entry));
    else if (entered({ typing: 'retrying' })) void this.enterAgain(entry);
    else if (entered({ typing: 'waiting' }))
      this.arm(entry, this.deps.waits.submitMs, () => entry.actor.send({ type: 'prompt.timeout', at: this.iso() }));
    if (record.status !== was.context.record?.status) {
      // Entering `typing` is written by `type`, strictly, before the first key.
      if (!snap.matches('typing')) void this.ledger.persist(false);
      if (entry.told) this.deps.changed?.(this.id, record);
    }
  }

  /** Written `typing` to tmux first, then the text and Enter. */
  private async type(entry: Entry): Promise<void> {
    this.turnSeen = false;
    try {
      await this.ledger.persist(true);
      await typeLine(this.deps.panes, this.id, entry.record.text, this.deps.now);
    } catch (err) {
      this.deps.log.warn({ session: this.id, prompt: entry.record.id, err: (err as Error).message }, 'a prompt could not be typed');
      entry.actor.send({ type: 'prompt.untyped', at: this.iso() });
      return;
    }
    const reports = this.deps.agents.reportsPrompts(this.id) !== false;
    entry.actor.send({ type: 'prompt.typed', reports, at: this.iso() });
  }

  /** No report yet: does the text still show in the input box? */
  private async lookAtBox(entry: Entry): Promise<void> {
    const screen = await this.deps.panes.screen(this.id).catch(() => null);
    entry.actor.send({ type: 'prompt.unconfirmed', showsText: screen !== null && screenShowsPrompt(screen, entry.record.text) });
  }

  private async enterAgain(entry: Entry): Promise<void> {
    this.deps.log.info({ session: this.id, prompt: entry.record.id }, 'a prompt still in the input box: Enter once more');
    try {
      await pressEnter(this.deps.panes, this.id);
    } catch {
      entry.actor.send({ type: 'prompt.untyped', at: this.iso() });
      return;
    }
    entry.actor.send({ type: 'prompt.retried' });
  }

  private arm(entry: Entry, ms: number, fn: () => void): void {
    entry.timer?.();
    entry.timer = this.deps.timer(fn, ms);
  }

  /** A prompt decided: it leaves the queue; a submitted one holds the next until its turn ended. */
  private decide(entry: Entry): void {
    const i = this.queue.indexOf(entry);
    if (i < 0) return;
    this.queue.splice(i, 1);
    entry.timer?.();
    entry.actor.stop();
    this.ledger.keep(entry.record);
    if (entry.record.status === 'submitted' && !(this.turnSeen && awaitsInput(this.deps.agents.current(this.id)))) {
      const cancel = this.deps.timer(() => {
        if (this.gate?.cancel !== cancel) return;
        this.gate.expired = true;
        if (awaitsInput(this.deps.agents.current(this.id))) this.openGate();
        this.pump();
      }, this.deps.waits.turnStartMs);
      this.gate = { turnSeen: this.turnSeen, expired: false, cancel };
    }
    // A failure is pushed once; a session's deletion is the person's own doing.
    if (entry.record.status === 'failed' && entry.record.reason !== PROMPT_FAIL_REASONS.deleted) this.deps.failed?.(this.id, entry.record);
    queueMicrotask(() => this.pump());
  }

  private openGate(): void {
    this.gate?.cancel();
    this.gate = null;
  }

  /** Every write asked for so far is done. */
  settled(): Promise<void> {
    return this.ledger.settled();
  }

  private iso(): string {
    return new Date(this.deps.now()).toISOString();
  }
}
