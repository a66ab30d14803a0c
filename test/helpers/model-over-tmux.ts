/**
 * What the model tests of the services that type into a pane share (the continue and prompt
 * machines, docs/testing.md "Model tests"): one private tmux server for all the paths, kept up by
 * a session of its own while the paths' sessions come and go; the first test, that every
 * transition has a planned path; a test per planned path, in order; the last, that the real
 * service took every transition; and the service's pane, typing into that server.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { EventObject } from 'xstate';
import type { Row } from '../../scripts/charts.js';
import type { InputMessage } from '../../src/protocol/input.js';
import type { LinePane } from '../../src/service/prompts/typed-line.js';
import { privateTmux, type PrivateTmux } from './tmux.js';
import { describeTransition, UNPLANNED, type PlannedPath, type TransitionCoverage } from './transitions.js';

export interface ModelOverTmux<TEvent extends EventObject> {
  /** The planned paths (`transitionCoveringPaths`). */
  readonly covering: { readonly paths: readonly PlannedPath<unknown, TEvent>[]; readonly unplanned: readonly Row[] };
  readonly coverage: TransitionCoverage;
  /** An event as a test's name says it. */
  readonly label: (event: TEvent) => string;
  /** Readies the server before the session that keeps it up. */
  readonly prepare?: (tmux: PrivateTmux) => void;
  /** Produces a path's events for real (its initial event left out) on the server; `n` numbers the path. */
  readonly run: (tmux: PrivateTmux, steps: TEvent[], n: number) => Promise<void>;
}

/** The model test's tests, in the enclosing describe. */
export function modelTestsOverTmux<TEvent extends EventObject>(model: ModelOverTmux<TEvent>): void {
  let tmux: PrivateTmux;
  beforeAll(async () => {
    tmux = await privateTmux();
    model.prepare?.(tmux);
    // The server lives while the test's sessions come and go.
    await tmux.tmux('new-session', '-d', '-s', 'keep', 'cat');
  });
  afterAll(async () => {
    await tmux.cleanup();
  });

  it('plans a path for every transition', () => {
    expect(model.covering.unplanned.map(describeTransition), UNPLANNED).toEqual([]);
  });

  model.covering.paths.forEach((path, n) => {
    const steps = path.steps.map((s) => s.event).filter((e) => e.type !== 'xstate.init');
    it(steps.map(model.label).join(' -> '), () => model.run(tmux, steps, n));
  });

  it('the real service took every transition of the machine', () => {
    console.log(model.coverage.report());
    expect(model.coverage.uncovered().map(describeTransition), model.coverage.report()).toEqual([]);
  });
}

/**
 * The service's pane on the server (a `LinePane`): `keys` typed literally, a `key` by name, any
 * other input refused; while `gone()` the typing fails as on a pane that is gone. `typed` hears
 * each message typed. No stream follows these panes: the Enter follows the text after the
 * settle time.
 */
export function tmuxLinePane(tmux: PrivateTmux, gone: () => boolean, typed: (message: InputMessage) => void = () => undefined): LinePane {
  return {
    input: async (id, message) => {
      if (gone()) throw new Error('the pane is gone');
      if (message.type === 'keys') await tmux.tmux('send-keys', '-t', `=${id}:`, '-l', message.data);
      else if (message.type === 'key') await tmux.tmux('send-keys', '-t', `=${id}:`, message.name);
      else throw new Error(`not typed here: ${message.type}`);
      typed(message);
    },
    activity: () => null,
  };
}
