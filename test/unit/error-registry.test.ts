/**
 * The error registry (src/errors.ts), its one table, the source and docs/api.md say the same:
 * every code tether throws has exactly one translation row and every row is thrown somewhere;
 * only the transports read the table; docs/api.md lists every code with its translation, every
 * HTTP error code with its status, every error-frame code and every close code.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLOSE_CODES, ERRORS, FRAME_ERRORS, HTTP_ERRORS, type Translation } from '../../src/errors.js';
import { ROOT } from '../helpers/daemon.js';

const api = readFileSync(join(ROOT, 'docs/api.md'), 'utf8');
const section = api.slice(api.indexOf('## Error codes'));
const rows: [string, Translation][] = Object.entries(ERRORS);

/** Every .ts file under src/, with its text. */
function sources(dir = join(ROOT, 'src')): { path: string; text: string }[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sources(path);
    return e.name.endsWith('.ts') ? [{ path: relative(ROOT, path), text: readFileSync(path, 'utf8') }] : [];
  });
}
const src = sources();

/** The first lines of a docs table that starts after `heading`, as arrays of cells. */
function tableAfter(heading: string): string[][] {
  const from = section.indexOf(heading);
  expect(from, heading).toBeGreaterThan(-1);
  const lines = section.slice(from).split('\n');
  const start = lines.findIndex((l) => l.startsWith('|'));
  const table: string[][] = [];
  for (const line of lines.slice(start)) {
    if (!line.startsWith('|')) break;
    table.push(
      line
        .split('|')
        .slice(1, -1)
        .map((c) => c.trim()),
    );
  }
  return table.slice(2);
}

describe('the one table', () => {
  it('gives every code exactly one row, and every row is thrown somewhere in src', () => {
    // A code is thrown where it is named as a DomainError's first argument, or as the code of a
    // helper that makes one (`fail('control-line-too-long', ...)`); the table's keys are unique by construction.
    const all = src.map((f) => f.text).join('\n');
    const thrown = new Set([...all.matchAll(/\(\s*'([a-z-]+)',\s*(?:`|'|\w)/g)].map((m) => m[1]!).filter((c) => c in ERRORS));
    const unthrown = rows.map(([code]) => code).filter((code) => !thrown.has(code) && code !== 'internal');
    expect(unthrown).toEqual([]);
    const named = new Set([...all.matchAll(/new DomainError\(\s*'([a-z-]+)'/g)].map((m) => m[1]!));
    expect([...named].filter((c) => !(c in ERRORS))).toEqual([]);
  });

  it('gives one HTTP error code one status, and internal rows the internal answer', () => {
    for (const [code, row] of rows) {
      expect(HTTP_ERRORS[row.http as keyof typeof HTTP_ERRORS], code).toBe(row.status);
      if (row.internal) expect([row.status, row.http], code).toEqual([500, 'internal-error']);
      if (row.close) expect(Object.values(CLOSE_CODES), code).toContain(row.close.code);
    }
  });

  it('is read by the transports only: no other module names it or builds an error frame', () => {
    const readers = src.filter((f) => /\bERRORS\b/.test(f.text.replace(/HTTP_ERRORS|FRAME_ERRORS/g, ''))).map((f) => f.path);
    expect(readers.filter((p) => p !== 'src/errors.ts' && !p.startsWith('src/transport/')).sort()).toEqual([]);
  });

  it('is the one way to fail: the Error subclasses left are the few that carry more than a code', () => {
    const classes = src.flatMap((f) => [...f.text.matchAll(/class (\w+) extends (\w*Error)\b/g)].map((m) => `${m[1]} < ${m[2]}`));
    expect(classes.sort()).toEqual(
      [
        'CliError < Error',
        'ConfigError < Error',
        'DomainError < Error',
        'PinMismatchError < Error',
        'PromptError < Error',
        'RestoreError < Error',
        'TmuxCommandError < Error',
        'WorkbenchError < Error',
      ].sort(),
    );
  });
});

describe('error registry and docs/api.md', () => {
  it('lists every code with its translation, and no other', () => {
    const documented = tableAfter('| code | status | HTTP `error` |');
    const expected = rows
      .filter(([, row]) => !row.internal)
      .map(([code, row]) => [
        `\`${code}\``,
        String(row.status),
        `\`${row.http}\``,
        row.frame ? `\`${row.frame}\`` : '—',
        row.close ? String(row.close.code) : '—',
      ]);
    expect(documented).toEqual(expected);
    const internal = section.slice(section.indexOf('Internal codes'));
    const listed = [...internal.slice(0, internal.indexOf('\n\n')).matchAll(/`([a-z-]+)`/g)].map((m) => m[1]);
    expect(listed.sort()).toEqual(
      rows
        .filter(([, row]) => row.internal)
        .map(([code]) => code)
        .sort(),
    );
  });

  it('lists every HTTP error code with its status, and no other', () => {
    const rows = [...section.matchAll(/^\| (\d{3}) \| `([a-z-]+)` \|/gm)].map((m) => [m[2], Number(m[1])] as const);
    expect(Object.fromEntries(rows)).toEqual(HTTP_ERRORS);
  });

  it('lists every error-frame code, and no other', () => {
    const frames = section.slice(section.indexOf('WebSocket `error` frame codes'));
    const codes = [...frames.matchAll(/^\| `([a-z-]+)` \| [^`]/gm)].map((m) => m[1]);
    expect([...codes].sort()).toEqual([...FRAME_ERRORS].sort());
  });

  it('names every close code tether sends', () => {
    const line = section.slice(section.indexOf('Close codes:'));
    const documented = [...line.slice(0, line.indexOf('\n\n')).matchAll(/\b(\d{4})\b/g)].map((m) => Number(m[1]));
    expect([...documented].sort()).toEqual(Object.values(CLOSE_CODES).sort());
  });
});
