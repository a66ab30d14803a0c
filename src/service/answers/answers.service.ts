/**
 * Answering an ask (docs/api.md "Asks"): `POST /sessions/:id/answer` and the stream's `answer`
 * frame. The answer is typed into the pane as a person would type it in that agent's dialog
 * (its adapter says the keys), exactly once, and the reply says whether the agent took it.
 *
 * The steps: the answer claims the ask (the first claim wins; every later one is refused with who
 * claimed it); it waits until the dialog takes keys (the ask's readiness: the pane quiet for a
 * moment, or a fixed time after the ask, at most READY_WAIT_MS; an ask that ends meanwhile was
 * answered elsewhere, and nothing is typed); it types the keys, once; then it waits, at most
 * LANDING_WAIT_MS, until the agent is seen to take them (the ask ends, or, for a dialog that says
 * nothing, the pane draws after the keys). Every answer and every answer given at the terminal
 * is written to the answer log.
 *
 * Invariants: keys are typed at most once per ask, whatever happens; a claim whose keys were not
 * typed is given up, so another answer may come; only timing of the pane's output is read, never
 * its content (docs/contract.md "The bytes are the content").
 */
import type { Answerer, AskRecord } from '../../agent/asks/asks.js';
import type { AgentHub } from '../../agent/hub/hub.js';
import { closedBy } from '../../agent/asks/asks.js';
import { DomainError } from '../../errors.js';
import type { Logger } from '../../log.js';
import type { LinePane } from '../prompts/typed-line.js';
import type { AnswerEntry, AnswerLog } from './answer-log.js';

/** The longest an answer waits for the dialog to take keys before it gives up, typing nothing. */
export const READY_WAIT_MS = 5_000;
/** The longest an answer waits, once typed, to see the agent take it. */
export const LANDING_WAIT_MS = 10_000;
/** How often the waits look. */
const POLL_MS = 20;

export interface AnswersDeps {
  readonly hub: Pick<AgentHub, 'claim' | 'release' | 'typed' | 'answered' | 'unconfirmed' | 'onAskClosed'>;
  /** Typing into a session's pane, and the timing of its output. */
  readonly panes: LinePane;
  readonly log: Logger;
  readonly answers: AnswerLog;
  readonly now: () => number;
  readonly readyWaitMs?: number;
  readonly landingWaitMs?: number;
}

/** What an answer did. */
export interface AnswerResult {
  readonly ask: string;
  readonly choice: string;
  /** Whether the agent was seen to take it within LANDING_WAIT_MS. */
  readonly landed: boolean;
  readonly by: string;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class AnswersService {
  private readonly stopLogging: () => void;

  constructor(private readonly deps: AnswersDeps) {
    this.stopLogging = deps.hub.onAskClosed((record) => {
      const entry = logEntry(record);
      if (entry !== null) void deps.answers.append(entry);
    });
  }

  /** Answers ask `askId` of `session` with `choice`, as `by`. Throws `ask-not-found`, `invalid`, `ask-closed`, `ask-not-ready` and input's refusals. */
  async answer(session: string, askId: string, choice: string, by: Answerer): Promise<AnswerResult> {
    const record = this.deps.hub.claim(session, askId, choice, by);
    const claim = record.claim!;
    let before: number;
    let steps = 0;
    try {
      await this.ready(session, record);
      before = this.deps.panes.activity(session)?.position ?? 0;
      // Marked before the first key leaves: an agent quick to report must find the answer typed.
      this.deps.hub.typed(record);
      for (const [i, keys] of claim.choice.keys.entries()) {
        if (i > 0) await this.ready(session, record, this.deps.now());
        await this.deps.panes.input(session, keys);
        steps++;
      }
    } catch (err) {
      if (steps === 0) {
        // Nothing reached the pane: the ask is free for another answer.
        this.deps.hub.release(record);
      }
      throw err;
    }
    const landed = await this.landing(session, record, before);
    this.deps.log.info({ session, ask: askId, choice, by: by.by, landed }, 'an ask was answered');
    return { ask: askId, choice, landed, by: by.by };
  }

  /** Waits until the dialog takes keys; throws when the ask ends meanwhile or the screen never settles. */
  private async ready(session: string, record: AskRecord, since = record.open.askedAtMs): Promise<void> {
    const readiness = record.open.opening.readiness;
    const start = this.deps.now();
    for (;;) {
      if (record.closure !== null)
        throw new DomainError(
          'ask-closed',
          `ask ${record.open.ask.id} is over before this answer could be typed: ${closedBy(record.closure)}`,
        );
      const now = this.deps.now();
      if ('afterMs' in readiness) {
        if (now - since >= readiness.afterMs) return;
      } else {
        const last = Math.max(since, this.deps.panes.activity(session)?.lastOutputAt ?? 0);
        if (now - last >= readiness.quietMs) return;
      }
      if (now - start >= (this.deps.readyWaitMs ?? READY_WAIT_MS)) {
        throw new DomainError(
          'ask-not-ready',
          `the agent's screen did not settle on its dialog within ${(this.deps.readyWaitMs ?? READY_WAIT_MS) / 1000} s (it may have been answered in the terminal): nothing was typed`,
        );
      }
      await sleep(POLL_MS);
    }
  }

  /** Waits until the agent takes the typed answer: the ask ends, or (a dialog that says nothing) the pane draws after the keys. */
  private async landing(session: string, record: AskRecord, before: number): Promise<boolean> {
    const claim = record.claim!;
    const deadline = this.deps.now() + (this.deps.landingWaitMs ?? LANDING_WAIT_MS);
    const screen = record.open.opening.landing === 'screen';
    for (;;) {
      const closure = record.closure;
      if (closure !== null) return closure.how === 'answered' && closure.landed;
      if (screen && (this.deps.panes.activity(session)?.position ?? 0) > before) {
        this.deps.hub.answered(record, claim.choice.effect);
        return true;
      }
      if (this.deps.now() >= deadline) {
        this.deps.hub.unconfirmed(record);
        return false;
      }
      await sleep(POLL_MS);
    }
  }

  /** The last answers, newest last. */
  last(n?: number): Promise<AnswerEntry[]> {
    return this.deps.answers.last(n);
  }

  stop(): void {
    this.stopLogging();
  }
}

/** The log entry of a closed ask: an answer tether typed, or one given at the terminal; null for an ask nobody answered. */
function logEntry(record: AskRecord): AnswerEntry | null {
  const closure = record.closure;
  if (closure === null) return null;
  const ask = record.open.ask;
  const base = {
    at: new Date(closure.at).toISOString(),
    session: record.session,
    agent: ask.agent,
    ask: ask.id,
    kind: ask.kind,
    ...(ask.tool !== undefined ? { tool: ask.tool } : {}),
    concern: ask.concern,
  };
  if (closure.how === 'answered') {
    const label = ask.choices.find((c) => c.id === closure.choice)?.label ?? null;
    return { ...base, choice: closure.choice, label, by: closure.by, landed: closure.landed };
  }
  if (closure.how === 'terminal') {
    const picked =
      closure.answered !== undefined ? ask.choices.find((c) => c.id === closure.answered || c.label === closure.answered) : undefined;
    return { ...base, choice: picked?.id ?? null, label: picked?.label ?? closure.answered ?? null, by: 'terminal', landed: true };
  }
  return null;
}
