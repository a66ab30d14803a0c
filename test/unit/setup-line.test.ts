/**
 * The README's set-up line and CI's install step name the same Debian packages: a package that
 * `npm test` needs but the README forgets is what a new user meets first (a clean clone failing
 * on a missing browser), and CI would hide it by installing it anyway.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const root = new URL('../../', import.meta.url);
const read = (path: string) => readFileSync(new URL(path, root), 'utf8');

/** The packages of the README's `apt-get install` line. */
function readmePackages(): string[] {
  const line = read('README.md')
    .split('\n')
    .find((l) => /apt-get install/.test(l));
  if (!line) throw new Error('README.md has no apt-get install line');
  return line
    .replace(/#.*$/, '')
    .split(/\s+/)
    .filter((w) => w && !w.startsWith('-') && !['sudo', 'apt-get', 'install'].includes(w))
    .sort();
}

/** The packages .ci/run installs when missing (`need+=(name)`). */
function ciPackages(): string[] {
  return [...read('.ci/run').matchAll(/need\+=\(([a-z0-9.+-]+)\)/g)].map((m) => m[1] as string).sort();
}

describe('set-up line', () => {
  it('the README names every Debian package .ci/run installs, and nothing else', () => {
    const ci = ciPackages();
    expect(ci.length).toBeGreaterThan(0);
    expect(readmePackages()).toEqual(ci);
  });
});
