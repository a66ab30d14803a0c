/**
 * Load: many sessions (50 on a machine with five or more cores, ten per core below that, so two
 * cores carry 20) with two clients each, output and input mixed, one client of each pair
 * dropping and resuming every few seconds. At the end every resumed client shows exactly what
 * its continuous twin shows (screens compared in a headless terminal) and what tmux shows.
 * `CHAOS_SESSIONS` and `CHAOS_LINES` scale it: 75 lines at five a second make 15 s of churn,
 * some 60 drops and resumes across the sessions. Whether the daemon's memory stays flat over a
 * minute of the same load is measured by `npm run bench` (bench/soak.bench.ts), not checked here.
 */
import { availableParallelism } from 'node:os';
import { beforeAll, describe, expect, it } from 'vitest';
import { warningsOf } from '../helpers/daemon.js';
import { useDaemon } from '../helpers/daemon-fixture.js';
import type { Mirror } from '../helpers/stream.js';
import { eventually } from '../helpers/tmux.js';

// Sized to the machine: each session's shell forks a sleep five times a second, and the daemon
// carries two clients per session beside the rest of the suite.
const SESSIONS = Number(process.env.CHAOS_SESSIONS ?? Math.min(50, 10 * availableParallelism()));
const LINES = Number(process.env.CHAOS_LINES ?? 75);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32;
}

describe(`load: ${SESSIONS} sessions, two clients each`, () => {
  const ids = Array.from({ length: SESSIONS }, (_, i) => `load-${i}`);
  const fx = useDaemon(`[agent]\ncommand = "/bin/sh"\ndefault_session = "load-0"\n`, { sessions: ids.slice(1), setupTimeoutMs: 180_000 });
  const pairs = new Map<string, { steady: Mirror; flaky: Mirror }>();
  const rand = rng(7);

  beforeAll(async () => {
    for (const id of ids) pairs.set(id, { steady: fx.mirror(id), flaky: fx.mirror(id) });
    await eventually(
      () => [...pairs.values()].every((p) => p.steady.kinds().includes('snapshot') && p.flaky.kinds().includes('snapshot')),
      60_000,
      200,
    ).catch((err: Error) => {
      // Say which clients are still waiting and what the daemon said, not just "still false".
      const waiting = [...pairs]
        .filter(([, p]) => !p.steady.kinds().includes('snapshot') || !p.flaky.kinds().includes('snapshot'))
        .map(([id]) => id);
      throw new Error(
        `${err.message}: ${waiting.length} sessions without a snapshot (${waiting.slice(0, 8).join(', ')}); daemon warnings:\n${warningsOf(fx.d)}`,
      );
    });
  }, 180_000);

  it('every resumed client ends equal to its continuous twin and to tmux', async () => {
    const loop = `h=$(hostname); i=0; while [ $i -lt ${LINES} ]; do i=$((i+1)); printf '\\033[3%dm%s line %d\\033[0m\\n' $((i%8)) "$h" $i; sleep 0.2; done; echo load-$((1+1))done\r`;
    for (const p of pairs.values()) p.steady.stream.sendKeys(loop);
    const deadline = Date.now() + LINES * 200 + 5000;
    let round = 0;
    let drops = 0;
    while (Date.now() < deadline) {
      await sleep(500);
      // Every few seconds, a handful of flaky clients drop and come back; some type meanwhile.
      for (const [id, p] of pairs) {
        if (rand() < 0.08) {
          drops++;
          p.flaky.stream.close();
          setTimeout(() => p.flaky.stream.connect(), 50 + rand() * 2000);
        }
        if (round % 10 === 0 && rand() < 0.2) p.flaky.stream.sendKeys(`echo typed-${id}-${round}\r`);
      }
      round++;
    }
    for (const p of pairs.values()) if (p.flaky.stream.status === 'closed') p.flaky.stream.connect();
    // Every loop has printed its last line (the loops run side by side, so one bound covers all).
    const finished = new Set<string>();
    const unfinished = async () => {
      for (const id of ids) if (!finished.has(id) && (await fx.tmux.capture(`=${id}:`)).includes('load-2done')) finished.add(id);
      return ids.filter((id) => !finished.has(id));
    };
    await eventually(async () => (await unfinished()).length === 0, 120_000, 1000).catch(async () => {
      const left = await unfinished();
      const shows = left.length > 0 ? (await fx.tmux.capture(`=${left[0]}:`)).trimEnd().split('\n').slice(-3).join(' | ') : '';
      throw new Error(
        `${left.length} of ${SESSIONS} sessions never printed load-2done within 120 s after the run (${left.slice(0, 8).join(', ')}); ${left[0]} shows: ${shows}`,
      );
    });

    let compared = 0;
    for (const [id, p] of pairs) {
      await eventually(
        async () => {
          const a = p.steady.stream.lastSeq;
          if (a === null || a !== p.flaky.stream.lastSeq) return false;
          await sleep(100);
          return p.steady.stream.lastSeq === a && p.flaky.stream.lastSeq === a;
        },
        30_000,
        100,
      );
      const [a, b] = [await p.steady.screen(), await p.flaky.screen()];
      expect({ id, text: b.text, attrs: b.attrs, cursor: b.cursor }).toEqual({ id, text: a.text, attrs: a.attrs, cursor: a.cursor });
      const captured = (await fx.tmux.tmux('capture-pane', '-p', '-t', `=${id}:`))
        .split('\n')
        .slice(0, 40)
        .map((l) => l.trimEnd());
      expect(a.text.map((l) => l.trimEnd())).toEqual(captured.concat(Array(40).fill('')).slice(0, 40));
      compared++;
    }
    expect(compared).toBe(SESSIONS);
    // The churn happened: clients dropped and resumed throughout the run.
    expect(drops).toBeGreaterThanOrEqual(SESSIONS);
  }, 600_000);
});
