/**
 * The operator view's source: XState inspection events from every actor system of the daemon
 * (the sidecar root with its session actors and every other machine the daemon runs: stream
 * clients, agent states, disk buffers, prompts, continues, usage warnings, Live Activities),
 * turned into an actor tree and fanned out to whoever watches `/ops`. An actor that starts and
 * stops between two flushes (a resume answered in a few ms) is still told to a watcher: its last
 * state, then its `gone`.
 *
 * Invariants: the `inspect` callback does O(1) work and never serializes, never sends and never
 * waits: with nobody watching it only notes which actors exist (and forgets the ones that
 * stopped); while someone watches it marks actors dirty and queues event names (and reads the
 * last state of an actor stopping unseen, a few fields). Snapshots are
 * read and encoded in a periodic flush, latest state wins; a watcher whose socket is behind is
 * skipped (its states keep coalescing, its event queue is capped at OPS_MAX_QUEUED and drops
 * the oldest), so a slow viewer costs bounded memory and never slows the stream.
 */
import type { InspectionEvent } from 'xstate';

/** What the inspector reads of an actor (its parent is XState's own field). */
interface AnyActorRef {
  readonly id: string;
  readonly logic?: unknown;
  readonly _parent?: AnyActorRef;
  getSnapshot(): unknown;
}

/** Events queued per watcher between flushes; past it the oldest are dropped (and counted). */
export const OPS_MAX_QUEUED = 256;
/** Recent events remembered per actor while someone watches (a new viewer gets them). */
export const OPS_RECENT_EVENTS = 20;
/** How often watchers get what changed. */
export const OPS_FLUSH_MS = 100;
/** Actors remembered at most; past it the stopped ones are swept first, then new ones are not shown. */
export const OPS_MAX_ACTORS = 10_000;

/** One actor as the operator sees it. */
export interface OpsActorView {
  /** A readable, unique path: `sidecar`, `session:pi-main`, `session:pi-main/client#3`. */
  readonly id: string;
  readonly parent: string | null;
  /** The machine's id (its chart in docs/statecharts), or null for a callback/promise actor. */
  readonly machine: string | null;
  readonly value: unknown;
  /** The ids of the active state nodes (`session.running.pane.alive`), as the charts name them. */
  readonly active: readonly string[];
  readonly status: string;
}

export interface OpsEvent {
  readonly actor: string;
  readonly event: string;
  /** Unix epoch milliseconds. */
  readonly at: number;
}

/** What a watcher receives, in batches. */
export type OpsMessage =
  | { readonly type: 'actors'; readonly actors: readonly OpsActorView[]; readonly recent: readonly OpsEvent[] }
  | { readonly type: 'state'; readonly actor: OpsActorView }
  | { readonly type: 'gone'; readonly actor: string }
  | { readonly type: 'event'; readonly actor: string; readonly event: string; readonly at: number }
  | { readonly type: 'dropped'; readonly count: number };

/** Where a watcher's batches go. */
export interface OpsSink {
  /** True when the sink cannot take more now (its socket's send buffer is full). */
  behind(): boolean;
  send(batch: readonly OpsMessage[]): void;
}

/** Where a separate actor system sits in the tree. */
export interface OpsPlacement {
  /** The label of the system's root actor (`client#3`, `agent`). */
  readonly label: string;
  /** The tree id of the actor it belongs under (`session:pi-main`). */
  readonly parent?: string;
}

interface Known {
  readonly id: string;
  readonly parent: string | null;
  readonly ref: AnyActorRef;
}

interface Watcher {
  readonly sink: OpsSink;
  readonly dirty: Set<string>;
  readonly gone: Set<string>;
  /** The last state of an actor that stopped before the watcher was told of it: sent before its `gone`. */
  readonly finals: Map<string, OpsActorView>;
  events: OpsEvent[];
  dropped: number;
  needsTree: boolean;
}

/** The active state node ids of a machine snapshot value, parents first. */
export function activeStateIds(machineId: string, value: unknown): string[] {
  const out: string[] = [];
  const walk = (prefix: string, v: unknown): void => {
    if (typeof v === 'string') out.push(`${prefix}.${v}`);
    else if (v && typeof v === 'object') {
      for (const [k, child] of Object.entries(v as Record<string, unknown>)) {
        out.push(`${prefix}.${k}`);
        walk(`${prefix}.${k}`, child);
      }
    }
  };
  walk(machineId, value);
  return out;
}

const machineIdOf = (ref: AnyActorRef): string | null => {
  const logic = ref.logic as { id?: unknown; root?: unknown } | undefined;
  return logic && typeof logic.id === 'string' && logic.root !== undefined ? logic.id : null;
};

export class OpsInspector {
  private readonly byRef = new WeakMap<AnyActorRef, Known>();
  private readonly byId = new Map<string, Known>();
  private readonly recent = new Map<string, OpsEvent[]>();
  private readonly watchers = new Set<Watcher>();
  private timer: NodeJS.Timeout | null = null;
  private counter = 0;

  constructor(private readonly now: () => number = Date.now) {}

  /**
   * The `inspect` option for one actor system's root. The sidecar's root is `sidecar`; a
   * separate system (a stream client, an agent-state actor) is placed under an actor of the tree.
   */
  observer(place: OpsPlacement = { label: 'sidecar' }): (ev: InspectionEvent) => void {
    return (ev) => this.inspect(ev, place);
  }

  /** The tree as it is now. */
  actors(): OpsActorView[] {
    const out: OpsActorView[] = [];
    for (const k of this.byId.values()) {
      const view = this.view(k);
      if (view.status === 'active') out.push(view);
    }
    return out;
  }

  /** Starts sending to `sink`: the whole tree first, then what changes. Returns the stop. */
  watch(sink: OpsSink): () => void {
    const w: Watcher = { sink, dirty: new Set(), gone: new Set(), finals: new Map(), events: [], dropped: 0, needsTree: true };
    this.watchers.add(w);
    if (!this.timer) {
      this.timer = setInterval(() => this.flush(), OPS_FLUSH_MS);
      this.timer.unref();
    }
    return () => {
      this.watchers.delete(w);
      if (this.watchers.size === 0) {
        if (this.timer) clearInterval(this.timer);
        this.timer = null;
        this.recent.clear();
      }
    };
  }

  /** Number of viewers connected. */
  get watching(): number {
    return this.watchers.size;
  }

  private inspect(ev: InspectionEvent, place: OpsPlacement): void {
    const ref = ev.actorRef as unknown as AnyActorRef;
    if (ev.type === '@xstate.actor') {
      this.register(ref, place);
      return;
    }
    // Only snapshots matter to an unwatched inspector (to forget stopped actors).
    if (ev.type !== '@xstate.snapshot' && (ev.type !== '@xstate.event' || this.watchers.size === 0)) return;
    const known = this.byRef.get(ref);
    if (!known) return;
    if (ev.type === '@xstate.snapshot') {
      const status = (ev.snapshot as { status?: string }).status;
      if (status !== 'active' || ev.event.type === 'xstate.stop') {
        this.byId.delete(known.id);
        this.recent.delete(known.id);
        for (const w of this.watchers) {
          // An actor that ran between two flushes (a resume answered in a few ms) is still shown: its last state, then gone.
          if (w.dirty.delete(known.id)) w.finals.set(known.id, this.view(known));
          w.gone.add(known.id);
        }
        return;
      }
      for (const w of this.watchers) w.dirty.add(known.id);
      return;
    }
    const e: OpsEvent = { actor: known.id, event: ev.event.type, at: this.now() };
    let list = this.recent.get(known.id);
    if (!list) this.recent.set(known.id, (list = []));
    list.push(e);
    if (list.length > OPS_RECENT_EVENTS) list.shift();
    for (const w of this.watchers) {
      w.events.push(e);
      if (w.events.length > OPS_MAX_QUEUED) {
        w.events.shift();
        w.dropped++;
      }
    }
  }

  private register(ref: AnyActorRef, place: OpsPlacement): void {
    if (this.byId.size >= OPS_MAX_ACTORS) this.sweep();
    if (this.byId.size >= OPS_MAX_ACTORS) return;
    const parentRef = ref._parent;
    const parentKnown = parentRef ? this.byRef.get(parentRef) : undefined;
    let id: string;
    let parent: string | null;
    if (parentKnown) {
      parent = parentKnown.id;
      // The sidecar's children are named by their own ids (`session:pi-main`).
      id = parentKnown.parent === null && parentKnown.id === 'sidecar' ? ref.id : `${parentKnown.id}/${ref.id}`;
    } else {
      parent = place.parent ?? null;
      // Under the sidecar, actors are named by their own label (`diskBuffer`), as its children are.
      id = parent === null || parent === 'sidecar' ? place.label : `${parent}/${place.label}`;
    }
    if (this.byId.has(id)) id = `${id}~${++this.counter}`;
    const k: Known = { id, parent, ref };
    this.byRef.set(ref, k);
    this.byId.set(id, k);
    for (const w of this.watchers) w.dirty.add(id);
  }

  /** Forgets actors that stopped without telling (a root stopped before it started). */
  private sweep(): void {
    for (const [id, k] of this.byId) if ((k.ref.getSnapshot() as { status?: string }).status !== 'active') this.byId.delete(id);
  }

  private view(k: Known): OpsActorView {
    const snap = k.ref.getSnapshot() as { status?: string; value?: unknown };
    const machine = machineIdOf(k.ref);
    const value = snap.value ?? null;
    return {
      id: k.id,
      parent: k.parent,
      machine,
      value,
      active: machine ? activeStateIds(machine, value) : [],
      status: snap.status ?? 'active',
    };
  }

  private flush(): void {
    for (const w of this.watchers) {
      if (w.sink.behind()) continue;
      const batch: OpsMessage[] = [];
      if (w.needsTree) {
        w.needsTree = false;
        w.dirty.clear();
        w.gone.clear();
        w.finals.clear();
        w.events = [];
        const recent = [...this.recent.values()].flat().sort((a, b) => a.at - b.at);
        batch.push({ type: 'actors', actors: this.actors(), recent });
      }
      for (const actor of w.finals.values()) batch.push({ type: 'state', actor });
      w.finals.clear();
      for (const id of w.gone) batch.push({ type: 'gone', actor: id });
      w.gone.clear();
      for (const id of w.dirty) {
        const k = this.byId.get(id);
        if (k) batch.push({ type: 'state', actor: this.view(k) });
      }
      w.dirty.clear();
      if (w.dropped > 0) batch.push({ type: 'dropped', count: w.dropped });
      w.dropped = 0;
      for (const e of w.events) batch.push({ type: 'event', ...e });
      w.events = [];
      if (batch.length > 0) w.sink.send(batch);
    }
  }
}
