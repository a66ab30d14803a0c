/**
 * Model-based test of the disk-buffer machine (docs/contract.md "Disk-buffer writing"): every transition of
 * the machine (the shortest path to its source state, then the transition), generated with
 * xstate/graph, is carried out against the REAL disk buffer: real files in a temp dir, a real
 * pane stream, the watchdog with an injected free-space source. After each step the real
 * session buffer must be in the machine's state, and the file must show it: it grows while
 * writing, and does not while stopped or off. The transitions the real buffers take (their
 * actors, and the start-up judgement of idle files) are observed on the machine itself
 * (test/helpers/transitions.ts `watch`); they must take every one.
 */
import { readdirSync, statSync, truncateSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { getAdjacencyMap, getShortestPaths } from 'xstate/graph';
import { DiskBuffers } from '../../src/actors/disk-buffer.actor.js';
import { PaneStream } from '../../src/stream/pane-stream.js';
import { silentLogger } from '../../src/log.js';
import { diskBufferMachine, type DiskBufferEvent, type DiskBufferLimits } from '../../src/machines/disk-buffer.machine.js';
import { useTempDirs } from '../helpers/temp-dirs.js';
import { describeTransition, TransitionCoverage, transitionCoveringPaths, UNPLANNED, watchCoverageDuring } from '../helpers/transitions.js';

const LIMITS: DiskBufferLimits = {
  sessionCapBytes: 1000,
  globalCapBytes: 5000,
  minFreeBytes: 10_000,
  resumeMarginBytes: 1000,
  idleMs: 30 * 86_400_000,
};
/** Another session's file, left from earlier: it counts toward the global cap. */
const OTHER = 4500;
const PLENTY = 1_000_000;
/**
 * The other file's size that leaves this session room to reach its own cap under the global one
 * (with OTHER the global cap binds first: a write is cut at the global room).
 */
const ROOM_FOR_CAP = LIMITS.globalCapBytes - LIMITS.sessionCapBytes - 100;

/** The events of the model, each with what the harness does to make it true. */
const EVENTS = {
  startupFresh: { type: 'buffer.startup', idleMs: 0 },
  startupIdle: { type: 'buffer.startup', idleMs: LIMITS.idleMs + 1 },
  writtenToCap: { type: 'output.written', sessionBytes: LIMITS.sessionCapBytes, totalBytes: ROOM_FOR_CAP + LIMITS.sessionCapBytes },
  writtenPastGlobal: { type: 'output.written', sessionBytes: 10, totalBytes: LIMITS.globalCapBytes + 10 },
  checkLowDisk: { type: 'watchdog.check', freeBytes: LIMITS.minFreeBytes - 1, totalBytes: OTHER },
  checkOverGlobal: { type: 'watchdog.check', freeBytes: PLENTY, totalBytes: LIMITS.globalCapBytes + 1 },
  checkRoomAgain: { type: 'watchdog.check', freeBytes: PLENTY, totalBytes: 0 },
  deleted: { type: 'session.deleted' },
} satisfies Record<string, DiskBufferEvent>;
type EventName = keyof typeof EVENTS;
const nameOf = (e: DiskBufferEvent): EventName =>
  (Object.keys(EVENTS) as EventName[]).find((k) => JSON.stringify(EVENTS[k]) === JSON.stringify(e))!;

const model = diskBufferMachine;
const options = {
  events: Object.values(EVENTS) as DiskBufferEvent[],
  input: { limits: LIMITS },
  serializeState: (s: { value: unknown }) => JSON.stringify(s.value) as never,
};
const adjacency = getAdjacencyMap(model, options);
const shortest = getShortestPaths(model, options);

/** One test per transition: the shortest way to its source state, then the transition. */
const cases: { name: string; steps: { event: EventName; state: string }[] }[] = [];
interface AdjacencyNode {
  state: { value: unknown };
  transitions: Record<string, { state: { value: unknown } }>;
}
for (const [from, node] of Object.entries(adjacency as unknown as Record<string, AdjacencyNode>)) {
  const to = shortest.find((p) => JSON.stringify(p.state.value) === JSON.stringify(node.state.value))!;
  const prefix = to.steps.slice(1).map((s) => ({ event: nameOf(s.event), state: String(s.state.value) }));
  for (const [key, t] of Object.entries(node.transitions)) {
    const next = String(t.state.value);
    if (JSON.stringify(t.state.value) === from) continue;
    const event = nameOf(JSON.parse(key) as DiskBufferEvent);
    const steps = [...prefix, { event, state: next }];
    cases.push({ name: `${steps.map((s) => s.event).join(' -> ')} => ${next}`, steps });
  }
}

// And a path for every transition the model can take (test/helpers/transitions.ts), where the above has none.
const covering = transitionCoveringPaths<(typeof shortest)[number]['state'], DiskBufferEvent, { limits: DiskBufferLimits }>(
  model,
  options,
  diskBufferMachine,
);
for (const p of covering.paths) {
  const steps = p.steps.slice(1).map((s) => ({ event: nameOf(s.event), state: String(s.state.value) }));
  const name = `${steps.map((s) => s.event).join(' -> ')} => ${String(p.state.value)}`;
  if (!cases.some((c) => c.name === name)) cases.push({ name, steps });
}
const coverage = new TransitionCoverage(diskBufferMachine);

describe('disk-buffer machine, model-based, against the real disk buffer', () => {
  watchCoverageDuring(coverage, diskBufferMachine);
  const tempDir = useTempDirs('tether-buffer-model-');
  const running: DiskBuffers[] = [];
  // Registered after the temp dirs' clean-up, so it runs before it: the buffers stop first.
  afterEach(async () => {
    for (const b of running.splice(0)) await b.stop();
  });

  it('covers every transition, and so every row of its table', () => {
    expect(covering.unplanned.map(describeTransition), UNPLANNED).toEqual([]);
    const names = cases.map((c) => c.name).join('\n');
    for (const e of ['startupIdle', 'writtenToCap', 'writtenPastGlobal', 'checkLowDisk', 'checkRoomAgain', 'deleted'] as const)
      expect(names).toContain(e);
  });

  for (const c of cases) {
    it(c.name, async () => {
      const dir = tempDir();
      const other = join(dir, 'other.log');
      writeFileSync(other, Buffer.alloc(OTHER, 0x2e));
      let free = PLENTY;
      const buffers = new DiskBuffers({
        dir,
        limits: LIMITS,
        freeBytes: () => Promise.resolve(free),
        watchdogIntervalMs: 3_600_000,
        now: Date.now,
        log: silentLogger,
      });
      running.push(buffers);
      await buffers.start();
      const stream = new PaneStream({ ringBytes: 64 * 1024, now: Date.now });
      const log = join(dir, 's.log');
      const size = () => {
        try {
          return statSync(log).size;
        } catch {
          return null;
        }
      };
      const output = async (n: number) => {
        stream.append(Buffer.alloc(n, 0x61));
        stream.flush();
        await buffers.flush();
      };
      let attached = false;

      for (const step of c.steps) {
        switch (step.event) {
          case 'startupFresh':
            buffers.attach('s', stream);
            attached = true;
            break;
          case 'startupIdle': {
            writeFileSync(log, 'old output');
            const old = (Date.now() - LIMITS.idleMs - 86_400_000) / 1000;
            utimesSync(log, old, old);
            await buffers.cleanupIdle(new Map());
            break;
          }
          case 'writtenToCap':
            truncateSync(other, ROOM_FOR_CAP);
            await buffers.check(); // the watchdog measures the smaller total (no transition in writing)
            await output(LIMITS.sessionCapBytes - (size() ?? 0) + 50);
            break;
          case 'writtenPastGlobal':
            await output(LIMITS.globalCapBytes - OTHER - (size() ?? 0) + 10);
            // Cut at the room left: the files together hold exactly the global cap.
            expect(statSync(other).size + (size() ?? 0), 'the total after output past the global cap').toBe(LIMITS.globalCapBytes);
            break;
          case 'checkLowDisk':
            free = LIMITS.minFreeBytes - 1;
            await buffers.check();
            break;
          case 'checkOverGlobal':
            writeFileSync(other, Buffer.alloc(LIMITS.globalCapBytes + 1, 0x2e));
            await buffers.check();
            break;
          case 'checkRoomAgain':
            free = PLENTY;
            truncateSync(other, 0);
            truncateSync(log, 0);
            await buffers.check();
            break;
          case 'deleted':
            await buffers.delete('s');
            break;
        }

        // The state the machine promised, as the real buffer shows it.
        const real = attached ? (buffers.sessionState('s') ?? 'deleted') : size() === null ? 'deleted' : 'starting';
        expect(real, step.event).toBe(step.state);
        const before = size();
        if (attached && step.state !== 'deleted') await output(20);
        const after = size();
        if (step.state === 'writing') expect((after ?? 0) - (before ?? 0), 'writing grows the file').toBe(20);
        if (step.state === 'stopped') expect(after, 'a file at its cap is left untouched').toBe(LIMITS.sessionCapBytes);
        if (step.state === 'off') expect(after, 'nothing is written while off').toBe(before);
        if (step.state === 'deleted') expect(readdirSync(dir).filter((f) => f.startsWith('s.'))).toEqual([]);
        if (step.state === 'off') expect(buffers.status().state).toBe('off');
      }
    });
  }

  it('the real disk buffers took every transition of the machine', () => {
    console.log(coverage.report());
    expect(coverage.uncovered().map(describeTransition), coverage.report()).toEqual([]);
  });
});
