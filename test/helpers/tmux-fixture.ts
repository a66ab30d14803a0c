/**
 * A private tmux server for the tests of a `describe` (made before them, removed after them) or
 * for each of them (`each`), alone or with one pane: the set-up tests on tmux alone share, in one place.
 */
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import { privateTmux, type PrivateTmux } from './tmux.js';

/** Registers the hooks; the value stands for the server of the moment (a new one per test with `each`). */
export function usePrivateTmux(opts: { each?: boolean } = {}): PrivateTmux {
  let current: PrivateTmux | null = null;
  const now = (): PrivateTmux => {
    if (current === null) throw new Error('the private tmux server is used before its hook ran');
    return current;
  };
  (opts.each ? beforeEach : beforeAll)(async () => {
    current = await privateTmux();
  });
  (opts.each ? afterEach : afterAll)(async () => {
    await current?.cleanup();
    current = null;
  });
  return {
    get dir() {
      return now().dir;
    },
    get socket() {
      return now().socket;
    },
    get target() {
      return now().target;
    },
    get cli() {
      return now().cli;
    },
    tmux: (...args) => now().tmux(...args),
    capture: (target) => now().capture(target),
    cleanup: () => now().cleanup(),
  };
}

/**
 * A private tmux server for a `describe` (as `usePrivateTmux`) with one session `name` running
 * `cat`: a real pane for tests of what runs inside one. `pane` is its id once the hooks ran.
 */
export function usePaneOnPrivateTmux(name: string): { readonly tmux: PrivateTmux; readonly pane: string } {
  const tmux = usePrivateTmux();
  let pane: string | null = null;
  beforeAll(async () => {
    await tmux.tmux('new-session', '-d', '-s', name, '--', 'cat');
    pane = (await tmux.tmux('display-message', '-p', '-t', `=${name}:`, '#{pane_id}')).trim();
  });
  return {
    tmux,
    get pane() {
      if (pane === null) throw new Error('the pane is used before its hook ran');
      return pane;
    },
  };
}
