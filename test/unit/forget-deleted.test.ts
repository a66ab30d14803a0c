/**
 * A deleted session is forgotten by the services that kept something of it
 * (src/service/forget-deleted.ts); a session whose agent only exited is not.
 */
import { describe, expect, it } from 'vitest';
import { forgetDeleted } from '../../src/service/forget-deleted.js';

describe('forgetDeleted', () => {
  it('forgets a deleted session in every service, an exited one in none, and nothing once unsubscribed', () => {
    let listener: ((id: string, why: 'deleted' | 'exited') => void) | null = null;
    const onSessionEnded = (l: (id: string, why: 'deleted' | 'exited') => void) => {
      listener = l;
      return () => void (listener = null);
    };
    const continues: string[] = [];
    const resets: string[] = [];
    const unwatch = forgetDeleted(
      onSessionEnded,
      (id) => continues.push(id),
      (id) => resets.push(id),
    );
    const end = (id: string, why: 'deleted' | 'exited') => listener?.(id, why);
    end('w1', 'exited');
    end('w2', 'deleted');
    expect(continues).toEqual(['w2']);
    expect(resets).toEqual(['w2']);
    unwatch();
    expect(listener).toBeNull();
  });
});
