/**
 * The error registry (src/errors.ts) and docs/api.md say the same: every HTTP error code with its
 * status, every WebSocket error-frame code, every close code, and each domain refusal names codes
 * that exist on both transports.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLOSE_CODES, DOMAIN_ERRORS, FRAME_ERRORS, HTTP_ERRORS } from '../../src/errors.js';
import { ROOT } from '../helpers/daemon.js';

const api = readFileSync(join(ROOT, 'docs/api.md'), 'utf8');
const section = api.slice(api.indexOf('## Error codes'));

describe('error registry and docs/api.md', () => {
  it('lists every HTTP error code with its status, and no other', () => {
    const rows = [...section.matchAll(/^\| (\d{3}) \| `([a-z-]+)` \|/gm)].map((m) => [m[2], Number(m[1])] as const);
    expect(Object.fromEntries(rows)).toEqual(HTTP_ERRORS);
  });

  it('lists every error-frame code, and no other', () => {
    const frames = section.slice(section.indexOf('WebSocket `error` frame codes'));
    const codes = [...frames.matchAll(/^\| `([a-z-]+)` \|/gm)].map((m) => m[1]);
    expect([...codes].sort()).toEqual([...FRAME_ERRORS].sort());
  });

  it('names every close code tether sends', () => {
    const line = section.slice(section.indexOf('Close codes:'));
    const documented = [...line.slice(0, line.indexOf('\n\n')).matchAll(/\b(\d{4})\b/g)].map((m) => Number(m[1]));
    expect([...documented].sort()).toEqual(Object.values(CLOSE_CODES).sort());
  });

  it('maps each domain refusal to registered codes on both transports', () => {
    for (const [code, to] of Object.entries(DOMAIN_ERRORS)) {
      expect(HTTP_ERRORS, code).toHaveProperty(to.http);
      expect(FRAME_ERRORS, code).toContain(to.frame);
    }
  });
});
