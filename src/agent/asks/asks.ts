/**
 * The asks of every session and who answered them: the desk where an answer is claimed, exactly
 * once. One ask at most is open per session (a newer one ends the older); an open ask is
 * claimed by the first answer (a phone, a script), after which every other answer is refused
 * with who claimed it; it closes when the agent is seen to take an answer, when the terminal
 * answers it, when the agent moves on, or when it goes away. Closed asks are remembered (the
 * last MAX_CLOSED_ASKS) so a late answer is told who or what answered, not that the ask is unknown.
 *
 * Invariants: claiming is synchronous (a check and a set in one turn of the event loop), so two
 * answers that arrive together cannot both win; an ask's id is never reused (a random UUID).
 */
import { randomUUID } from 'node:crypto';
import { DomainError } from '../../errors.js';
import { askOf, boundedOpening, type AskChoiceSpec, type AskOpening, type OpenAsk } from './ask.js';

/** Closed asks remembered for late answers. */
export const MAX_CLOSED_ASKS = 512;

/** Who answers: a token's device name (`phone`), or the terminal. */
export interface Answerer {
  /** The device (token) name, or `terminal`. */
  readonly by: string;
  readonly tokenId: string | null;
}

/** How an ask ended. */
export type AskClosure =
  /** An answer tether typed, and saw the agent take (`landed`), or not within its bound. */
  | { readonly how: 'answered'; readonly by: string; readonly choice: string; readonly at: number; readonly landed: boolean }
  /** The person at the terminal answered it (`answered`: what, when the agent said). */
  | { readonly how: 'terminal'; readonly answered?: string; readonly at: number }
  /** The agent moved on without an answer (it asked something else, it was interrupted). */
  | { readonly how: 'moved-on'; readonly at: number }
  /** The agent went away (it exited, its session ended). */
  | { readonly how: 'agent-gone'; readonly at: number };

/** One ask, as the desk keeps it. */
export interface AskRecord {
  readonly session: string;
  readonly open: OpenAsk;
  /** The first answer, once one came: its answerer and choice, and whether its keys were typed (the desk's `typed`, `untyped`). */
  claim: { readonly by: Answerer; readonly choice: AskChoiceSpec; readonly at: number; readonly typed: boolean } | null;
  /** What the agent said about how it ended, before the state machine closed it. */
  hint: { readonly why: 'terminal' | 'moved-on'; readonly answered?: string } | null;
  closure: AskClosure | null;
}

/** Listens to asks that close (the answer log, waiting answers). */
export type ClosedListener = (record: AskRecord) => void;

export class AskDesk {
  private readonly open = new Map<string, AskRecord>();
  private readonly closed = new Map<string, AskRecord>();
  private readonly listeners = new Set<ClosedListener>();

  constructor(private readonly now: () => number) {}

  /** Opens an ask for `session` (ending the one it had); null when the opening offers no valid choice. */
  opened(session: string, agent: string, opening: AskOpening): AskRecord | null {
    const bounded = boundedOpening(opening);
    if (bounded === null) return null;
    const at = this.now();
    const previous = this.open.get(session);
    if (previous) this.close(previous, { how: 'moved-on', at });
    const record: AskRecord = {
      session,
      open: { ask: askOf(randomUUID(), agent, bounded, at), opening: bounded, askedAtMs: at },
      claim: null,
      hint: null,
      closure: null,
    };
    this.open.set(session, record);
    return record;
  }

  /** The open ask of `session`, or null. */
  current(session: string): AskRecord | null {
    return this.open.get(session) ?? null;
  }

  /** An ask by id, open or closed (remembered), or null. */
  find(id: string): AskRecord | null {
    for (const r of this.open.values()) if (r.open.ask.id === id) return r;
    return this.closed.get(id) ?? null;
  }

  /**
   * Claims ask `id` of `session` for `by` choosing `choice`: the first claim wins. Throws
   * `ask-not-found` (no such ask of this session), `invalid` (no such choice: nothing is claimed),
   * `ask-closed` (answered by another, answered at the terminal, or the agent moved on or left).
   */
  claim(session: string, id: string, choice: string, by: Answerer): AskRecord {
    const record = this.find(id);
    if (record === null || record.session !== session) throw new DomainError('ask-not-found', `session ${session} has no ask ${id}`);
    const spec = record.open.opening.choices.find((c) => c.id === choice);
    if (!spec) {
      throw new DomainError(
        'invalid',
        `no choice "${choice}": the choices are ${record.open.opening.choices.map((c) => c.id).join(', ')}`,
        {
          field: 'choice',
        },
      );
    }
    if (record.closure !== null) throw closedError(record);
    if (record.claim !== null) throw claimedError(record);
    record.claim = { by, choice: spec, at: this.now(), typed: false };
    return record;
  }

  /** The claimed answer's keys are typed (from now on the ask is the claimant's, whatever ends it). */
  typed(record: AskRecord): void {
    if (record.claim !== null) record.claim = { ...record.claim, typed: true };
  }

  /** The keys marked typed never reached the pane (the first one was refused): the claim is as before, not typed. */
  untyped(record: AskRecord): void {
    if (record.claim !== null && record.closure === null) record.claim = { ...record.claim, typed: false };
  }

  /** Gives up a claim whose keys were never typed (the pane could not be reached): another answer may come. */
  release(record: AskRecord): void {
    if (record.claim !== null && !record.claim.typed && record.closure === null) record.claim = null;
  }

  /** The agent said how its open ask ended (the state machine closes it next). */
  hint(session: string, hint: NonNullable<AskRecord['hint']>): void {
    const record = this.open.get(session);
    if (record) record.hint = hint;
  }

  /** The ask `id` of `session` is no longer what the agent waits on: it closes, saying how. */
  ended(session: string, id: string, agentGone = false): void {
    const record = this.open.get(session);
    if (!record || record.open.ask.id !== id) return;
    const at = this.now();
    const claim = record.claim;
    if (agentGone && !claim?.typed) return this.close(record, { how: 'agent-gone', at });
    if (claim?.typed) return this.close(record, { how: 'answered', by: claim.by.by, choice: claim.choice.id, at, landed: true });
    const hint = record.hint;
    if (hint?.why === 'terminal')
      return this.close(record, { how: 'terminal', ...(hint.answered !== undefined ? { answered: hint.answered } : {}), at });
    this.close(record, { how: 'moved-on', at });
  }

  /** A typed answer was not seen taken within its bound: it closes as answered, not landed. */
  unconfirmed(record: AskRecord): void {
    const claim = record.claim;
    if (record.closure !== null || !claim) return;
    this.close(record, { how: 'answered', by: claim.by.by, choice: claim.choice.id, at: this.now(), landed: false });
  }

  /** Calls `listener` for each ask that closes; returns the unsubscribe. */
  onClosed(listener: ClosedListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Forgets a session's open ask (the session ended). */
  forget(session: string): void {
    const record = this.open.get(session);
    if (record) this.close(record, { how: 'agent-gone', at: this.now() });
  }

  private close(record: AskRecord, closure: AskClosure): void {
    if (record.closure !== null) return;
    record.closure = closure;
    if (this.open.get(record.session) === record) this.open.delete(record.session);
    this.closed.set(record.open.ask.id, record);
    if (this.closed.size > MAX_CLOSED_ASKS) this.closed.delete(this.closed.keys().next().value!);
    for (const l of [...this.listeners]) l(record);
  }
}

/** Who or what answered, in words. */
export function closedBy(closure: AskClosure): string {
  switch (closure.how) {
    case 'answered':
      return `answered by ${closure.by} ("${closure.choice}")${closure.landed ? '' : ', not seen taken by the agent'}`;
    case 'terminal':
      return `answered in the terminal${closure.answered !== undefined ? ` ("${closure.answered}")` : ''}`;
    case 'moved-on':
      return 'the agent moved on without an answer';
    case 'agent-gone':
      return 'the agent went away';
  }
}

function closedError(record: AskRecord): DomainError {
  const closure = record.closure!;
  return new DomainError('ask-closed', `ask ${record.open.ask.id} is over: ${closedBy(closure)} at ${new Date(closure.at).toISOString()}`, {
    extra: {
      closed: {
        how: closure.how,
        at: new Date(closure.at).toISOString(),
        ...(closure.how === 'answered' ? { by: closure.by, choice: closure.choice } : {}),
        ...(closure.how === 'terminal' ? { by: 'terminal' } : {}),
      },
    },
  });
}

function claimedError(record: AskRecord): DomainError {
  const claim = record.claim!;
  const at = new Date(claim.at).toISOString();
  return new DomainError('ask-closed', `ask ${record.open.ask.id} was answered by ${claim.by.by} ("${claim.choice.id}") at ${at}`, {
    extra: { closed: { how: 'answered', by: claim.by.by, choice: claim.choice.id, at } },
  });
}
