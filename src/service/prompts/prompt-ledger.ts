/**
 * What a session keeps of its prompts besides the queue (prompt-queue.ts): the newest decided ones
 * (listed in full), the ids and digests of older ones (enough to answer a retry), and the writing
 * of the whole list to tmux (docs/api.md "Prompts").
 *
 * Invariants: at most LISTED_DECIDED_PROMPTS decided prompts listed and REMEMBERED_PROMPT_IDS older
 * ones; writes happen one after another, in the order asked; an unchanged list is not written again.
 */
import { createHash } from 'node:crypto';
import type { Logger } from '../../log.js';
import { LISTED_DECIDED_PROMPTS, promptDigest, REMEMBERED_PROMPT_IDS, type PromptRecord } from '../../protocol/prompt.js';
import type { StoredPrompts } from '../../protocol/prompt.schemas.js';
import type { PromptStore } from './prompt-deps.js';

/** An older decided prompt: enough to answer a retry of it. */
type Older = StoredPrompts['older'][number];

/** A prompt found by its id: its record (a remembered one is given back its `text`, which is not kept) and its text's digest. */
export interface FoundPrompt {
  readonly record: (text: string) => PromptRecord;
  readonly digest: string;
}

export class PromptLedger {
  private readonly decided: PromptRecord[] = [];
  private readonly older: Older[] = [];
  /**
   * A digest of what was last written (or restored): an unchanged list is not written again. A
   * digest, not the text: at the cap (20 listed, REMEMBERED_PROMPT_IDS older) the text is some
   * 85 KB a session, a second copy of what `older` already holds.
   */
  private written: string | null = null;
  private writes: Promise<void> = Promise.resolve();

  constructor(
    private readonly id: string,
    private readonly deps: { readonly store: PromptStore; readonly log: Logger },
    /** The queue's prompts, undecided, in order: listed after the decided ones. */
    private readonly undecided: () => PromptRecord[],
  ) {}

  /** Takes what tmux (or the record) kept; answers the undecided prompts, for the queue. */
  restore(stored: StoredPrompts): PromptRecord[] {
    this.written = digestOf(JSON.stringify(stored));
    this.older.push(...stored.older);
    const undecided: PromptRecord[] = [];
    for (const record of stored.prompts) {
      if (record.status === 'queued' || record.status === 'typing') undecided.push(record);
      else this.keep(record);
    }
    return undecided;
  }

  /** A decided prompt, listed; the oldest listed one is remembered by its id and digest only. */
  keep(record: PromptRecord): void {
    this.decided.push(record);
    while (this.decided.length > LISTED_DECIDED_PROMPTS) {
      const old = this.decided.shift()!;
      this.older.push({ id: old.id, digest: promptDigest(old.text), status: old.status, by: old.by, createdAt: old.createdAt });
    }
    if (this.older.length > REMEMBERED_PROMPT_IDS) this.older.splice(0, this.older.length - REMEMBERED_PROMPT_IDS);
  }

  /** A decided prompt of that id, listed or remembered; null when there is none. */
  find(promptId: string): FoundPrompt | null {
    const held = this.decided.find((r) => r.id === promptId);
    if (held) return { record: () => held, digest: promptDigest(held.text) };
    const old = this.older.find((o) => o.id === promptId);
    if (!old) return null;
    return { record: (text) => ({ id: old.id, text, by: old.by, status: old.status, createdAt: old.createdAt }), digest: old.digest };
  }

  /** The newest decided prompts and the undecided ones, oldest first. */
  list(): PromptRecord[] {
    return [...this.decided, ...this.undecided()];
  }

  /** What tmux keeps. */
  stored(): StoredPrompts {
    return { v: 1, prompts: this.list(), older: [...this.older] };
  }

  /** Writes the prompts after the writes before; `strict`: a failure throws (else it is logged). */
  persist(strict: boolean): Promise<void> {
    const write = this.writes.then(async () => {
      const stored = this.stored();
      const digest = digestOf(JSON.stringify(stored));
      if (digest === this.written) return;
      await this.deps.store.write(this.id, stored);
      this.written = digest;
    });
    this.writes = write.catch((err: Error) => {
      if (!strict) this.deps.log.warn({ session: this.id, err: err.message }, 'the prompts could not be written to tmux');
    });
    return strict ? write : this.writes;
  }

  /** Every write asked for so far is done. */
  settled(): Promise<void> {
    return this.writes;
  }
}

/** What tells two written lists apart (SHA-256: no two lists a session holds share one). */
const digestOf = (value: string): string => createHash('sha256').update(value).digest('base64');
