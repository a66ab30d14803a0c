/**
 * Prompts from a phone, submitted to each session's agent exactly once (docs/api.md "Prompts"):
 * `POST /sessions/:id/prompt` and the stream's `prompt` message queue one; it is typed when it is
 * its turn, the way the agent needs it (src/service/prompts/typed-line.ts), and confirmed by the agent's
 * own report of a new turn with its text (its hook, its file, its event: never the screen).
 *
 * One queue per session (prompt-queue.ts), each prompt a machine (src/machines/prompt.machine.ts).
 * The queues are kept in the sessions' tmux option (src/tmux/sessions/prompts-option.ts) and the sessions'
 * records, and read back the first time a session is used after the daemon starts.
 *
 * Invariants: a client's id names one prompt for good: the same id with the same text is answered
 * with the prompt as it stands and types nothing; another text is refused (`prompt-id-conflict`),
 * as long as the id is remembered (queued, the newest LISTED_DECIDED_PROMPTS decided, and
 * REMEMBERED_PROMPT_IDS older ones); a prompt is answered only once it is written to tmux.
 */
import { randomUUID } from 'node:crypto';
import { DomainError } from '../../errors.js';
import { checkPromptText, MAX_QUEUED_PROMPTS, promptDigest, type PromptRecord } from '../../protocol/prompt.js';
import { PROMPT_WAITS, type PromptDeps, type PromptWaits } from './prompt-deps.js';
import { SessionPrompts } from './prompt-queue.js';

export type { PromptWaits } from './prompt-deps.js';

/** What a client sends: the text, and its own key for it. */
export interface PromptRequest {
  readonly text: string;
  readonly id?: string;
}

export interface PromptsServiceDeps extends Omit<PromptDeps, 'waits' | 'timer' | 'changed'> {
  /** Throws `session-not-found` for a session tmux does not hold. */
  readonly known: (id: string) => Promise<void>;
  readonly waits?: Partial<PromptWaits>;
  /** Calls `fn` in `ms` (setTimeout, unref'd, by default); returns the cancel. */
  readonly timer?: (fn: () => void, ms: number) => () => void;
}

function realTimer(fn: () => void, ms: number): () => void {
  const t = setTimeout(fn, ms);
  t.unref();
  return () => clearTimeout(t);
}

export class PromptsService {
  private readonly sessions = new Map<string, { readonly queue: SessionPrompts; readonly loaded: Promise<void> }>();
  private readonly deps: PromptDeps;
  private readonly unwatch: (() => void)[];
  private readonly listeners = new Set<(id: string, record: PromptRecord) => void>();

  constructor(private readonly service: PromptsServiceDeps) {
    this.deps = {
      ...service,
      waits: { ...PROMPT_WAITS, ...service.waits },
      timer: service.timer ?? realTimer,
      changed: (id, record) => this.listeners.forEach((l) => l(id, record)),
    };
    this.unwatch = [
      service.agents.subscribeEvery((id, fact) => this.sessions.get(id)?.queue.agentMoved(fact)),
      service.agents.onUserMessage((id, text) => this.sessions.get(id)?.queue.agentSaid(text)),
    ];
  }

  /**
   * Queues a prompt in session `id` for `by` (a device's token name). `created` is false when the
   * client's id named a prompt already (nothing is typed again). Throws `session-not-found`,
   * `session-exited`, `invalid`, `prompt-id-conflict`, `prompt-queue-full`, `tmux-unavailable`.
   */
  async submit(id: string, request: PromptRequest, by: string): Promise<{ record: PromptRecord; created: boolean }> {
    await this.service.known(id);
    const text = checkPromptText(request.text);
    const queue = await this.queueOf(id);
    if (request.id !== undefined) {
      const found = queue.find(request.id);
      if (found !== null && found.digest !== promptDigest(text))
        throw new DomainError('prompt-id-conflict', `prompt "${request.id}" was sent before with another text`, { field: 'id' });
      // A retry answers only what is written to tmux: one whose write failed meanwhile is queued anew.
      if (found !== null) await queue.settled();
      const kept = found === null ? null : queue.find(request.id);
      if (kept !== null) return { record: kept.record(text), created: false };
    }
    if (this.deps.panes.exited(id)) throw new DomainError('session-exited', `the agent of session "${id}" exited: respawn it first`);
    if (queue.undecided >= MAX_QUEUED_PROMPTS)
      throw new DomainError('prompt-queue-full', `session "${id}" has ${MAX_QUEUED_PROMPTS} prompts waiting already`);
    const record: PromptRecord = {
      id: request.id ?? randomUUID(),
      text,
      by,
      status: 'queued',
      createdAt: new Date(this.deps.now()).toISOString(),
    };
    const queued = await queue.enqueue(record);
    this.deps.log.info({ session: id, prompt: record.id, by, chars: text.length }, 'a prompt was queued');
    return { record: queued, created: true };
  }

  /** Session `id`'s queued prompts and its newest decided ones, oldest first; throws `session-not-found`. */
  async list(id: string): Promise<PromptRecord[]> {
    await this.service.known(id);
    return (await this.queueOf(id)).list();
  }

  /** Cancels a queued prompt; throws `session-not-found`, `prompt-not-found`, `prompt-not-queued`. */
  async cancel(id: string, promptId: string): Promise<PromptRecord> {
    await this.service.known(id);
    const queue = await this.queueOf(id);
    const cancelled = queue.cancel(promptId);
    if (cancelled !== null) {
      await queue.settled();
      return cancelled;
    }
    if (queue.find(promptId) === null) throw new DomainError('prompt-not-found', `session "${id}" has no prompt "${promptId}"`);
    throw new DomainError('prompt-not-queued', `prompt "${promptId}" is being typed or was decided: it cannot be cancelled`);
  }

  /** Calls `listener` at each change of a prompt (a new one queued, typing, decided), of every session; returns the unsubscribe. */
  onChange(listener: (id: string, record: PromptRecord) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** At the daemon's start: reads each session's prompts back (queued ones are typed in their turn). */
  async restore(ids: readonly string[]): Promise<void> {
    await Promise.all(ids.map((id) => this.entry(id).loaded));
  }

  /** A session ended: when its agent exited (`exited`), its undecided prompts fail; a deletion is `forget`'s. */
  agentExited(id: string, why: 'exited' | 'deleted'): void {
    if (why === 'exited') this.sessions.get(id)?.queue.ended('exited');
  }

  /** The session was deleted: its undecided prompts fail (not pushed), and it is forgotten. */
  forget(id: string): void {
    const session = this.sessions.get(id);
    if (!session) return;
    session.queue.ended('deleted');
    session.queue.close();
    this.sessions.delete(id);
  }

  stop(): void {
    for (const fn of this.unwatch) fn();
    for (const s of this.sessions.values()) s.queue.close();
    this.sessions.clear();
  }

  private async queueOf(id: string): Promise<SessionPrompts> {
    const session = this.entry(id);
    await session.loaded;
    return session.queue;
  }

  /** A session's queue, made (and read back from where it is kept) on first use. */
  private entry(id: string): { readonly queue: SessionPrompts; readonly loaded: Promise<void> } {
    const found = this.sessions.get(id);
    if (found) return found;
    const queue = new SessionPrompts(id, this.deps);
    const loaded = this.deps.store
      .read(id)
      .catch((err: Error) => {
        this.deps.log.warn({ session: id, err: err.message }, "a session's prompts could not be read back");
        return null;
      })
      .then((stored) => {
        queue.restore(stored);
        queue.pump();
      });
    const session = { queue, loaded };
    this.sessions.set(id, session);
    return session;
  }
}
