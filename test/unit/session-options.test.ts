/**
 * The store of tether's options per session (src/tmux/sessions/session-options.ts): what a request reads
 * instead of running tmux. Pure: the reads from tmux are what the test says they found.
 */
import { describe, expect, it } from 'vitest';
import { SessionOptionStore, sessionKey, type FixedOptions } from '../../src/tmux/sessions/session-options.js';

const fixed = (agent: string): FixedOptions => ({
  createdAt: '2026-11-26T10:00:00.000Z',
  project: null,
  cwd: '/w',
  agent,
  worktree: null,
});

describe('SessionOptionStore', () => {
  it('holds what a read found, for the session the last listing named', () => {
    const store = new SessionOptionStore();
    const key = sessionKey(100, '$1', 1000);
    expect(store.known('a')).toBeNull();
    store.reconcile([{ name: 'a', key }]);
    store.filled(key, { fixed: fixed('default'), description: 'fix the tests' }, store.writesTo(key));
    expect(store.known('a')).toEqual({ fixed: fixed('default'), description: 'fix the tests' });
    // The options set once are kept as first read: a later read does not replace them.
    store.filled(key, { fixed: fixed('codex') }, store.writesTo(key));
    expect(store.fixed(key)?.agent).toBe('default');
  });

  it('tells its listeners of a description a read found changed, not of one unchanged or written by tether', () => {
    const store = new SessionOptionStore();
    const key = sessionKey(100, '$1', 1000);
    const told: string[] = [];
    store.onDescriptionRead((name) => told.push(name));
    store.reconcile([{ name: 'a', key }]);
    store.filled(key, { fixed: fixed('default'), description: 'first' }, store.writesTo(key));
    store.filled(key, { description: 'first' }, store.writesTo(key));
    store.describedAs('a', 'by tether');
    expect(told).toEqual([]);
    store.filled(key, { description: 'set by hand' }, store.writesTo(key));
    expect(told).toEqual(['a']);
  });

  it('a read begun before a write leaves what the write set', () => {
    const store = new SessionOptionStore();
    const key = sessionKey(100, '$1', 1000);
    store.reconcile([{ name: 'a', key }]);
    const before = store.writesTo(key);
    store.describedAs('a', 'written by PATCH');
    store.filled(key, { fixed: fixed('default'), description: 'read before the write' }, before);
    expect(store.known('a')?.description).toBe('written by PATCH');
    // A read begun after it is taken (a value set by hand in tmux shows at the next scan).
    store.filled(key, { description: 'set by hand' }, store.writesTo(key));
    expect(store.known('a')?.description).toBe('set by hand');
    store.describedAs('a', null);
    expect(store.known('a')?.description).toBeNull();
  });

  it('a session made again under the same name is a new entry; one gone from the listing is dropped', () => {
    const store = new SessionOptionStore();
    const first = sessionKey(100, '$1', 1000);
    store.reconcile([{ name: 'a', key: first }]);
    store.filled(first, { fixed: fixed('default'), description: 'old' }, 0);
    const again = sessionKey(100, '$2', 1005);
    store.reconcile([{ name: 'a', key: again }]);
    expect(store.fixed(first)).toBeNull();
    expect(store.known('a')).toBeNull();
    expect(store.keyOf('a')).toBe(again);
    // A read that ends after its session left the listing keeps nothing.
    store.reconcile([]);
    store.filled(again, { fixed: fixed('default'), description: 'late' }, 0);
    expect(store.fixed(again)).toBeNull();
  });

  it('forgets a session tether killed at once, and a description written before any listing waits for a read', () => {
    const store = new SessionOptionStore();
    const key = sessionKey(100, '$1', 1000);
    store.describedAs('a', 'before listing');
    expect(store.known('a')).toBeNull();
    store.reconcile([{ name: 'a', key }]);
    store.filled(key, { fixed: fixed('default'), description: 'x' }, 0);
    store.forget('a');
    expect(store.known('a')).toBeNull();
    expect(store.keyOf('a')).toBeUndefined();
    expect(store.fixed(key)).toBeNull();
  });

  it('holds what tether set on a session it made, with no listing, and a listing asked before the make keeps it', () => {
    const store = new SessionOptionStore();
    const old = sessionKey(100, '$1', 1000);
    store.reconcile([{ name: 'old', key: old }]);
    const asked = store.mark();
    const key = sessionKey(100, '$2', 1005);
    store.made('new', key, { fixed: fixed('codex'), description: null });
    expect(store.known('new')).toEqual({ fixed: fixed('codex'), description: null });
    // The listing asked tmux before the session existed: it does not drop what was made since.
    store.reconcile([{ name: 'old', key: old }], asked);
    expect(store.known('new')?.fixed.agent).toBe('codex');
    // One asked after the make that does not hold it (killed by hand meanwhile) does.
    store.reconcile([{ name: 'old', key: old }], store.mark());
    expect(store.known('new')).toBeNull();
    expect(store.fixed(key)).toBeNull();
  });

  it('tells a reader what will fill a session: a read under way, or the session being made', async () => {
    const store = new SessionOptionStore();
    const key = sessionKey(100, '$1', 1000);
    let finish = (): void => undefined;
    const make = new Promise<void>((resolve) => (finish = resolve));
    store.making('new', make);
    expect(store.pendingRead('new', undefined)).toBeDefined();
    expect(store.pendingRead('other', undefined)).toBeUndefined();
    finish();
    await store.pendingRead('new', undefined);
    expect(store.pendingRead('new', undefined)).toBeUndefined();

    // A make that fails settles its waiters too.
    const failed = Promise.reject(new Error('duplicate session'));
    store.making('dup', failed);
    await expect(store.pendingRead('dup', undefined)).resolves.toBeUndefined();

    let done = (): void => undefined;
    const read = new Promise<void>((resolve) => (done = resolve));
    store.reading([key], read);
    expect(store.pendingRead('a', key)).toBe(read);
    done();
    await read;
    await Promise.resolve();
    expect(store.pendingRead('a', key)).toBeUndefined();
  });
});
