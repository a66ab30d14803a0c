/**
 * The ask desk (who answered an ask: the first claim wins, every later one is told who) and the
 * answer log (0600, bounded: past its size the older half goes), on real files.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AskDesk } from '../../src/agent/asks/asks.js';
import { silentLogger } from '../../src/log.js';
import { AnswerLog, MAX_ANSWER_LOG_BYTES, type AnswerEntry } from '../../src/service/answers/answer-log.js';
import { choice, permissionAsk, pressed, typed } from '../helpers/ask-opening.js';
import { domainError } from '../helpers/domain-error.js';

const OPENING = permissionAsk(
  'Bash',
  'rm -rf build\nand more',
  [choice('yes', 'Yes', 'run', typed('1')), choice('no', 'No', 'wait', pressed('escape')), choice('Bad Id', 'dropped', 'run', typed('3'))],
  { readiness: { quietMs: 400 }, landing: 'screen' },
);
const phone = { by: 'phone', tokenId: 't1' };

describe('the ask desk', () => {
  it('opens an ask with a new id, its texts on one line, only choices with a valid id', () => {
    const desk = new AskDesk(() => 1000);
    const a = desk.opened('s', 'claude', OPENING)!;
    const b = desk.opened('s', 'claude', OPENING)!;
    expect(a.open.ask.id).not.toBe(b.open.ask.id);
    expect(a.open.ask).toMatchObject({ concern: 'rm -rf build and more', choices: [{ id: 'yes' }, { id: 'no' }] });
    // A newer ask ends the older one: the agent moved on.
    expect(a.closure).toEqual({ how: 'moved-on', at: 1000 });
    expect(desk.current('s')).toBe(b);
    expect(desk.opened('s', 'claude', { ...OPENING, choices: [] })).toBeNull();
  });

  it('the first claim wins; a second is told who, an unknown choice changes nothing, an unknown ask is not found', () => {
    const desk = new AskDesk(() => 5000);
    const r = desk.opened('s', 'claude', OPENING)!;
    const id = r.open.ask.id;
    expect(() => desk.claim('s', id, 'maybe', phone)).toThrow(domainError('invalid'));
    expect(r.claim).toBeNull();
    expect(() => desk.claim('s', 'nope', 'yes', phone)).toThrow(domainError('ask-not-found'));
    expect(() => desk.claim('other', id, 'yes', phone)).toThrow(domainError('ask-not-found'));
    desk.claim('s', id, 'yes', phone);
    expect(() => desk.claim('s', id, 'no', { by: 'tablet', tokenId: 't2' })).toThrow(/was answered by phone \("yes"\)/);
    // A claim whose keys never left is given up; typed, it stays.
    desk.release(r);
    desk.claim('s', id, 'no', { by: 'tablet', tokenId: 't2' });
    desk.typed(r);
    desk.release(r);
    desk.ended('s', id);
    expect(r.closure).toEqual({ how: 'answered', by: 'tablet', choice: 'no', at: 5000, landed: true });
    expect(() => desk.claim('s', id, 'yes', phone)).toThrow(domainError('ask-closed'));
  });

  it('an ask the terminal answered, or the agent left, says so to a late answer', () => {
    const desk = new AskDesk(() => 7000);
    const closed: string[] = [];
    desk.onClosed((r) => closed.push(r.closure!.how));
    const t = desk.opened('s', 'claude', OPENING)!;
    desk.hint('s', { why: 'terminal', answered: 'allowed' });
    desk.ended('s', t.open.ask.id);
    expect(t.closure).toEqual({ how: 'terminal', answered: 'allowed', at: 7000 });
    const g = desk.opened('s', 'claude', OPENING)!;
    desk.ended('s', g.open.ask.id, true);
    let err: unknown;
    try {
      desk.claim('s', g.open.ask.id, 'yes', phone);
    } catch (e) {
      err = e;
    }
    expect(err).toMatchObject({ code: 'ask-closed', extra: { closed: { how: 'agent-gone' } } });
    expect(closed).toEqual(['terminal', 'agent-gone']);
  });
});

describe('the answer log', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tether-answers-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const entry = (n: number): AnswerEntry => ({
    at: new Date(n).toISOString(),
    session: 's',
    agent: 'claude',
    ask: `a${n}`,
    kind: 'permission',
    concern: 'x'.repeat(400),
    choice: 'yes',
    label: 'Yes',
    by: 'phone',
    landed: true,
  });

  it('is 0600, keeps its newer half once past its bound, and gives the last entries newest last', async () => {
    const path = join(dir, 'answers.log');
    const log = new AnswerLog(path, silentLogger);
    expect(await log.last()).toEqual([]);
    const n = Math.ceil((MAX_ANSWER_LOG_BYTES * 1.5) / 500);
    for (let i = 0; i < n; i++) void log.append(entry(i));
    const last = await log.last(3);
    expect(last.map((e) => e.ask)).toEqual([`a${n - 3}`, `a${n - 2}`, `a${n - 1}`]);
    expect(statSync(path).size).toBeLessThanOrEqual(MAX_ANSWER_LOG_BYTES);
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });
});
