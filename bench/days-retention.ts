/**
 * What a session's output ring keeps alive and how many allocations it makes (#47), after a long
 * stream of an agent's small chunks and after a flood whose chunks are slices of the tmux parser's
 * 64 KiB pools (src/tmux/control/control-codec.ts).
 *
 * First fix: dropped chunks stayed in the list's slots until it was compacted (every 1024 drops):
 * a 64 KiB ring held 4 MiB, a default 4 MiB ring 64 MiB, of output it no longer covered. Second:
 * the ring copied small chunks into blocks of 4 to 64 KiB and kept large ones as they came, an
 * allocation every few KiB of output among the short-lived buffers of the output's path, which
 * left the main malloc arena higher at each session replaced; it now writes round one allocation
 * of its capacity (docs/benchmarks.md "Days without a restart"). In-process, a second or two.
 */
import { ChunkRing } from '../src/stream/ring.js';
import type { Row } from './figures.js';

/** What the ring keeps reachable, bytes, and every allocation it has held (counted by `seen`). */
function reachable(ring: ChunkRing, seen: Set<ArrayBufferLike>): number {
  const memory = ring.memory;
  if (memory === null) return 0;
  seen.add(memory.buffer);
  return memory.buffer.byteLength;
}

interface Kept {
  /** The most bytes the ring kept reachable at once. */
  worst: number;
  /** Allocations the ring held over the stream. */
  allocations: number;
}

/** An agent's output: lines of 40-200 bytes, `total` bytes in all. */
function agentStream(capacity: number, total: number): Kept {
  const ring = new ChunkRing(capacity, 0);
  const seen = new Set<ArrayBufferLike>();
  let worst = 0;
  let seed = 47;
  const line = Buffer.alloc(256, 0x61);
  for (let sent = 0; sent < total;) {
    seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
    const n = 40 + (seed % 160);
    ring.push(line.subarray(0, n));
    sent += n;
    if ((sent & 0xfff) < n) worst = Math.max(worst, reachable(ring, seen));
  }
  return { worst: Math.max(worst, reachable(ring, seen)), allocations: seen.size };
}

/** A flood: 8 KiB chunks, each a slice of a 64 KiB pool as the parser hands them out. */
function floodStream(capacity: number, total: number): Kept {
  const ring = new ChunkRing(capacity, 0);
  const seen = new Set<ArrayBufferLike>();
  let worst = 0;
  let pool = Buffer.allocUnsafeSlow(64 * 1024);
  let used = 0;
  for (let sent = 0; sent < total; sent += 8192) {
    if (pool.length - used < 8192) {
      pool = Buffer.allocUnsafeSlow(64 * 1024);
      used = 0;
    }
    ring.push(pool.subarray(used, used + 8192));
    used += 8192;
    worst = Math.max(worst, reachable(ring, seen));
  }
  return { worst, allocations: seen.size };
}

export function ringRetentionRows(): Row[] {
  const kb = (b: number): string => (b >= 1 << 20 ? `${(b / 2 ** 20).toFixed(1)} MiB` : `${(b / 1024).toFixed(0)} KiB`);
  const rows: Row[] = [];
  for (const capacity of [64 * 1024, 4 * 1024 * 1024]) {
    const agent = agentStream(capacity, 24 * capacity + (80 << 20));
    const flood = floodStream(capacity, 24 * capacity);
    // The ring's capacity, and one block or one parser pool being filled.
    const bound = capacity + 64 * 1024;
    rows.push({
      name: `ring of ${kb(capacity)}: most bytes it keeps reachable, agent lines / a flood`,
      value: `${kb(agent.worst)} / ${kb(flood.worst)}`,
      baseline: `capacity ${kb(capacity)}; before the first fix the slots of dropped chunks kept up to 1024 more blocks (${kb(1024 * Math.min(64 * 1024, capacity / 16))})`,
      ratio: `${(agent.worst / capacity).toFixed(2)}x / ${(flood.worst / capacity).toFixed(2)}x${agent.worst <= bound && flood.worst <= bound ? '' : ' MISSED'}`,
      target: '<= capacity + 64 KiB',
    });
    // Blocks of at most min(64 KiB, capacity / 16), the first 4 KiB: one allocation per block of output.
    const blocksBefore = Math.ceil((24 * capacity + (80 << 20)) / Math.min(64 * 1024, capacity / 16));
    rows.push({
      name: `ring of ${kb(capacity)}: allocations it held over the stream, agent lines / a flood`,
      value: `${agent.allocations} / ${flood.allocations}`,
      baseline: `one per block of output before (about ${blocksBefore} for the agent lines)`,
      ratio: `${agent.allocations === 1 && flood.allocations === 1 ? '' : 'MISSED '}one each`,
      target: '1: one allocation of its capacity, given back whole when the session goes',
    });
  }
  return rows;
}
