import { describe, expect, it } from 'vitest';
import { checkTmuxVersion, compareTmuxVersion, parseTmuxVersion, readTmuxVersion, type TmuxVersion } from '../../src/tmux/version.js';

function v(text: string): TmuxVersion {
  const parsed = parseTmuxVersion(text);
  if (!parsed) throw new Error(`did not parse: ${text}`);
  return parsed;
}

describe('parseTmuxVersion', () => {
  it.each([
    ['tmux 3.3a', 3, 3, '3.3a', false],
    ['tmux 3.4', 3, 4, '3.4', false],
    ['tmux 1.8', 1, 8, '1.8', false],
    ['tmux 2.6-rc2', 2, 6, '2.6-rc2', true],
    ['tmux 3.1-rc', 3, 1, '3.1-rc', true],
    ['tmux next-3.4', 3, 4, 'next-3.4', true],
    ['tmux 3.3a\n', 3, 3, '3.3a', false],
    ['3.5a', 3, 5, '3.5a', false],
  ])('%j -> %i.%i', (text, major, minor, label, isDevelopment) => {
    expect(parseTmuxVersion(text)).toEqual({ major, minor, label, isDevelopment });
  });

  it.each(['tmux master', 'tmux openbsd-6.8', 'tmux openbsd-7.5'])('%j ranks above every release', (text) => {
    const parsed = v(text);
    expect(parsed.isDevelopment).toBe(true);
    expect(parsed.label).toBe(text.slice(5));
    expect(compareTmuxVersion(parsed, v('tmux 99.9z'))).toBeGreaterThan(0);
    expect(() => checkTmuxVersion(parsed)).not.toThrow();
  });

  it.each(['', 'tmux', 'screen 4.09', 'tmux 3', 'tmux three.point.three', 'tmux 3.3 a'])('%j is not a version', (text) => {
    expect(parseTmuxVersion(text)).toBeNull();
  });
});

describe('compareTmuxVersion', () => {
  it('orders releases, letters, candidates and development builds', () => {
    const ordered = ['1.8', '2.4', '2.6-rc2', '2.6', '2.9', '2.9a', '3.3', '3.3a', 'next-3.4', '3.4', '3.10', 'master'];
    for (let i = 0; i < ordered.length; i++) {
      for (let j = 0; j < ordered.length; j++) {
        expect(Math.sign(compareTmuxVersion(v(ordered[i]!), v(ordered[j]!))), `${ordered[i]} vs ${ordered[j]}`).toBe(Math.sign(i - j));
      }
    }
  });
});

describe('checkTmuxVersion', () => {
  it.each(['tmux 3.0', 'tmux 3.0a', 'tmux 3.0-rc', 'tmux 3.3a', 'tmux next-3.0', 'tmux 3.7c', 'tmux master'])('accepts %j', (text) => {
    expect(() => checkTmuxVersion(v(text))).not.toThrow();
  });

  it.each([
    ['tmux 1.8', '1.8'],
    ['tmux 2.4', '2.4'],
    ['tmux 2.5', '2.5'],
    ['tmux 2.9a', '2.9a'],
    ['tmux next-2.9', 'next-2.9'],
  ])('refuses %j with the exact message', (text, label) => {
    expect(() => checkTmuxVersion(v(text))).toThrow(
      new Error(`tmux 3.0 or newer is required (send-keys -H, new-window -e), found ${label}`),
    );
  });
});

describe('readTmuxVersion', () => {
  it('reads the installed tmux', async () => {
    const version = await readTmuxVersion({ bin: 'tmux', socketArgs: [] });
    expect(version.major).toBeGreaterThanOrEqual(2);
    expect(() => checkTmuxVersion(version)).not.toThrow();
  });

  it('rejects when the binary cannot be run', async () => {
    await expect(readTmuxVersion({ bin: '/nonexistent/tmux', socketArgs: [] })).rejects.toThrow(/could not be run/);
  });
});
