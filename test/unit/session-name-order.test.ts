/**
 * Session lists are sorted by compareSessionNames, which must give the order the Unicode
 * collation gives (what `localeCompare` gave before), for every name the pattern admits.
 */
import { describe, expect, it } from 'vitest';
import { compareSessionNames, isValidSessionName } from '../../src/protocol/session-name.js';

const ALPHABET = 'abcAB_-019yzYZ';

/** A small deterministic generator, so a failure names a list that can be run again. */
function names(seed: number, count: number): string[] {
  let s = seed;
  const next = (): number => (s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  return Array.from({ length: count }, () =>
    Array.from({ length: 1 + Math.floor(next() * 4) }, () => ALPHABET[Math.floor(next() * ALPHABET.length)]).join(''),
  );
}

describe('the order of session names', () => {
  it('is the Unicode collation order for names of letters, digits, "_" and "-"', () => {
    for (let seed = 1; seed <= 40; seed++) {
      const list = names(seed, 60).filter(isValidSessionName);
      const collator = new Intl.Collator('en');
      expect([...list].sort(compareSessionNames), `seed ${seed}`).toEqual([...list].sort((a, b) => collator.compare(a, b)));
    }
  });

  it('puts lower case before upper case, and a name before its longer names', () => {
    expect(['B', 'a_b', 'Aa', 'a', 'aA', 'A', '-x', '_x', '1', 'b'].sort(compareSessionNames)).toEqual([
      '_x',
      '-x',
      '1',
      'a',
      'A',
      'a_b',
      'aA',
      'Aa',
      'b',
      'B',
    ]);
  });

  it('says two equal names are equal', () => {
    expect(compareSessionNames('pi-main', 'pi-main')).toBe(0);
  });
});
