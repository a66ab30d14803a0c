/**
 * A session's prompts as tmux keeps them (src/tmux/sessions/prompts-option.ts): the user option
 * `@tether-prompts`, one line of JSON. What reads back as prompts, and what reads as none (unset,
 * set by hand, cut, of another shape), from a value and from a real private tmux server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REMEMBERED_PROMPT_IDS } from '../../src/protocol/prompt.js';
import { SESSION_OPTIONS } from '../../src/tmux/layout.js';
import type { StoredPrompts } from '../../src/protocol/prompt.schemas.js';
import { decodePromptsOption, encodePromptsOption, readPromptsOption } from '../../src/tmux/sessions/prompts-option.js';
import { setUserOption } from '../../src/tmux/sessions/sessions.js';
import { privateTmux, type PrivateTmux } from '../helpers/tmux.js';

const AT = '2026-12-04T10:15:03.118Z';
const STORED: StoredPrompts = {
  v: 1,
  prompts: [
    {
      id: 'a1',
      text: 'fix it',
      by: 'my iPhone',
      status: 'failed',
      createdAt: AT,
      reason: 'the agent exited',
      decidedAt: AT,
    },
    { id: 'b2', text: 'line one\nline "two" ; #{session_name} $(touch x)', by: 'my iPhone', status: 'queued', createdAt: AT },
  ],
  older: [{ id: 'old-1', digest: '5.m3bicr', status: 'submitted', by: 'my iPad', createdAt: AT }],
};
const value = encodePromptsOption(STORED);
const shaped = (change: (o: Record<string, unknown>) => void): string => {
  const o = JSON.parse(value) as Record<string, unknown>;
  change(o);
  return JSON.stringify(o);
};
const first = (o: Record<string, unknown>) => (o.prompts as Record<string, unknown>[])[0]!;
const older = (o: Record<string, unknown>) => (o.older as Record<string, unknown>[])[0]!;

describe('decodePromptsOption', () => {
  it('reads back what was written, and a session with nothing kept yet', () => {
    expect(decodePromptsOption(value)).toEqual(STORED);
    expect(decodePromptsOption(encodePromptsOption({ v: 1, prompts: [], older: [] }))).toEqual({ v: 1, prompts: [], older: [] });
  });

  it.each([
    ['unset (null)', null],
    ['empty', ''],
    ['cut JSON', value.slice(0, value.length - 7)],
    ['cut to its first half', value.slice(0, value.length / 2)],
    ['JSON null', 'null'],
    ['a number', '42'],
    ['an array', '[]'],
    ['a string', '"queued"'],
    ['another version', shaped((o) => (o.v = 2))],
    ['without a version', shaped((o) => delete o.v)],
    ['without older', shaped((o) => delete o.older)],
    ['prompts not a list', shaped((o) => (o.prompts = {}))],
    ['a field of its own', shaped((o) => (o.extra = true))],
    ['a prompt without text', shaped((o) => delete first(o).text)],
    ['a prompt of an unknown status', shaped((o) => (first(o).status = 'sent'))],
    ['a prompt whose text is a number', shaped((o) => (first(o).text = 7))],
    ['an older id not of the id form', shaped((o) => (older(o).id = 'no spaces please'))],
    ['an older digest too long', shaped((o) => (older(o).digest = 'x'.repeat(33)))],
    ['an older prompt with its text', shaped((o) => (older(o).text = 'fix it'))],
    [
      `more than ${REMEMBERED_PROMPT_IDS} older ids`,
      shaped((o) => (o.older = Array.from({ length: REMEMBERED_PROMPT_IDS + 1 }, (_, i) => ({ ...older(o), id: `o${i}` })))),
    ],
  ])('reads %s as none', (_what, v) => {
    expect(decodePromptsOption(v)).toBeNull();
  });
});

describe('readPromptsOption, from a real tmux', () => {
  let tmux: PrivateTmux;
  beforeAll(async () => {
    tmux = await privateTmux();
    await tmux.tmux('new-session', '-d', '-s', 'w', 'cat');
  });
  afterAll(async () => {
    await tmux.cleanup();
  });

  it('reads none before anything is kept, then what was set, as it was set', async () => {
    expect(await readPromptsOption(tmux.cli, 'w')).toBeNull();
    await setUserOption(tmux.cli, 'w', SESSION_OPTIONS.prompts, value);
    expect(await readPromptsOption(tmux.cli, 'w')).toEqual(STORED);
    // No format was expanded, no command list split: tmux holds the value as written.
    expect((await tmux.tmux('show-options', '-v', '-t', '=w:', SESSION_OPTIONS.prompts)).replace(/\n$/, '')).toBe(value);
  });

  it('reads a value set by hand in another shape as none', async () => {
    await tmux.tmux('set-option', '-t', '=w:', SESSION_OPTIONS.prompts, '{"v":1,"prompts":[');
    expect(await readPromptsOption(tmux.cli, 'w')).toBeNull();
    await tmux.tmux('set-option', '-t', '=w:', SESSION_OPTIONS.prompts, 'queued');
    expect(await readPromptsOption(tmux.cli, 'w')).toBeNull();
  });

  it('says a session that is gone is not found', async () => {
    await expect(readPromptsOption(tmux.cli, 'gone')).rejects.toMatchObject({ code: 'session-not-found' });
  });
});
