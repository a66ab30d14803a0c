/**
 * Transition coverage for the model tests (docs/testing.md "Transition coverage").
 *
 * The transitions of a machine are read from its definition (scripts/charts.ts `transitionsOf`:
 * every state node's `on`, `after`, invoke `onDone`/`onError` and `always`, each guarded
 * alternative on its own), never listed by hand: a transition added to a machine is uncovered
 * until a model test makes the real system take it.
 *
 * What counts as covered is what the real actors did while the tests ran: xstate's inspection
 * reports every microstep with the transition definitions it took (`@xstate.microstep`,
 * `_transitions`); each is mapped back to its source state node, event and place among that
 * event's alternatives. Real actors take `coverage.inspect` as their `inspect` option; code that
 * runs a machine without an inspectable actor (xstate's pure `transition`, a throwaway actor)
 * is observed with `coverage.watch(machine)`, which reports the same microsteps.
 *
 * `transitionCoveringPaths` plans, with xstate/graph, a path for every transition the model
 * can take: the shortest path to a state, then an event whose transition no earlier path took.
 */
import { createActor, type AnyActorLogic, type AnyActorScope, type EventObject, type InspectionEvent, type Snapshot } from 'xstate';
import { afterAll, beforeAll } from 'vitest';
import { getAdjacencyMap, getShortestPaths, type TraversalOptions } from 'xstate/graph';
import { transitionKey, transitionsOf, type Row } from '../../scripts/charts.js';

/** What a taken transition (an entry of `_transitions`) tells about itself. */
interface TakenTransition {
  readonly eventType: string;
  readonly source: {
    readonly id: string;
    readonly machine: { readonly id: string };
    readonly transitions: ReadonlyMap<string, readonly unknown[]>;
    readonly always?: readonly unknown[];
  };
}

/** The key (`Row.key`) of a transition definition taken by a running machine. */
export function takenKey(t: TakenTransition): string {
  const list = t.eventType === '' ? (t.source.always ?? []) : (t.source.transitions.get(t.eventType) ?? []);
  return transitionKey(t.source.id, t.eventType, list.indexOf(t));
}

/** The transitions a microstep took, as keys, with the id of their machine. */
function takenIn(ev: InspectionEvent): { machine: string; key: string }[] {
  if (ev.type !== '@xstate.microstep') return [];
  return (ev._transitions as unknown as TakenTransition[]).map((t) => ({ machine: t.source.machine.id, key: takenKey(t) }));
}

/** A transition as people read it: `source --event [guard]--> target`. */
export const describeTransition = (r: Row): string => `${r.from} --${r.event}${r.guard ? ` [${r.guard}]` : ''}--> ${r.to}`;

/** A machine as xstate makes it (its state nodes are walked by `transitionsOf`). */
type MachineLike = { readonly id: string; readonly root: object };
const rowsOf = (machine: MachineLike): Row[] => transitionsOf(machine as unknown as Parameters<typeof transitionsOf>[0]);

export class TransitionCoverage {
  /** Every transition of the machine, from its definition. */
  readonly all: readonly Row[];
  private readonly known: ReadonlySet<string>;
  private readonly taken = new Set<string>();

  constructor(readonly machine: MachineLike) {
    this.all = rowsOf(machine);
    this.known = new Set(this.all.map((r) => r.key));
  }

  /** The `inspect` option for a real actor (or actor system) that runs this machine. */
  readonly inspect = (ev: InspectionEvent): void => {
    for (const { machine, key } of takenIn(ev)) if (machine === this.machine.id && this.known.has(key)) this.taken.add(key);
  };

  /**
   * Observes every transition computed by this machine object (an actor's, a throwaway
   * actor's, or xstate's pure `transition`), for code that runs it without an actor the test
   * can give `inspect`. Returns the function that stops observing.
   */
  watch(machine: { transition: (snapshot: never, event: never, scope: AnyActorScope) => unknown }): () => void {
    const original = machine.transition;
    const inspect = this.inspect;
    machine.transition = function (this: unknown, snapshot: never, event: never, scope: AnyActorScope) {
      const system = scope.system as unknown as { _sendInspectionEvent: (ev: InspectionEvent) => void };
      const send = system._sendInspectionEvent;
      system._sendInspectionEvent = (ev) => {
        send(ev);
        inspect(ev);
      };
      try {
        return original.call(this, snapshot, event, scope);
      } finally {
        system._sendInspectionEvent = send;
      }
    };
    return () => {
      machine.transition = original;
    };
  }

  /** The transitions the real system has taken so far. */
  covered(): Row[] {
    return this.all.filter((r) => this.taken.has(r.key));
  }

  uncovered(): Row[] {
    return this.all.filter((r) => !this.taken.has(r.key));
  }

  /** `session: 16/16 transitions`. */
  summary(): string {
    return `${this.machine.id}: ${this.covered().length}/${this.all.length} transitions`;
  }

  /** The summary, and each transition no test made the real system take. */
  report(): string {
    const missing = this.uncovered();
    if (missing.length === 0) return this.summary();
    return [
      `${this.summary()}; never taken by the real system (drive each in this model test):`,
      ...missing.map((r) => `  ${describeTransition(r)}`),
    ].join('\n');
  }
}

/** What to do about transitions no planned path takes. */
/** Watches `machine` (see `TransitionCoverage.watch`) for the tests of the enclosing describe. */
export function watchCoverageDuring(coverage: TransitionCoverage, machine: Parameters<TransitionCoverage['watch']>[0]): void {
  let unwatch = (): void => undefined;
  beforeAll(() => {
    unwatch = coverage.watch(machine);
  });
  afterAll(() => unwatch());
}

export const UNPLANNED =
  "no path of the model takes these transitions: add the event that takes each to this test's model events, and the way to produce it for real to its switch";

export interface PlannedPath<TSnapshot, TEvent> {
  readonly steps: { state: TSnapshot; event: TEvent }[];
  readonly state: TSnapshot;
  /** The keys of the transitions this path was planned for (its last event takes them). */
  readonly covers: readonly string[];
}

/**
 * Paths that together take every transition the model can take: for each state (shortest
 * path first) and each event, the path to it plus the event, when that event takes a
 * transition of `machineId` that no earlier path took. `serializeState` must depend on the
 * snapshot only. `logic` may wrap the machine (a model event standing for several of the
 * machine's events); the transitions are those its `transition` makes the machine take.
 * Also returns the transitions no path can take (to report, not to drive).
 */
export function transitionCoveringPaths<TSnapshot extends Snapshot<unknown>, TEvent extends EventObject, TInput>(
  logic: AnyActorLogic,
  options: TraversalOptions<TSnapshot, TEvent, TInput> & { serializeState: (s: TSnapshot) => string },
  machine: MachineLike,
): { paths: PlannedPath<TSnapshot, TEvent>[]; unplanned: Row[] } {
  const all = rowsOf(machine);
  const known = new Set(all.map((r) => r.key));
  let taken: string[] = [];
  const probe = createActor(logic, {
    ...(options.input !== undefined ? { input: options.input } : {}),
    inspect: (ev) => {
      for (const t of takenIn(ev)) if (t.machine === machine.id) taken.push(t.key);
    },
  });
  const scope = {
    self: probe,
    system: probe.system,
    id: '',
    sessionId: '',
    logger: () => undefined,
    defer: () => undefined,
    stopChild: () => undefined,
    emit: () => undefined,
    actionExecutor: () => undefined,
  } as unknown as AnyActorScope;
  const takenBy = (state: TSnapshot, event: TEvent): string[] => {
    taken = [];
    logic.transition(state, event, scope);
    return taken.filter((k) => known.has(k));
  };

  const graphOptions = options as unknown as Parameters<typeof getShortestPaths>[1];
  const toStates = (getShortestPaths(logic, graphOptions) as unknown as PlannedPath<TSnapshot, TEvent>[])
    .slice()
    .sort((a, b) => a.steps.length - b.steps.length);
  const adjacency = getAdjacencyMap(logic as Parameters<typeof getAdjacencyMap>[0], graphOptions as never) as unknown as Record<
    string,
    { transitions: Record<string, { state: TSnapshot; event: TEvent }> }
  >;
  const planned = new Set<string>();
  const paths: PlannedPath<TSnapshot, TEvent>[] = [];
  for (const to of toStates) {
    for (const next of Object.values(adjacency[options.serializeState(to.state)]?.transitions ?? {})) {
      const fresh = takenBy(to.state, next.event).filter((k) => !planned.has(k));
      if (fresh.length === 0) continue;
      for (const k of fresh) planned.add(k);
      paths.push({ steps: [...to.steps, { state: next.state, event: next.event }], state: next.state, covers: fresh });
    }
  }
  return { paths, unplanned: all.filter((r) => !planned.has(r.key)) };
}
