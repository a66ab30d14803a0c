/**
 * A session's worktree as its tmux option holds it (`@tether-worktree`): what tether writes reads
 * back the same, and a value set by hand that is not in tether's shape (its one schema,
 * src/protocol/worktree.schemas.ts) reads as no worktree.
 */
import { describe, expect, it } from 'vitest';
import { encodeWorktreeOption, parseWorktreeOption } from '../../src/tmux/sessions/sessions.js';

const worktree = { repo: '/r', branch: 'fix/a;#{x}', path: '/w/r-1/fix/a', base: 'a'.repeat(40), newBranch: true };

describe('the worktree option', () => {
  it('reads back what tether wrote, SHA-256 commits too', () => {
    expect(parseWorktreeOption(encodeWorktreeOption(worktree))).toEqual(worktree);
    const sha256 = { ...worktree, base: '0f'.repeat(32), newBranch: false };
    expect(parseWorktreeOption(encodeWorktreeOption(sha256))).toEqual(sha256);
  });

  it('writes only the worktree fields', () => {
    expect(JSON.parse(encodeWorktreeOption({ ...worktree, extra: 1 } as typeof worktree))).toEqual(worktree);
  });

  it('reads a value not in the shape tether writes as no worktree', () => {
    const { newBranch: _, ...noFlag } = worktree;
    for (const value of [
      '',
      'not json',
      'null',
      '[]',
      '"text"',
      JSON.stringify(noFlag),
      JSON.stringify({ ...worktree, branch: '' }),
      JSON.stringify({ ...worktree, repo: 7 }),
      JSON.stringify({ ...worktree, newBranch: 'yes' }),
      JSON.stringify({ ...worktree, base: 'HEAD' }),
      JSON.stringify({ ...worktree, base: 'A'.repeat(40) }),
      JSON.stringify({ ...worktree, extra: 1 }),
    ])
      expect(parseWorktreeOption(value), value).toBeNull();
    expect(parseWorktreeOption(null)).toBeNull();
  });
});
