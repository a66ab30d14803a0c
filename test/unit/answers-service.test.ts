/**
 * The answers service (src/service/answers/answers.service.ts) against fakes of its deps: the hub is the
 * real ask desk behind the hub's narrow face, the pane a fake that records what is typed and says
 * when it last drew, the answer log one that keeps entries in memory. What is checked: a dialog
 * that never settles is refused with nothing typed and the ask free again; a first key the pane
 * refuses gives the ask up for another answer, a later key does not; an answer the agent is never
 * seen to take ends after the landing bound as not landed. The waits are shortened through the
 * deps (readyWaitMs, landingWaitMs) and measured on the real clock.
 */
import { describe, expect, it } from 'vitest';
import type { AskOpening } from '../../src/agent/asks/ask.js';
import { AskDesk, type AskRecord } from '../../src/agent/asks/asks.js';
import { silentLogger } from '../../src/log.js';
import type { InputMessage } from '../../src/protocol/input.js';
import type { AnswerEntry, AnswerLog } from '../../src/service/answers/answer-log.js';
import { AnswersService, type AnswersDeps } from '../../src/service/answers/answers.service.js';
import { choice, permissionAsk, pressed, typed } from '../helpers/ask-opening.js';
import { domainError } from '../helpers/domain-error.js';

const OPENING = permissionAsk(
  'Bash',
  'rm -rf build',
  [choice('yes', 'Yes', 'run', typed('1')), choice('always', 'Yes, always', 'run', typed('2'), pressed('enter'))],
  { readiness: { afterMs: 0 }, landing: 'screen' },
);
const phone = { by: 'phone', tokenId: 't1' };
const tablet = { by: 'tablet', tokenId: 't2' };

/** A pane: what was typed, what the next input does, where its stream is and when it last drew. */
class FakePane {
  readonly typed: InputMessage[] = [];
  position = 100;
  lastOutputAt: number | null = null;
  /** Refuses the input with this index (0: the first key), as a pane gone away would. */
  refuseAt: number | null = null;
  /** Whether the pane is drawing without end: its last output is always now. */
  busy = false;
  /** Whether the pane draws after each key it takes (the agent took it), or stays as it is. */
  draws = false;

  input(_session: string, message: InputMessage): Promise<void> {
    if (this.refuseAt === this.typed.length) return Promise.reject(new Error('the pane is gone'));
    this.typed.push(message);
    if (this.draws) this.position++;
    return Promise.resolve();
  }

  activity(): { position: number; lastOutputAt: number | null } {
    return { position: this.position, lastOutputAt: this.busy ? Date.now() : this.lastOutputAt };
  }
}

function setup(opening: AskOpening = OPENING, waits: Partial<Pick<AnswersDeps, 'readyWaitMs' | 'landingWaitMs'>> = {}) {
  const desk = new AskDesk(() => Date.now());
  const pane = new FakePane();
  const logged: AnswerEntry[] = [];
  const answered: string[] = [];
  const hub: AnswersDeps['hub'] = {
    claim: (session, id, choice, by) => desk.claim(session, id, choice, by),
    release: (record: AskRecord) => {
      desk.untyped(record);
      desk.release(record);
    },
    typed: (record) => desk.typed(record),
    answered: (record, effect) => {
      answered.push(effect);
      desk.ended(record.session, record.open.ask.id);
    },
    unconfirmed: (record) => desk.unconfirmed(record),
    onAskClosed: (listener) => desk.onClosed(listener),
  };
  const answers = {
    append: (e: AnswerEntry) => {
      logged.push(e);
      return Promise.resolve();
    },
    last: () => Promise.resolve(logged),
  } as unknown as AnswerLog;
  const service = new AnswersService({ hub, panes: pane, log: silentLogger, answers, now: () => Date.now(), ...waits });
  const record = desk.opened('s', 'claude', opening)!;
  return { desk, pane, logged, answered, service, record, id: record.open.ask.id };
}

describe('AnswersService', () => {
  it('a dialog that never settles: refused as not ready after the bound, nothing typed, the ask free for another answer', async () => {
    const t = setup({ ...OPENING, readiness: { quietMs: 200 } }, { readyWaitMs: 300 });
    t.pane.draws = true;
    t.pane.busy = true;
    const started = Date.now();
    await expect(t.service.answer('s', t.id, 'yes', phone)).rejects.toThrow(domainError('ask-not-ready'));
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    t.pane.busy = false;
    t.pane.lastOutputAt = Date.now();
    expect(t.pane.typed).toEqual([]);
    expect(t.record.claim).toBeNull();
    // Another answer may come, and once the pane is still it is typed.
    const r = await t.service.answer('s', t.id, 'yes', tablet);
    expect(r).toEqual({ ask: t.id, choice: 'yes', landed: true, by: 'tablet' });
    expect(t.pane.typed).toEqual([{ type: 'keys', data: '1' }]);
    t.service.stop();
  });

  it('a first key the pane refuses: the error comes back, the claim is given up (not typed), and the next answer is typed', async () => {
    const t = setup(OPENING, { landingWaitMs: 200 });
    t.pane.refuseAt = 0;
    await expect(t.service.answer('s', t.id, 'yes', phone)).rejects.toThrow('the pane is gone');
    expect(t.pane.typed).toEqual([]);
    expect(t.record.claim).toBeNull();
    expect(t.record.closure).toBeNull();
    t.pane.refuseAt = null;
    t.pane.draws = true; // the pane draws after the keys: the agent took them
    expect(await t.service.answer('s', t.id, 'yes', tablet)).toEqual({ ask: t.id, choice: 'yes', landed: true, by: 'tablet' });
    expect(t.answered).toEqual(['run']);
    expect(t.record.closure).toMatchObject({ how: 'answered', by: 'tablet', choice: 'yes', landed: true });
    t.service.stop();
  });

  it('a later key the pane refuses: the keys already typed keep the claim, and another answer is told the ask is taken', async () => {
    const t = setup();
    t.pane.refuseAt = 1;
    await expect(t.service.answer('s', t.id, 'always', phone)).rejects.toThrow('the pane is gone');
    expect(t.pane.typed).toEqual([{ type: 'keys', data: '2' }]);
    expect(t.record.claim).toMatchObject({ by: phone, typed: true });
    await expect(t.service.answer('s', t.id, 'yes', tablet)).rejects.toThrow(/was answered by phone/);
    expect(t.pane.typed).toHaveLength(1);
    t.service.stop();
  });

  it('an answer the agent is never seen to take: after the landing bound it is not landed, closed as answered, and logged so', async () => {
    const t = setup(OPENING, { landingWaitMs: 300 });
    const started = Date.now();
    const r = await t.service.answer('s', t.id, 'yes', phone);
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    expect(r).toEqual({ ask: t.id, choice: 'yes', landed: false, by: 'phone' });
    expect(t.pane.typed).toEqual([{ type: 'keys', data: '1' }]);
    expect(t.answered).toEqual([]);
    expect(t.record.closure).toMatchObject({ how: 'answered', by: 'phone', choice: 'yes', landed: false });
    expect(t.logged).toMatchObject([{ ask: t.id, choice: 'yes', label: 'Yes', by: 'phone', landed: false }]);
    t.service.stop();
  });

  it('an ask that ends while the answer waits for the dialog: nothing is typed, the answer is told it is over', async () => {
    const t = setup({ ...OPENING, readiness: { afterMs: 5_000 } });
    const answering = t.service.answer('s', t.id, 'yes', phone);
    t.desk.hint('s', { why: 'terminal', answered: 'Yes' });
    t.desk.ended('s', t.id);
    await expect(answering).rejects.toThrow(domainError('ask-closed'));
    expect(t.pane.typed).toEqual([]);
    t.service.stop();
  });
});
