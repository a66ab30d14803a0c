/**
 * What a session's output ring keeps alive beyond its capacity (#47): the bytes reachable through
 * the ring (its chunk list, the slots of dropped chunks included, and its open block), counted by
 * the allocations they hold, after a long stream of an agent's small chunks and after a flood
 * whose chunks are slices of the tmux parser's 64 KiB pools (src/tmux/control/control-codec.ts).
 *
 * Before the fix the dropped chunks stayed in the list's slots until it was compacted (every 1024
 * drops): a 64 KiB ring held 4 MiB, a default 4 MiB ring 64 MiB, of output it no longer covered.
 * That was the live part of the daemon's growth in #47's probe (docs/benchmarks.md "Days without a
 * restart"). In-process, a second or two.
 */
import { ChunkRing } from '../src/stream/ring.js';
import type { Row } from './figures.js';

/** The allocations the ring keeps reachable, bytes (each backing store once). */
function reachable(ring: ChunkRing): number {
  const r = ring as unknown as { chunks: readonly { data: Buffer }[]; open: Buffer | null };
  const seen = new Set<ArrayBufferLike>();
  let bytes = 0;
  const add = (b: Buffer): void => {
    if (seen.has(b.buffer)) return;
    seen.add(b.buffer);
    bytes += b.buffer.byteLength;
  };
  for (const c of r.chunks) add(c.data);
  if (r.open) add(r.open);
  return bytes;
}

/** An agent's output: lines of 40-200 bytes, `total` bytes in all; the most the ring kept reachable. */
function agentStream(capacity: number, total: number): number {
  const ring = new ChunkRing(capacity, 0);
  let worst = 0;
  let seed = 47;
  const line = Buffer.alloc(256, 0x61);
  for (let sent = 0; sent < total;) {
    seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
    const n = 40 + (seed % 160);
    ring.push(line.subarray(0, n));
    sent += n;
    if ((sent & 0xfff) < n) worst = Math.max(worst, reachable(ring));
  }
  return Math.max(worst, reachable(ring));
}

/** A flood: 8 KiB chunks, each a slice of a 64 KiB pool as the parser hands them out. */
function floodStream(capacity: number, total: number): number {
  const ring = new ChunkRing(capacity, 0);
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
    worst = Math.max(worst, reachable(ring));
  }
  return worst;
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
      value: `${kb(agent)} / ${kb(flood)}`,
      baseline: `capacity ${kb(capacity)}; before the fix the slots of dropped chunks kept up to 1024 more blocks (${kb(1024 * Math.min(64 * 1024, capacity / 16))})`,
      ratio: `${(agent / capacity).toFixed(2)}x / ${(flood / capacity).toFixed(2)}x${agent <= bound && flood <= bound ? '' : ' MISSED'}`,
      target: '<= capacity + 64 KiB',
    });
  }
  return rows;
}
