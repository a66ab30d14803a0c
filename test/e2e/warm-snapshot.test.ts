/**
 * Warm snapshots against real tmux: once a pane is quiet, its capture is kept, and a snapshot is
 * that capture plus the ring's bytes after it, without asking tmux. Whatever happened since
 * (more output, the alternate screen, a half-sent escape sequence), the snapshot renders what a
 * client that saw every byte renders and what tmux shows; a capture is never served for a
 * position it does not cover; a resize, a small ring or a long tail sends tmux the question.
 *
 * Warm captures are at most one per WARM_MIN_INTERVAL_MS (5 s): a test that needs the next one
 * moves the system's clock past that interval instead of waiting it out.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SidecarSystem } from '../../src/actors/system.js';
import type { RingChunk } from '../../src/stream/ring.js';
import { WARM_MIN_INTERVAL_MS, WARM_TAIL_MAX_BYTES } from '../../src/stream/warm-snapshots.js';
import { startLivePane, type LivePaneView } from '../helpers/live-pane.js';
import { sendKeysHexCommands } from '../../src/tmux/pane/input.js';
import { expectSameScreen, expectTmuxText, screenOf, type Screen } from '../helpers/screen.js';
import { eventually, privateTmux, type PrivateTmux } from '../helpers/tmux.js';

const E = '\x1b';

/** Lines with colours and wide characters, a prompt with bracketed paste on and a pen left on. */
function workload(tag: string, lines: number): string {
  let s = '';
  for (let i = 0; i < lines; i++) s += `${E}[3${i % 8}m${tag} ${i}${E}[0m ${'y'.repeat(i % 90)} 漢字 ${E}[48;5;${i % 256}m ${E}[0m\r\n`;
  return s + `${E}[?2004h${tag}> ${E}[1;36m`;
}

describe('warm snapshots on real tmux', () => {
  let tmux: PrivateTmux;
  let system: SidecarSystem;
  let rt: LivePaneView;
  /** Every chunk since the first byte: the client that never left. */
  let continuous: RingChunk[];
  let base: Buffer;
  let step = 0;
  /** The system's clock: real time plus what the tests skipped of it (only ever forward). */
  let skippedMs = 0;
  const clock = () => Date.now() + skippedMs;

  /** A session whose pane prints the file named by each key press (raw), `ringKb` of ring. */
  async function start(ringBytes = 8 << 20): Promise<void> {
    const script = `stty raw -echo; while :; do n=$(head -c1); cat ${tmux.dir}/part-$n.bin; done`;
    ({ system, rt } = await startLivePane(tmux, 'warm', script, { ringBytes, now: clock }));
    // The base every comparison starts from: a capture made now, with the chunks after it.
    continuous = [];
    rt.stream.subscribe({ chunk: (c) => continuous.push(c), gap: () => undefined });
    base = (await rt.snapshot()).data;
  }

  /** Makes the pane print `bytes` and waits until the stream holds all of them. */
  async function print(bytes: string | Buffer): Promise<void> {
    step = (step + 1) % 10;
    writeFileSync(join(tmux.dir, `part-${step}.bin`), bytes);
    const before = rt.stream.position;
    await rt.run(sendKeysHexCommands(rt.paneId!, Buffer.from(String(step))));
    await eventually(() => rt.stream.position - before >= Buffer.byteLength(bytes), 15_000, 10, 'the printed bytes in the stream');
  }

  /**
   * Waits until a warm capture covers the current position (the pane was quiet long enough): a
   * new capture, and one of the position now, not one begun before the last bytes came (under
   * load one could end after them, and the pane was captured again once quiet).
   */
  async function warmedAt(): Promise<number> {
    const captures = rt.counts().warmCaptures;
    await eventually(
      () => rt.counts().warmCaptures > captures && rt.warmPosition() === rt.stream.position,
      15_000,
      25,
      'a warm capture of the position now, after the pane went quiet',
    );
    return rt.stream.position;
  }

  /** Starts a pane, prints `lines` of workload `tag`, waits for its warm capture: the position it covers, and the cold count then. */
  async function startWarmed(tag: string, lines: number, ringBytes?: number): Promise<{ at: number; cold: number }> {
    await start(ringBytes);
    // The capture taken when the pane linked was the last: the next may follow the output at once.
    skippedMs += WARM_MIN_INTERVAL_MS;
    await print(workload(tag, lines));
    const at = await warmedAt();
    return { at, cold: rt.counts().cold };
  }

  async function continuousScreen(): Promise<Screen> {
    return screenOf([base, ...continuous.map((c) => c.data)]);
  }

  async function expectExact(snapshot: Buffer): Promise<void> {
    const a = await screenOf([snapshot]);
    expectSameScreen(a, await continuousScreen(), 200);
    expectTmuxText(a, await tmux.tmux('capture-pane', '-p', '-t', '=warm:'));
  }

  beforeEach(async () => {
    tmux = await privateTmux();
  });
  afterEach(async () => {
    await system?.stop();
    await tmux.cleanup();
  });

  it('a quiet pane is captured once; snapshots after it ask tmux nothing and are exact', async () => {
    const { at, cold } = await startWarmed('first', 300);
    const captures = rt.counts().warmCaptures;
    for (let i = 0; i < 5; i++) {
      const snap = await rt.snapshot();
      expect(snap.position).toBe(at);
      await expectExact(snap.data);
    }
    expect(rt.counts().cold).toBe(cold);
    expect(rt.counts().warmServed).toBeGreaterThanOrEqual(5);
    // Quiet and unchanged: no new capture however long it stays so (one more quiet period).
    await new Promise((r) => setTimeout(r, 1200)); // a negative check: nothing may happen
    expect(rt.counts().warmCaptures).toBe(captures);
  });

  it('output after the capture (ending inside an escape sequence, into the alternate screen) is served as the tail, exactly', async () => {
    const { cold } = await startWarmed('before', 200);
    // More output, ending mid-sequence: the snapshot must end where the stream is.
    await print(`${workload('after', 50)}${E}[3`);
    let snap = await rt.snapshot();
    expect(snap.position).toBe(rt.stream.position);
    await print(`2mgreen${E}[0m\r\n`);
    snap = await rt.snapshot();
    expect(snap.position).toBe(rt.stream.position);
    await expectExact(snap.data);
    // Into the alternate screen with a scroll region and mouse mode.
    await print(`${E}[?1049h${E}[H${E}[2J${E}[44m~ alt ${E}[0m${E}[2;39r${E}[?1002h${E}[10;5H`);
    snap = await rt.snapshot();
    expect(snap.position).toBe(rt.stream.position);
    expect((await screenOf([snap.data])).buffer).toBe('alternate');
    await expectExact(snap.data);
    expect(rt.counts().cold).toBe(cold);
  });

  it('a character split between two writes and captured between them: the capture holds its first bytes, the snapshot after the rest is exact', async () => {
    const { cold } = await startWarmed('split', 20);
    skippedMs += WARM_MIN_INTERVAL_MS;
    // "…" is E2 80 A6: the pane writes its first byte and goes quiet (a capture is made there:
    // tmux holds the byte unwritten and gives it in no capture), then writes the rest.
    await print(Buffer.concat([Buffer.from('Thinking'), Buffer.from([0xe2])]));
    await warmedAt();
    await print(Buffer.concat([Buffer.from([0x80, 0xa6]), Buffer.from(' (2s)\r\n')]));
    const snap = await rt.snapshot();
    expect(rt.counts().cold).toBe(cold);
    expect(snap.position).toBe(rt.stream.position);
    await expectExact(snap.data);
    expect((await screenOf([snap.data])).text.some((l) => l.includes('Thinking… (2s)'))).toBe(true);
  });

  it('a resize makes the capture stale: tmux is asked, and the answer is exact', async () => {
    const { cold } = await startWarmed('sized', 100);
    await tmux.tmux('resize-window', '-t', '=warm:', '-x', '100', '-y', '30');
    await eventually(
      async () => (await tmux.tmux('display', '-p', '-t', '=warm:', '#{pane_width}')).trim() === '100',
      15_000,
      25,
      'the pane to be 100 columns wide',
    );
    // The layout change reaches the link as a notification; until then a snapshot could still
    // be warm. Wait for the capture to be dropped: the next snapshot asks tmux.
    await eventually(
      async () => {
        const before = rt.counts().cold;
        const snap = await rt.snapshot();
        return rt.counts().cold > before && snap;
      },
      15_000,
      50,
      'a snapshot that asks tmux after the resize',
    );
    expect(rt.counts().cold).toBeGreaterThan(cold);
    const snap = await rt.snapshot();
    const live = (await tmux.tmux('capture-pane', '-p', '-t', '=warm:')).split('\n').slice(0, 30);
    const shown = await screenOf([snap.data], 100, 30);
    expect(shown.text.map((l) => l.trimEnd())).toEqual(live.map((l) => l.trimEnd()));
  });

  it('is never served for bytes the ring no longer holds, nor past the tail bound', async () => {
    // A ring of 64 KiB: output larger than that since the capture cannot be rebuilt from it.
    let { cold } = await startWarmed('small-ring', 50, 64 * 1024);
    await print(workload('flood', 1200)); // about 150 KB: the ring moved past the capture
    const snap = await rt.snapshot();
    expect(rt.counts().cold).toBe(cold + 1);
    expect(snap.position).toBe(rt.stream.position);
    expectTmuxText(await screenOf([snap.data]), await tmux.tmux('capture-pane', '-p', '-t', '=warm:'));
    await system.stop();
    await tmux.cleanup();

    // A big ring, but more than the tail bound since the capture: tmux is asked.
    tmux = await privateTmux();
    ({ cold } = await startWarmed('bound', 20));
    let printed = 0;
    while (printed <= WARM_TAIL_MAX_BYTES) {
      const text = workload('long-tail', 2000);
      await print(text);
      printed += Buffer.byteLength(text);
    }
    const asked = await rt.snapshot();
    expect(rt.counts().cold).toBe(cold + 1);
    expect(asked.position).toBe(rt.stream.position);
    await expectExact(asked.data);
  }, 60_000);
});
