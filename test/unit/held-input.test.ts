/**
 * Input to a session whose tmux link is not up yet is held, in order, for a bounded time: the
 * pane link's `runWhenLinked` against a stand-in control client (the e2e test in rest.test.ts does
 * the same against a real daemon and tmux).
 */
import { describe, expect, it } from 'vitest';
import { PaneLink } from '../../src/tmux/pane/pane-link.js';
import { domainError } from '../helpers/domain-error.js';
import type { ControlClient } from '../../src/tmux/control/control-client.js';

function standInClient(lines: string[]): ControlClient {
  return { isClosed: false, run: (line: string) => (lines.push(line), Promise.resolve(Buffer.alloc(0))) } as unknown as ControlClient;
}

describe('input held until the link is up', () => {
  it('runs what waited, in arrival order, once the link comes up', async () => {
    const rt = new PaneLink('s');
    const lines: string[] = [];
    const sent = ['a', 'b', 'c'].map((x) => rt.runWhenLinked((pane) => [`${x}@${pane}`], 30_000));
    await new Promise((r) => setImmediate(r));
    expect(lines).toEqual([]);
    rt.attach(standInClient(lines), '%7');
    await Promise.all(sent);
    expect(lines).toEqual(['a@%7', 'b@%7', 'c@%7']);
  });

  it('refuses with tmux-unavailable once the bound passes, and later input still runs in order', async () => {
    const rt = new PaneLink('s');
    const lines: string[] = [];
    await expect(rt.runWhenLinked(() => ['never'], 50)).rejects.toThrow(domainError('tmux-unavailable'));
    const later = rt.runWhenLinked((pane) => [`later@${pane}`], 30_000);
    rt.attach(standInClient(lines), '%1');
    await later;
    expect(lines).toEqual(['later@%1']);
  });
});
