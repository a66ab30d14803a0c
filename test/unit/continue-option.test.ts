/**
 * A session's scheduled continue as tmux keeps it (src/tmux/sessions/continue-option.ts): one line of JSON
 * read back with the schedule's generated check. What reads back as a schedule, and what reads as
 * none (unset, set by hand, cut, of another shape, a time that is no time).
 */
import { describe, expect, it } from 'vitest';
import type { ContinueSchedule } from '../../src/protocol/continue.js';
import { decodeContinueOption } from '../../src/tmux/sessions/continue-option.js';

const AT = '2026-12-04T10:15:03.118Z';
const WAITING: ContinueSchedule = { id: 'c1', at: AT, text: 'continue', by: 'my iPhone', stopId: 's1', status: 'waiting' };
const SKIPPED: ContinueSchedule = { ...WAITING, stopId: null, status: 'skipped', reason: 'the agent started a turn', decidedAt: AT };
const shaped = (change: (o: Record<string, unknown>) => void): string => {
  const o = JSON.parse(JSON.stringify(WAITING)) as Record<string, unknown>;
  change(o);
  return JSON.stringify(o);
};

describe('decodeContinueOption', () => {
  it('reads back what was written, with and without its outcome', () => {
    expect(decodeContinueOption(JSON.stringify(WAITING))).toEqual(WAITING);
    expect(decodeContinueOption(JSON.stringify(SKIPPED))).toEqual(SKIPPED);
  });

  it('reads none for an unset option, text that is not JSON, or JSON that is not an object', () => {
    for (const value of [null, '', 'continue', JSON.stringify(WAITING).slice(0, 40), 'null', '[]', '"c1"', '42'])
      expect(decodeContinueOption(value), String(value)).toBeNull();
  });

  it('reads none for a value of another shape: a field missing or of another type, a status it does not know', () => {
    const broken: ((o: Record<string, unknown>) => void)[] = [
      (o) => delete o.id,
      (o) => delete o.stopId,
      (o) => (o.text = 7),
      (o) => (o.by = null),
      (o) => (o.stopId = 3),
      (o) => (o.status = 'done'),
      (o) => (o.reason = false),
      (o) => (o.decidedAt = 1),
    ];
    for (const change of broken) expect(decodeContinueOption(shaped(change)), String(change)).toBeNull();
  });

  it('reads none for an `at` that is no time: a schedule is armed by it', () => {
    expect(decodeContinueOption(shaped((o) => (o.at = 'tomorrow')))).toBeNull();
    expect(decodeContinueOption(shaped((o) => (o.at = 1_700_000_000_000)))).toBeNull();
  });
});
